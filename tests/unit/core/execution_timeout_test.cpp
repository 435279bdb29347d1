// A task type's execution_timeout (doc/lifecycle.md, rule 27): the command
// of a task that runs longer is stopped and the task fails as any other
// failed task does, on the core's own clock.

#include "core/lifecycle.hpp"

#include <gtest/gtest.h>

#include "tests/unit/core/driver.hpp"

using namespace tony;
using namespace tony::testing;

namespace {

const task_id chief0{"chief", 0};
const task_id w0{"worker", 0};
const task_id w1{"worker", 1};
const task_id ps0{"ps", 0};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

/// workers_and_ps() with a chief; the workers run at most `limit_ms`.
job_spec limited_workers(int64_t limit_ms, int32_t max_restarts = 0) {
  auto j = workers_and_ps();
  task_type_spec chief;
  chief.name = "chief";
  chief.capability = {1024, 1, 0};
  chief.priority = 0;
  j.tasks.insert(j.tasks.begin(), chief);
  auto& worker = type_of(j, "worker");
  worker.execution_timeout_ms = limit_ms;
  if (max_restarts > 0) {
    worker.restart = restart_policy::on_failure;
    worker.max_restarts = max_restarts;
  }
  return j;
}

std::vector<task_id> everyone() {
  return {chief0, w0, w1, ps0};
}

TEST(execution_timeout, a_task_running_past_it_is_stopped_and_fails_the_job) {
  driver d{limited_workers(5000)};
  d.run_job();
  auto w0_container = d.task(w0).container_id;
  d.advance(4999, everyone());
  EXPECT_EQ(d.job_state(), "RUNNING");
  EXPECT_TRUE(d.stopped_executors().empty());
  d.advance(1, everyone());
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_EQ(d.state(w0), "FAILED");
  EXPECT_EQ(d.task(w0).exit_code, 143); // as stopped by SIGTERM
  EXPECT_TRUE(contains(d.diagnostics(),
                       "worker:0 ran longer than its execution_timeout of 5s (killed in "
                       "container " +
                           w0_container))
      << d.diagnostics();
  auto stopped = d.stopped_executors();
  EXPECT_NE(std::find(stopped.begin(), stopped.end(), w0_container), stopped.end());
  // Stopped once: the job's end does not stop it again.
  EXPECT_EQ(std::count(stopped.begin(), stopped.end(), w0_container), 1);
}

TEST(execution_timeout, runs_from_the_start_of_the_command_not_of_the_container) {
  driver d{limited_workers(5000)};
  d.start();
  d.grant_all();
  d.advance(3000); // executors starting, localizing, registering
  d.register_all();
  d.advance(4999, everyone());
  EXPECT_EQ(d.job_state(), "RUNNING");
  d.advance(1, everyone());
  EXPECT_EQ(d.job_state(), "FAILED");
}

TEST(execution_timeout, tasks_that_end_in_time_are_not_touched) {
  driver d{limited_workers(5000)};
  d.run_job();
  d.advance(4000, everyone());
  d.exit(w0, 0);
  d.exit(w1, 0);
  d.exit(chief0, 0);
  EXPECT_EQ(d.job_state(), "SUCCEEDED");
  d.advance(10000);
  EXPECT_EQ(d.job_state(), "SUCCEEDED");
  EXPECT_TRUE(d.task(w0).diagnostics.empty());
}

TEST(execution_timeout, no_limit_by_default) {
  driver d{limited_workers(0)};
  d.run_job();
  d.advance(3600 * 1000, everyone());
  EXPECT_EQ(d.job_state(), "RUNNING");
}

TEST(execution_timeout, a_task_that_may_restart_gets_a_new_container_and_a_new_limit) {
  driver d{limited_workers(5000, 1)};
  d.run_job();
  auto old = d.task(w1).container_id;
  d.advance(5000, {chief0, ps0});
  EXPECT_EQ(d.job_state(), "RUNNING");
  EXPECT_EQ(d.state(w1), "REQUESTED");
  EXPECT_EQ(d.task(w1).restarts, 1);
  EXPECT_TRUE(contains(d.task(w1).diagnostics,
                       "restart 1 of 1 after: worker:1 ran longer than its "
                       "execution_timeout of 5s"))
      << d.task(w1).diagnostics;
  auto stopped = d.stopped_executors();
  EXPECT_EQ(std::count(stopped.begin(), stopped.end(), old), 1);
  d.grant_all();
  d.advance(1000, {chief0, ps0});
  d.register_task(w0);
  d.register_task(w1);
  EXPECT_EQ(d.state(w1), "RUNNING");
  d.advance(4999, everyone());
  EXPECT_EQ(d.state(w1), "RUNNING");
  d.advance(1, everyone());
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_TRUE(contains(d.diagnostics(), "failed after 1 restart (max_restarts = 1): "
                                        "worker:"))
      << d.diagnostics();
  EXPECT_TRUE(contains(d.diagnostics(), "ran longer than its execution_timeout of 5s"));
}

TEST(execution_timeout, the_limit_of_an_earlier_run_does_not_cut_a_restarted_one_short) {
  driver d{limited_workers(5000, 2)};
  d.run_job();
  d.advance(3000, everyone());
  d.exit(w1, 3); // fails on its own at 3 s
  d.grant_all();
  d.register_task(w1); // runs again from 3 s
  d.advance(1999, everyone());
  d.exit(w0, 0); // worker:0 ends in time
  d.advance(1, everyone());
  EXPECT_EQ(d.state(w1), "RUNNING"); // 5 s: the first run's limit is gone
  EXPECT_EQ(d.task(w1).restarts, 1);
  d.advance(2999, everyone());
  EXPECT_EQ(d.state(w1), "RUNNING");
  d.advance(1, everyone());
  EXPECT_EQ(d.task(w1).restarts, 2);
  EXPECT_EQ(d.state(w1), "REQUESTED");
}

TEST(execution_timeout, a_tolerated_task_past_it_is_stopped_and_the_job_goes_on) {
  auto j = limited_workers(5000);
  type_of(j, "worker").tolerated_failures = 2;
  driver d{j};
  d.run_job();
  auto w0_container = d.task(w0).container_id;
  d.advance(5000, everyone());
  EXPECT_EQ(d.job_state(), "RUNNING");
  EXPECT_EQ(d.state(w0), "FAILED");
  EXPECT_EQ(d.state(w1), "FAILED");
  auto stopped = d.stopped_executors();
  EXPECT_EQ(std::count(stopped.begin(), stopped.end(), w0_container), 1);
  d.exit(w0, 143, "", 15); // the stopped command's report changes nothing
  EXPECT_EQ(d.state(w0), "FAILED");
  d.exit(chief0, 0);
  EXPECT_EQ(d.job_state(), "SUCCEEDED");
}

TEST(execution_timeout, an_adopted_task_keeps_the_time_it_ran_under_the_am_before) {
  auto job = limited_workers(8000);
  job.am.max_app_attempts = 2;
  driver first{job};
  first.run_job();
  auto saved = first.lc.status();
  driver d{job, 2, saved};
  d.now = first.now + 5000; // the next AM starts 5 s into the run
  for (auto& t : saved.tasks) {
    container c;
    c.id = t.container_id;
    c.host = "node-" + t.task.type;
    d.rm.previous_containers.push_back(c);
  }
  d.start();
  for (auto& t : saved.tasks) {
    executor_hello hello;
    hello.task = t.task;
    hello.attempt = d.lc.attempt();
    hello.container_id = t.container_id;
    hello.host = "host-" + t.task.type;
    hello.resumed = true;
    d.send(core::registered{hello});
  }
  d.advance(2999, everyone());
  EXPECT_EQ(d.job_state(), "RUNNING");
  d.advance(1, everyone());
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_TRUE(contains(d.diagnostics(), "ran longer than its execution_timeout of 8s"))
      << d.diagnostics();
}

} // namespace
