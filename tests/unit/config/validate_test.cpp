// The job model's range checker (config/validate.hpp): every rule accepts
// its edges and refuses one past them with its message; the relations; the
// heartbeat check period; job.toml and job.json refuse with the same bounds.

#include "config/validate.hpp"

#include <string>

#include <gtest/gtest.h>

#include "config/job_config.hpp"
#include "config/job_json.hpp"
#include "messages/error.hpp"

using namespace tony;

namespace {

job_spec valid_job() {
  job_spec s;
  s.name = "j";
  task_type_spec w;
  w.name = "worker";
  // elastic_min stays harmless while elastic_max is 0 (a fixed world) and
  // lets elastic_max reach its edges without breaking the elastic relation.
  w.elastic_min = 1;
  s.tasks.push_back(w);
  return s;
}

std::string between(const std::string& path, bounds b, int64_t got) {
  return "'" + path + "' must be between " + std::to_string(b.lo) + " and " +
         std::to_string(b.hi) + ", got " + std::to_string(got);
}

// True when `problem` is about `path` (other rules may object to an edge
// of this one, e.g. the heartbeat interval at its maximum).
bool names(const std::string& problem, const std::string& path) {
  return problem.rfind("'" + path + "'", 0) == 0;
}

// Every path is a directory: the jobs below name none but their own.
class directories final : public file_probe {
public:
  kind kind_of(const std::string&) const override { return kind::directory; }
  int read_error(const std::string&) const override { return 0; }
};

} // namespace

TEST(validate, a_default_job_keeps_every_rule) {
  EXPECT_EQ(check_job_spec(valid_job()), "");
}

TEST(validate, every_task_rule_accepts_its_edges_and_refuses_past_them) {
  ASSERT_FALSE(task_rules().empty());
  for (auto& r : task_rules()) {
    SCOPED_TRACE(r.path);
    auto path = std::string{"tasks[0]."} + r.path;
    for (auto edge : {r.range.lo, r.range.hi}) {
      auto s = valid_job();
      r.set(s.tasks[0], edge);
      EXPECT_EQ(r.get(s.tasks[0]), edge);
      EXPECT_FALSE(names(check_job_spec(s), path)) << check_job_spec(s);
    }
    for (auto past : {r.range.lo - 1, r.range.hi + 1}) {
      auto s = valid_job();
      r.set(s.tasks[0], past);
      EXPECT_EQ(check_job_spec(s), between(path, r.range, past));
    }
  }
}

TEST(validate, every_job_rule_accepts_its_edges_and_refuses_past_them) {
  ASSERT_FALSE(job_rules().empty());
  for (auto& r : job_rules()) {
    SCOPED_TRACE(r.path);
    auto base = valid_job();
    auto b = r.bounds_for(base);
    for (auto edge : {b.lo, b.hi}) {
      auto s = valid_job();
      r.set(s, edge);
      EXPECT_EQ(r.get(s), edge);
      EXPECT_FALSE(names(check_job_spec(s), r.path)) << check_job_spec(s);
    }
    for (auto past : {b.lo - 1, b.hi + 1}) {
      auto s = valid_job();
      r.set(s, past);
      EXPECT_EQ(check_job_spec(s), between(r.path, b, past));
    }
  }
}

TEST(validate, the_rules_hold_the_bounds_of_the_job_model) {
  auto task_range = [](const std::string& path) {
    for (auto& r : task_rules())
      if (path == r.path)
        return r.range;
    ADD_FAILURE() << "no task rule " << path;
    return bounds{};
  };
  auto job_range = [](const std::string& path) {
    for (auto& r : job_rules())
      if (path == r.path)
        return r.bounds_for(valid_job());
    ADD_FAILURE() << "no job rule " << path;
    return bounds{};
  };
  EXPECT_EQ(task_range("instances").hi, 10000);
  EXPECT_EQ(task_range("capability.memory_mb").hi, 1048576);
  EXPECT_EQ(task_range("capability.vcores").hi, 1024);
  EXPECT_EQ(task_range("capability.gpus").hi, 64);
  EXPECT_EQ(task_range("tolerated_failures").lo, -1);
  EXPECT_EQ(job_range("policy.max_attempts").hi, 100);
  EXPECT_EQ(job_range("am.max_app_attempts").hi, 10);
  EXPECT_EQ(job_range("policy.heartbeat_interval_ms").lo, 1);
  EXPECT_EQ(job_range("policy.stop_grace_ms").lo, 0);
  EXPECT_EQ(job_range("cluster.local.gpus").lo, -1);
}

TEST(validate, the_heartbeat_timeout_must_outlast_the_interval) {
  auto s = valid_job();
  s.policy.heartbeat_interval_ms = 2000;
  s.policy.heartbeat_timeout_ms = 2000;
  EXPECT_FALSE(heartbeat_timeout_ok(s.policy));
  EXPECT_EQ(check_job_spec(s),
            between("policy.heartbeat_timeout_ms", {2001, max_duration_ms}, 2000));
  s.policy.heartbeat_timeout_ms = 2001;
  EXPECT_TRUE(heartbeat_timeout_ok(s.policy));
  EXPECT_EQ(check_job_spec(s), "");
}

TEST(validate, an_elastic_world_holds_its_instances) {
  auto s = valid_job();
  auto& w = s.tasks[0];
  w.elastic_min = 2;
  w.elastic_max = 4;
  w.instances = 2;
  EXPECT_EQ(check_job_spec(s), "");
  w.instances = 4;
  EXPECT_EQ(check_job_spec(s), "");
  w.instances = 5;
  EXPECT_EQ(check_job_spec(s),
            "'tasks[0]' is elastic from 2 to 4 nodes but has 5 instances");
  w.instances = 1;
  EXPECT_EQ(check_job_spec(s),
            "'tasks[0]' is elastic from 2 to 4 nodes but has 1 instances");
}

TEST(validate, the_heartbeat_check_period_is_a_tenth_within_100ms_and_1s) {
  struct row {
    int64_t timeout_ms;
    int64_t period_ms;
  };
  for (auto [timeout, period] :
       {row{1, 100}, row{999, 100}, row{1000, 100}, row{1010, 101}, row{5000, 500},
        row{10000, 1000}, row{10010, 1000}, row{max_duration_ms, 1000}}) {
    policy_spec p;
    p.heartbeat_timeout_ms = timeout;
    EXPECT_EQ(heartbeat_check_period_ms(p), period) << timeout;
  }
}

// The front ends refuse with the rules' bounds, each in its own words.
TEST(validate, job_toml_and_job_json_refuse_with_the_same_bounds) {
  auto toml = load_job_text("[tasks.worker]\ninstances = 10001\ncommand = \"x\"\n",
                            "job.toml", "/", {}, directories{});
  ASSERT_FALSE(toml);
  ASSERT_EQ(toml.error().size(), 1u);
  EXPECT_EQ(toml.error()[0].to_string(),
            "job.toml:2:13: 'instances' must be between 1 and 10000, got 10001");
  auto json = job_from_json(R"({"version":1,"tasks":[{"name":"w","instances":10001}]})");
  ASSERT_FALSE(json);
  EXPECT_EQ(describe(json.error()),
            "job spec JSON: 'tasks[0].instances' must be between 1 and 10000, got 10001");
  auto toml2 = load_job_text(
      "[policy]\nheartbeat_interval = 5\nheartbeat_timeout = 5\n[tasks.worker]\n"
      "command = \"x\"\n",
      "job.toml", "/", {}, directories{});
  ASSERT_FALSE(toml2);
  ASSERT_EQ(toml2.error().size(), 1u);
  EXPECT_EQ(toml2.error()[0].to_string(),
            "job.toml:3:21: 'heartbeat_timeout' (5s) must be longer than "
            "'heartbeat_interval' (5s)");
  auto s = valid_job();
  s.tasks[0].command = "x";
  s.policy.heartbeat_interval_ms = 5000;
  s.policy.heartbeat_timeout_ms = 5000;
  auto json2 = job_from_json(to_json(s));
  ASSERT_FALSE(json2);
  EXPECT_EQ(describe(json2.error()),
            "job spec JSON: 'policy.heartbeat_timeout_ms' must be between 5001 and " +
                std::to_string(max_duration_ms) + ", got 5000");
}
