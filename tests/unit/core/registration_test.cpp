// Registration deadlines count from the containers running (doc/lifecycle.md,
// rule 9): a container its NodeManager is still localizing (a large
// environment on a cold node) does not use up [policy] registration_timeout;
// a container that runs and whose executor does not register does.

#include "core/lifecycle.hpp"

#include <gtest/gtest.h>

#include "tests/unit/core/driver.hpp"

using namespace tony;
using namespace tony::testing;

namespace {

const task_id w0{"worker", 0};
const task_id w1{"worker", 1};
const task_id ps0{"ps", 0};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

/// workers_and_ps() with a 5 s registration timeout; containers run when the
/// test says so.
job_spec five_seconds(int32_t max_restarts = 0) {
  auto j = workers_and_ps();
  j.policy.registration_timeout_ms = 5000;
  if (max_restarts > 0) {
    auto& worker = type_of(j, "worker");
    worker.restart = restart_policy::on_failure;
    worker.max_restarts = max_restarts;
    worker.restart_backoff_ms = 0;
  }
  return j;
}

driver localizing(job_spec j) {
  driver d{std::move(j)};
  d.run_at_launch = false;
  return d;
}

/// The job runs; worker:1 fails once and gets a new container, which is
/// not running yet.
void restart_worker1(driver& d) {
  d.start();
  d.grant_all();
  for (auto t : {w0, w1, ps0})
    d.run_container(t);
  d.register_all();
  d.exit(w1, 3);
  d.grant(1, 1);
}

TEST(registration, a_container_slow_to_localize_does_not_hit_the_deadline) {
  auto d = localizing(five_seconds());
  d.start();
  d.grant_all();
  d.run_container(w0);
  d.run_container(ps0);
  d.advance(60000); // worker:1's NodeManager localizes a large environment
  EXPECT_EQ(d.job_state(), "REGISTERING");
  EXPECT_EQ(d.state(w1), "LAUNCHED");
  d.run_container(w1);
  d.advance(4000);
  d.register_all();
  EXPECT_EQ(d.job_state(), "RUNNING");
  d.advance(10000, {w0, w1, ps0});
  EXPECT_EQ(d.job_state(), "RUNNING") << d.diagnostics();
}

TEST(registration, containers_running_without_registering_hit_the_deadline) {
  auto d = localizing(five_seconds());
  d.start();
  d.grant_all();
  d.run_container(w0);
  d.run_container(w1);
  d.advance(30000);
  d.run_container(ps0); // every container runs from here
  d.register_task(w0);
  d.advance(4999, {w0});
  EXPECT_EQ(d.job_state(), "REGISTERING");
  d.advance(1, {w0});
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_TRUE(contains(d.diagnostics(),
                       "registration timeout: 5 s after their containers were running, "
                       "these tasks had not registered: worker:1, ps:0"))
      << d.diagnostics();
}

TEST(registration, a_registered_executor_counts_as_its_container_running) {
  // An executor may register before the AM next hears from its NodeManager.
  auto d = localizing(five_seconds());
  d.start();
  d.grant_all();
  d.register_task(w0);
  d.run_container(w1);
  d.advance(20000, {w0});
  EXPECT_EQ(d.job_state(), "REGISTERING"); // ps:0 still localizes
  d.run_container(ps0);
  d.advance(5000, {w0});
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_TRUE(contains(d.diagnostics(), "had not registered: worker:1, ps:0"))
      << d.diagnostics();
}

TEST(registration, a_restarted_task_localizing_its_new_container_is_not_failed) {
  auto d = localizing(five_seconds(1));
  restart_worker1(d);
  EXPECT_EQ(d.state(w1), "LAUNCHED");
  d.advance(60000, {w0, ps0});
  EXPECT_EQ(d.state(w1), "LAUNCHED");
  EXPECT_EQ(d.job_state(), "RUNNING");
  d.run_container(w1);
  d.advance(4000, {w0, ps0});
  d.register_task(w1);
  EXPECT_EQ(d.state(w1), "RUNNING");
  d.advance(10000, {w0, w1, ps0});
  EXPECT_EQ(d.job_state(), "RUNNING") << d.diagnostics();
}

TEST(registration, a_restarted_task_running_without_registering_fails) {
  auto d = localizing(five_seconds(1));
  restart_worker1(d);
  d.advance(30000, {w0, ps0});
  d.run_container(w1);
  d.advance(4999, {w0, ps0});
  EXPECT_EQ(d.job_state(), "RUNNING");
  d.advance(1, {w0, ps0});
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_TRUE(contains(d.diagnostics(),
                       "worker:1 did not register within 5 s after its restarted "
                       "container was running"))
      << d.diagnostics();
}

TEST(registration, a_running_report_for_an_old_container_is_ignored) {
  auto d = localizing(five_seconds(1));
  d.start();
  d.grant_all();
  auto first = d.task(w1).container_id;
  for (auto t : {w0, w1, ps0})
    d.run_container(t);
  d.register_all();
  d.exit(w1, 3);
  d.grant(1, 1);
  d.send(core::container_running{first}); // a late report of the first container
  d.advance(60000, {w0, ps0});
  EXPECT_EQ(d.job_state(), "RUNNING") << d.diagnostics();
  EXPECT_EQ(d.state(w1), "LAUNCHED");
}

} // namespace
