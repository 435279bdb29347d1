#include "config/job_json.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "messages/error.hpp"

using namespace tony;

namespace {

job_spec sample() {
  job_spec s;
  s.name = "mnist";
  s.framework = "pytorch";
  s.queue = "ml";
  s.timeout_ms = 5400000;
  s.tags = {"a", "b"};
  s.src_dir = "/home/u/src";
  s.command = "python3 train.py";
  s.python_venv = "/home/u/venv.zip";
  s.env = {{"A", "1"}, {"B", "x y"}};
  s.input_path = "hdfs:///in";
  s.output_path = "hdfs:///out";
  task_type_spec w;
  w.name = "worker";
  w.instances = 4;
  w.capability = {4096, 2, 1};
  w.command = "python3 train.py --worker";
  w.node_label = "gpu";
  w.env = {{"ROLE", "w"}};
  w.priority = 1;
  task_type_spec ps;
  ps.name = "ps";
  ps.instances = 2;
  ps.tracked = false;
  ps.priority = 2;
  task_type_spec tb;
  tb.name = "tensorboard";
  tb.tracked = false;
  tb.sidecar = true;
  tb.priority = 3;
  s.tasks = {w, ps, tb};
  s.tensorboard = {true, "hdfs:///logs"};
  s.cluster.backend = "yarn";
  s.cluster.hadoop_conf = "/etc/hadoop/conf";
  s.cluster.install_dir = "/opt/tony";
  s.cluster.staging_dir = "hdfs:///tmp";
  s.cluster.jobs_dir = "/home/u/.tony/jobs";
  s.cluster.local = {16384, 8, 2};
  s.am.capability = {1024, 2, 0};
  s.am.max_app_attempts = 2;
  s.am.reconnect_timeout_ms = 45000;
  s.policy = {3, 1, 2, 3, 4, 5};
  s.job_file = "/home/u/job.toml";
  return s;
}

void expect_same(const job_spec& x, const job_spec& y) {
  EXPECT_EQ(x.name, y.name);
  EXPECT_EQ(x.framework, y.framework);
  EXPECT_EQ(x.queue, y.queue);
  EXPECT_EQ(x.timeout_ms, y.timeout_ms);
  EXPECT_EQ(x.tags, y.tags);
  EXPECT_EQ(x.src_dir, y.src_dir);
  EXPECT_EQ(x.command, y.command);
  EXPECT_EQ(x.python_venv, y.python_venv);
  EXPECT_EQ(x.env, y.env);
  EXPECT_EQ(x.input_path, y.input_path);
  EXPECT_EQ(x.output_path, y.output_path);
  ASSERT_EQ(x.tasks.size(), y.tasks.size());
  for (size_t i = 0; i < x.tasks.size(); ++i) {
    auto& a = x.tasks[i];
    auto& b = y.tasks[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.instances, b.instances);
    EXPECT_EQ(a.capability, b.capability);
    EXPECT_EQ(a.command, b.command);
    EXPECT_EQ(a.tracked, b.tracked);
    EXPECT_EQ(a.sidecar, b.sidecar);
    EXPECT_EQ(a.node_label, b.node_label);
    EXPECT_EQ(a.env, b.env);
    EXPECT_EQ(a.priority, b.priority);
  }
  EXPECT_EQ(x.tensorboard.enabled, y.tensorboard.enabled);
  EXPECT_EQ(x.tensorboard.log_dir, y.tensorboard.log_dir);
  EXPECT_EQ(x.cluster.backend, y.cluster.backend);
  EXPECT_EQ(x.cluster.hadoop_conf, y.cluster.hadoop_conf);
  EXPECT_EQ(x.cluster.install_dir, y.cluster.install_dir);
  EXPECT_EQ(x.cluster.staging_dir, y.cluster.staging_dir);
  EXPECT_EQ(x.cluster.jobs_dir, y.cluster.jobs_dir);
  EXPECT_EQ(x.cluster.local.memory_mb, y.cluster.local.memory_mb);
  EXPECT_EQ(x.cluster.local.vcores, y.cluster.local.vcores);
  EXPECT_EQ(x.cluster.local.gpus, y.cluster.local.gpus);
  EXPECT_EQ(x.am.capability, y.am.capability);
  EXPECT_EQ(x.am.max_app_attempts, y.am.max_app_attempts);
  EXPECT_EQ(x.am.reconnect_timeout_ms, y.am.reconnect_timeout_ms);
  EXPECT_EQ(x.policy.max_attempts, y.policy.max_attempts);
  EXPECT_EQ(x.policy.allocation_timeout_ms, y.policy.allocation_timeout_ms);
  EXPECT_EQ(x.policy.registration_timeout_ms, y.policy.registration_timeout_ms);
  EXPECT_EQ(x.policy.heartbeat_interval_ms, y.policy.heartbeat_interval_ms);
  EXPECT_EQ(x.policy.heartbeat_timeout_ms, y.policy.heartbeat_timeout_ms);
  EXPECT_EQ(x.policy.stop_grace_ms, y.policy.stop_grace_ms);
  EXPECT_EQ(x.job_file, y.job_file);
}

std::string error_of(const std::string& text) {
  auto r = job_from_json(text);
  EXPECT_FALSE(r) << "parsed";
  return r ? "" : describe(r.error());
}

} // namespace

TEST(job_json, round_trip_keeps_every_field) {
  auto spec = sample();
  auto back = job_from_json(to_json(spec));
  ASSERT_TRUE(back) << describe(back.error());
  expect_same(*back, spec);
}

TEST(job_json, pretty_output_round_trips_too) {
  auto spec = sample();
  auto text = to_json(spec, 2);
  EXPECT_NE(text.find('\n'), std::string::npos);
  auto back = job_from_json(text);
  ASSERT_TRUE(back) << describe(back.error());
  expect_same(*back, spec);
}

TEST(job_json, document_carries_its_version_and_plain_names) {
  auto doc = nlohmann::json::parse(to_json(sample()));
  EXPECT_EQ(doc["version"], job_json_version);
  EXPECT_EQ(doc["tasks"][0]["name"], "worker");
  EXPECT_EQ(doc["tasks"][0]["capability"]["memory_mb"], 4096);
  EXPECT_EQ(doc["policy"]["heartbeat_timeout_ms"], 4);
  EXPECT_EQ(doc["policy"]["stop_grace_ms"], 5);
}

TEST(job_json, missing_fields_take_defaults) {
  auto r = job_from_json(R"({"version":1,"tasks":[{"name":"worker"}]})");
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(r->framework, "tensorflow");
  EXPECT_EQ(r->tasks[0].instances, 1);
  EXPECT_EQ(r->tasks[0].capability, (resource{2048, 1, 0}));
  EXPECT_EQ(r->policy.heartbeat_interval_ms, 1000);
}

TEST(job_json, unknown_fields_are_ignored) {
  auto r = job_from_json(R"({"version":1,"future":true,"tasks":[{"name":"w","x":1}]})");
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(r->tasks[0].name, "w");
}

TEST(job_json, corrupt_json_is_a_clear_error) {
  auto msg = error_of("{\"version\":1,");
  EXPECT_EQ(msg.rfind("job spec JSON: not valid JSON: ", 0), 0u) << msg;
  EXPECT_EQ(error_of(""), error_of("")) << "deterministic";
  EXPECT_EQ(error_of(std::string("\0\xff", 2)).rfind("job spec JSON: not valid JSON", 0),
            0u);
}

TEST(job_json, wrong_shapes_name_the_field) {
  EXPECT_EQ(error_of("[]"), "job spec JSON: the document must be an object");
  EXPECT_EQ(error_of(R"({"tasks":[]})"),
            "job spec JSON: 'version' is missing; is this a tony job spec?");
  EXPECT_EQ(
      error_of(R"({"version":2,"tasks":[]})"),
      "job spec JSON: version 2 is not supported (this tony reads up to 1); use the "
      "same tony release to submit and run");
  EXPECT_EQ(error_of(R"({"version":1,"tasks":[{"name":"w","instances":"2"}]})"),
            "job spec JSON: 'tasks[0].instances' must be an integer");
  EXPECT_EQ(
      error_of(R"({"version":1,"tasks":[{"name":"w","instances":0}]})"),
      "job spec JSON: 'tasks[0].instances' must be between 1 and 2147483647, got 0");
  EXPECT_EQ(error_of(R"({"version":1,"tasks":{}})"),
            "job spec JSON: 'tasks' must be an array");
  EXPECT_EQ(error_of(R"({"version":1,"env":{"A":1},"tasks":[{"name":"w"}]})"),
            "job spec JSON: 'env.A' must be a string");
  EXPECT_EQ(
      error_of(R"({"version":1,"policy":{"stop_grace_ms":-1},"tasks":[{"name":"w"}]})"),
      "job spec JSON: 'policy.stop_grace_ms' must be between 0 and "
      "9223372036854775807, got -1");
  EXPECT_EQ(error_of(R"({"version":1,"tasks":[{"instances":1}]})"),
            "job spec JSON: 'tasks[0].name' must not be empty");
  EXPECT_EQ(
      error_of(R"({"version":1})"),
      "job spec JSON: 'tasks' is missing or empty; a job has at least one task type");
}

TEST(job_json, error_is_invalid_config) {
  auto r = job_from_json("nope");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), errc::invalid_config);
}

TEST(job_json, lifecycle_policy_round_trips) {
  auto spec = sample();
  auto& w = spec.tasks[0];
  w.restart = restart_policy::on_failure;
  w.max_restarts = 2;
  w.restart_backoff_ms = 5000;
  w.tolerated_failures = 1;
  w.elastic_min = 2;
  w.elastic_max = 4;
  w.spec_signal = 10;
  w.pack = true;
  w.max_per_node = 3;
  w.execution_timeout_ms = 7000;
  spec.setting_names = {{"tasks.worker.memory", "-m/--task_memory"}};
  spec.policy.tolerated_failures = 3;
  auto back = job_from_json(to_json(spec));
  ASSERT_TRUE(back) << describe(back.error());
  auto& b = back->tasks[0];
  EXPECT_EQ(b.restart, restart_policy::on_failure);
  EXPECT_EQ(b.max_restarts, 2);
  EXPECT_EQ(b.restart_backoff_ms, 5000);
  EXPECT_EQ(b.tolerated_failures, 1);
  EXPECT_EQ(b.elastic_min, 2);
  EXPECT_EQ(b.elastic_max, 4);
  EXPECT_EQ(b.spec_signal, 10);
  EXPECT_TRUE(b.pack);
  EXPECT_EQ(b.max_per_node, 3);
  EXPECT_FALSE(back->tasks[1].pack);
  EXPECT_EQ(b.execution_timeout_ms, 7000);
  EXPECT_EQ(back->tasks[1].execution_timeout_ms, 0);
  EXPECT_EQ(back->setting_names, spec.setting_names);
  EXPECT_EQ(back->policy.tolerated_failures, 3);
  EXPECT_EQ(back->tasks[1].restart, restart_policy::never);
}

TEST(job_json, values_are_checked_with_the_bounds_of_job_toml) {
  EXPECT_EQ(error_of(R"({"version":1,"tasks":[{"name":"w","instances":20000}]})"),
            "job spec JSON: 'tasks[0].instances' must be between 1 and 10000, got 20000");
  EXPECT_EQ(
      error_of(R"({"version":1,"tasks":[{"name":"w","capability":{"memory_mb":0}}]})"),
      "job spec JSON: 'tasks[0].capability.memory_mb' must be between 1 and 1048576, "
      "got 0");
  EXPECT_EQ(
      error_of(R"({"version":1,"policy":{"max_attempts":101},"tasks":[{"name":"w"}]})"),
      "job spec JSON: 'policy.max_attempts' must be between 1 and 100, got 101");
  EXPECT_EQ(error_of(R"({"version":1,"tasks":[{"name":"w","restart":"sometimes"}]})"),
            "job spec JSON: 'tasks[0].restart' must be \"never\" or \"on-failure\"");
  EXPECT_EQ(
      error_of(
          R"({"version":1,"tasks":[{"name":"w","instances":5,"elastic_min":2,"elastic_max":4}]})"),
      "job spec JSON: 'tasks[0]' is elastic from 2 to 4 nodes but has 5 instances");
}
