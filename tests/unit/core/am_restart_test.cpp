// A later AM attempt takes the job over (doc/lifecycle.md, rule 26): the
// first AM's lifecycle runs the job and its status is what the AM saved;
// the second lifecycle gets it with the containers the RM kept, and adopts
// the running tasks, starts over, or reports the outcome the first had
// decided. One ctest entry per test.

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

// The containers of `saved`'s tasks that still run, as the RM reports them.
std::vector<container> kept(const job_status& saved, std::vector<task_id> tasks) {
  std::vector<container> result;
  for (auto& t : saved.tasks)
    for (auto& id : tasks)
      if (t.task == id) {
        container c;
        c.id = t.container_id;
        c.host = "node-" + t.task.type;
        c.port = 8041;
        result.push_back(c);
      }
  return result;
}

// The first AM ran the job to RUNNING (and whatever `before` does); its
// saved status.
job_status first_am(const job_spec& job,
                    const std::function<void(driver&)>& before = nullptr) {
  driver d{job};
  d.run_job();
  if (before)
    before(d);
  return d.lc.status();
}

// The second AM attempt with `saved` and the RM's `previous` containers.
struct second_am {
  second_am(const job_spec& job, std::optional<job_status> saved,
            std::vector<container> previous, int64_t later_ms = 5000)
      : d(job, 2, std::move(saved)) {
    d.now += later_ms;
    d.rm.previous_containers = std::move(previous);
    d.start();
  }

  // The executor of `t` registers again from `container_id`.
  core::commands& come_back(const task_id& t, const std::string& container_id) {
    executor_hello hello;
    hello.task = t;
    hello.attempt = d.lc.attempt();
    hello.container_id = container_id;
    hello.host = "host-" + t.type;
    hello.port = 2000 + t.index;
    hello.resumed = true;
    return d.send(core::registered{hello});
  }

  driver d;
};

TEST(am_restart, the_running_tasks_are_adopted_and_the_training_goes_on) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  auto saved = first_am(job);
  second_am am{job, saved, kept(saved, {w0, w1, ps0})};
  auto& d = am.d;
  EXPECT_EQ(d.job_state(), "RUNNING");
  EXPECT_EQ(d.lc.attempt(), 1); // the same attempt: nothing restarted
  EXPECT_TRUE(d.ever<core::ask_containers>().empty());
  EXPECT_TRUE(d.ever<core::launch>().empty());
  EXPECT_TRUE(d.ever<core::release_containers>().empty());
  EXPECT_TRUE(d.ever<core::expect_tasks>().empty()); // no new barrier
  ASSERT_EQ(d.ever<core::resume_tasks>().size(), 1u);
  auto resume = d.ever<core::resume_tasks>()[0];
  EXPECT_EQ(resume.attempt, 1);
  EXPECT_EQ(resume.tasks.size(), 3u);
  EXPECT_EQ(resume.adopted.size(), 3u);
  auto recovery = d.lc.status().recovery;
  EXPECT_TRUE(contains(recovery, "AM attempt 2 adopted 3 running tasks of attempt 1"))
      << recovery;
  // Their addresses and start times are the first AM's.
  EXPECT_EQ(d.task(w1).port, saved.tasks[1].port);
  EXPECT_EQ(d.task(w1).started_ms, saved.tasks[1].started_ms);
  for (auto& t : saved.tasks)
    am.come_back(t.task, t.container_id);
  EXPECT_EQ(d.ever<core::watch_executor>().size(), 3u);
  d.exit(w0, 0);
  d.exit(w1, 0);
  EXPECT_EQ(d.job_state(), "SUCCEEDED");
  // The ps is stopped through its (adopted) executor.
  ASSERT_EQ(d.of<core::stop_executor>().size(), 1u);
  EXPECT_EQ(d.of<core::stop_executor>()[0].container_id, d.task(ps0).container_id);
}

TEST(am_restart, a_task_that_succeeded_before_the_am_died_stays_succeeded) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  auto saved = first_am(job, [](driver& d) { d.exit(w0, 0); });
  ASSERT_EQ(saved.tasks[0].state, "SUCCEEDED");
  second_am am{job, saved, kept(saved, {w1, ps0})};
  auto& d = am.d;
  EXPECT_EQ(d.state(w0), "SUCCEEDED");
  EXPECT_EQ(d.ever<core::resume_tasks>()[0].adopted.size(), 2u);
  am.come_back(w1, saved.tasks[1].container_id);
  am.come_back(ps0, saved.tasks[2].container_id);
  d.exit(w1, 0);
  EXPECT_EQ(d.job_state(), "SUCCEEDED");
}

TEST(am_restart, an_exit_held_while_no_am_ran_is_counted_when_its_executor_is_back) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  auto saved = first_am(job);
  second_am am{job, saved, kept(saved, {w0, w1, ps0})};
  auto& d = am.d;
  am.come_back(w0, saved.tasks[0].container_id);
  d.exit(w0, 3, "failed while no AM ran\n"); // reported right after
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_TRUE(contains(d.diagnostics(), "worker:0 exited with code 3"))
      << d.diagnostics();
}

TEST(am_restart, a_container_that_ended_while_no_am_ran_is_a_lost_task) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  auto saved = first_am(job);
  // worker:1's container is gone; the RM still reports a stray one.
  auto previous = kept(saved, {w0, ps0});
  container stray;
  stray.id = "container_99";
  stray.host = "node-x";
  previous.push_back(stray);
  second_am am{job, saved, previous};
  auto& d = am.d;
  EXPECT_EQ(d.state(w1), "LOST");
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_TRUE(contains(d.diagnostics(), "worker:1 lost while the ApplicationMaster "
                                        "restarted: its container"))
      << d.diagnostics();
  EXPECT_TRUE(contains(d.diagnostics(), "ended while no ApplicationMaster ran"));
  std::vector<std::string> released;
  for (auto& r : d.ever<core::release_containers>())
    released.insert(released.end(), r.container_ids.begin(), r.container_ids.end());
  EXPECT_EQ(released, std::vector<std::string>{"container_99"});
}

TEST(am_restart, a_lost_task_with_attempts_left_starts_the_next_attempt) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  job.policy.max_attempts = 2;
  auto saved = first_am(job);
  second_am am{job, saved, kept(saved, {w0, ps0})};
  auto& d = am.d;
  EXPECT_EQ(d.lc.attempt(), 2);
  EXPECT_EQ(d.job_state(), "ALLOCATING");
  EXPECT_FALSE(d.ever<core::ask_containers>().empty());
  // The adopted containers of attempt 1 are stopped with it.
  std::vector<std::string> discarded;
  for (auto& x : d.ever<core::discard_containers>())
    for (auto& c : x.containers)
      discarded.push_back(c.id);
  EXPECT_EQ(discarded.size(), 2u);
}

TEST(am_restart, an_adopted_executor_that_does_not_come_back_is_lost_after_the_wait) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  job.policy.registration_timeout_ms = 30000;
  auto saved = first_am(job);
  second_am am{job, saved, kept(saved, {w0, w1, ps0})};
  auto& d = am.d;
  am.come_back(w0, saved.tasks[0].container_id);
  am.come_back(ps0, saved.tasks[2].container_id);
  d.advance(29000, {w0, ps0});
  EXPECT_EQ(d.job_state(), "RUNNING");
  d.advance(1500, {w0, ps0});
  EXPECT_EQ(d.state(w1), "LOST");
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_TRUE(contains(d.diagnostics(),
                       "worker:1 lost: its executor did not register with the new "
                       "ApplicationMaster within 30 s"))
      << d.diagnostics();
  // A late comeback is told to stop.
  am.come_back(w1, saved.tasks[1].container_id);
  ASSERT_EQ(d.of<core::stop_executor>().size(), 1u);
}

TEST(am_restart, every_adopted_executor_back_ends_the_wait) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  job.policy.registration_timeout_ms = 30000;
  auto saved = first_am(job);
  second_am am{job, saved, kept(saved, {w0, w1, ps0})};
  auto& d = am.d;
  for (size_t i = 0; i < 3; ++i)
    am.come_back(saved.tasks[i].task, saved.tasks[i].container_id);
  d.advance(60000, {w0, w1, ps0});
  EXPECT_EQ(d.job_state(), "RUNNING");
  // Adopted executors are supervised like any: silent ones are lost.
  d.advance(11000, {w0, ps0});
  EXPECT_EQ(d.state(w1), "LOST");
}

TEST(am_restart, a_resumed_registration_of_a_container_not_adopted_is_stopped) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  auto saved = first_am(job);
  second_am am{job, saved, kept(saved, {w0, w1, ps0})};
  am.come_back(w0, "container_1234");
  ASSERT_EQ(am.d.of<core::stop_executor>().size(), 1u);
  EXPECT_EQ(am.d.of<core::stop_executor>()[0].container_id, "container_1234");
  EXPECT_TRUE(am.d.of<core::watch_executor>().empty());
}

TEST(am_restart, a_job_not_yet_running_starts_over_in_a_new_attempt) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  driver first{job};
  first.start();
  first.grant(1, 2); // the workers' containers; the ps not yet
  auto saved = first.lc.status();
  ASSERT_EQ(saved.state, "ALLOCATING");
  second_am am{job, saved, kept(saved, {w0, w1})};
  auto& d = am.d;
  EXPECT_EQ(d.lc.attempt(), 2); // the first attempt's executors are stale
  EXPECT_EQ(d.job_state(), "ALLOCATING");
  ASSERT_EQ(d.ever<core::release_containers>().size(), 1u);
  EXPECT_EQ(d.ever<core::release_containers>()[0].container_ids.size(), 2u);
  EXPECT_EQ(d.ever<core::expect_tasks>().size(), 1u);
  EXPECT_TRUE(d.ever<core::resume_tasks>().empty());
  auto recovery = d.lc.status().recovery;
  EXPECT_TRUE(contains(recovery, "AM attempt 2 started the job over: the "
                                 "ApplicationMaster before it died with the job "
                                 "ALLOCATING"))
      << recovery;
}

TEST(am_restart, containers_kept_without_a_saved_state_are_released_and_the_job_starts) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  auto saved = first_am(job);
  second_am am{job, std::nullopt, kept(saved, {w0, w1, ps0})};
  auto& d = am.d;
  EXPECT_EQ(d.ever<core::release_containers>().at(0).container_ids.size(), 3u);
  EXPECT_FALSE(d.ever<core::ask_containers>().empty());
  EXPECT_TRUE(contains(d.lc.status().recovery, "saved no state of the job"));
}

TEST(am_restart, an_outcome_decided_before_the_am_died_is_reported) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  auto saved = first_am(job, [](driver& d) {
    d.exit(w0, 0);
    d.exit(w1, 0);
  });
  ASSERT_EQ(saved.state, "SUCCEEDED");
  second_am am{job, saved, kept(saved, {ps0})};
  auto& d = am.d;
  EXPECT_EQ(d.job_state(), "SUCCEEDED");
  EXPECT_EQ(d.state(w0), "SUCCEEDED");
  EXPECT_EQ(d.ever<core::release_containers>().at(0).container_ids.size(), 1u);
  ASSERT_EQ(d.ever<core::unregister>().size(), 1u);
  EXPECT_EQ(d.ever<core::unregister>()[0].report.final_status, "SUCCEEDED");
  EXPECT_TRUE(d.ever<core::ask_containers>().empty());
}

TEST(am_restart, the_jobs_timeout_runs_from_its_first_start) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  job.timeout_ms = 100000;
  auto saved = first_am(job);
  second_am am{job, saved, kept(saved, {w0, w1, ps0}), 60000};
  auto& d = am.d;
  for (size_t i = 0; i < 3; ++i)
    am.come_back(saved.tasks[i].task, saved.tasks[i].container_id);
  d.advance(39000, {w0, w1, ps0});
  EXPECT_EQ(d.job_state(), "RUNNING");
  d.advance(2000, {w0, w1, ps0});
  EXPECT_EQ(d.job_state(), "KILLED");
}

TEST(am_restart, a_restart_in_flight_is_asked_again) {
  auto job = workers_and_ps();
  job.am.max_app_attempts = 2;
  type_of(job, "ps").restart = restart_policy::on_failure;
  type_of(job, "ps").max_restarts = 2;
  type_of(job, "ps").restart_backoff_ms = 60000;
  auto saved = first_am(job, [](driver& d) { d.exit(ps0, 1, "ps died\n"); });
  ASSERT_EQ(saved.tasks[2].state, "RESTARTING");
  second_am am{job, saved, kept(saved, {w0, w1})};
  auto& d = am.d;
  EXPECT_EQ(d.job_state(), "RUNNING");
  EXPECT_EQ(d.state(ps0), "REQUESTED");
  EXPECT_EQ(d.task(ps0).restarts, 1);
  ASSERT_EQ(d.ever<core::ask_containers>().size(), 1u);
  EXPECT_EQ(d.ever<core::ask_containers>()[0].ask.task_type, "ps");
  EXPECT_EQ(d.ever<core::reopen_task>().size(), 1u);
}

} // namespace
