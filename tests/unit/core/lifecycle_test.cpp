// The lifecycle core's rules (doc/lifecycle.md), one table row each: a job,
// a script of events, and what the core must have answered. Each row is
// its own ctest entry ("core_rules/lifecycle.rule/<name>").

#include "core/lifecycle.hpp"

#include <functional>

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

template <class Xs, class X>
bool has(const Xs& xs, const X& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

/// The host of the container `t` was launched in last.
// What runtime/yarn makes of a NodeManager whose clock is an hour ahead.
constexpr const char* clock_refusal =
    "127.0.0.3:45454: starting container c failed: node 127.0.0.3's clock is about 1 h 0 "
    "min (3600 s) ahead of the ResourceManager's: its NodeManager takes every container "
    "token for expired and starts no container (YARN: This token is expired. current "
    "time is 1700003600000 found 1700000600000); keep the nodes' clocks in step (NTP)";

// Grants every container the job asks for; all launch but `t`'s, which
// fails with `why`. Returns `t`'s container.
container grant_failing_one(driver& d, const task_id& t, const std::string& why) {
  std::vector<container> cs;
  int n = 0;
  for (auto& ts : d.lc.status().tasks) {
    container c;
    c.id = "container_clock_" + std::to_string(++n);
    c.host = "node" + std::to_string(n);
    c.priority = d.job.find(ts.task.type)->priority;
    cs.push_back(c);
  }
  d.send(core::granted{cs});
  container failing;
  for (auto& l : d.of<core::launch>())
    if (l.task == t)
      failing = l.target;
  for (auto& l : d.of<core::launch>())
    if (l.task != t) {
      d.send(core::launched{l.target.id});
      d.send(core::container_running{l.target.id});
    }
  d.send(core::launch_failed{failing.id, why});
  return failing;
}

std::string launched_on(const driver& d, const task_id& t) {
  std::string host;
  for (auto& l : d.ever<core::launch>())
    if (l.task == t)
      host = l.target.host;
  return host;
}

/// The index of the first command of type T in `cs` (cs.size() if none).
template <class T>
size_t first_index(const core::commands& cs) {
  for (size_t i = 0; i < cs.size(); ++i)
    if (std::holds_alternative<T>(cs[i]))
      return i;
  return cs.size();
}

struct rule {
  const char* name;
  std::function<void(job_spec&)> job; // changes to workers_and_ps(), or nothing
  std::function<void(driver&)> check; // the script and its expectations
};

std::ostream& operator<<(std::ostream& os, const rule& r) {
  return os << r.name;
}

class lifecycle : public ::testing::TestWithParam<rule> {};

TEST_P(lifecycle, rule) {
  auto job = workers_and_ps();
  if (GetParam().job)
    GetParam().job(job);
  driver d{job};
  GetParam().check(d);
}

std::string param_name(const ::testing::TestParamInfo<rule>& info) {
  return info.param.name;
}

// -- the rules the lifecycle monitor had ----------------------------------------------

const rule old_rules[] = {
    {"tracked_tasks_succeed_so_the_job_succeeds_and_the_ps_is_stopped", nullptr,
     [](driver& d) {
       d.run_job();
       EXPECT_EQ(d.job_state(), "RUNNING");
       d.exit(w0, 0);
       EXPECT_EQ(d.job_state(), "RUNNING");
       d.exit(w1, 0);
       EXPECT_EQ(d.job_state(), "SUCCEEDED");
       ASSERT_EQ(d.of<core::stop_executor>().size(), 1u);
       EXPECT_EQ(d.of<core::stop_executor>()[0].container_id, d.task(ps0).container_id);
       d.exit(ps0, 143, "", 15);
       EXPECT_EQ(d.state(ps0), "KILLED");
       ASSERT_EQ(d.of<core::stop_containers>().size(), 1u);
       d.send(core::containers_stopped{});
       ASSERT_EQ(d.of<core::unregister>().size(), 1u);
       EXPECT_EQ(d.of<core::unregister>()[0].report.final_status, "SUCCEEDED");
       d.send(core::unregistered{});
       EXPECT_EQ(d.of<core::job_done>().size(), 1u);
       EXPECT_TRUE(d.lc.done());
       d.advance(30000);
       EXPECT_EQ(d.ever<core::unregister>().size(), 1u);
     }},
    {"a_failing_worker_fails_the_job_at_once_and_stops_the_others", nullptr,
     [](driver& d) {
       d.run_job();
       d.exit(w1, 3, "loading\nValueError: bad shape\n");
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "worker:1 exited with code 3"));
       EXPECT_TRUE(contains(d.diagnostics(), "ValueError: bad shape"));
       auto stops = d.of<core::stop_executor>();
       ASSERT_EQ(stops.size(), 2u);
       EXPECT_EQ(d.of<core::cancel_asks>().size(), 1u);
       EXPECT_TRUE(d.of<core::stop_containers>().empty()); // executors report first
       d.exit(w0, 143, "", 15);
       d.exit(ps0, 143, "", 15);
       ASSERT_EQ(d.of<core::stop_containers>().size(), 1u);
       EXPECT_EQ(d.of<core::stop_containers>()[0].containers.size(), 3u);
     }},
    {"a_ps_failing_before_the_end_fails_the_job", nullptr,
     [](driver& d) {
       d.run_job();
       d.exit(ps0, 1, "ps crashed\n");
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "ps:0 exited with code 1"));
     }},
    {"a_sidecar_failure_is_reported_and_ignored",
     [](job_spec& j) {
       task_type_spec tb;
       tb.name = "tensorboard";
       tb.tracked = false;
       tb.sidecar = true;
       tb.priority = 3;
       j.tasks.push_back(tb);
     },
     [](driver& d) {
       d.run_job();
       d.exit({"tensorboard", 0}, 1, "port in use\n");
       EXPECT_EQ(d.job_state(), "RUNNING");
       EXPECT_EQ(d.state({"tensorboard", 0}), "FAILED");
       d.exit(w0, 0);
       d.exit(w1, 0);
       EXPECT_EQ(d.job_state(), "SUCCEEDED");
     }},
    {"a_lost_executor_is_a_lost_task_and_fails_the_job", nullptr,
     [](driver& d) {
       d.run_job();
       d.send(core::executor_lost{d.task(w0).container_id, "connection reset"});
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_EQ(d.state(w0), "LOST");
       EXPECT_TRUE(
           contains(d.diagnostics(), "worker:0 lost: its executor's connection dropped"));
     }},
    {"an_executor_silent_for_the_heartbeat_timeout_is_lost", nullptr,
     [](driver& d) {
       d.run_job();
       d.advance(2000, {w0, w1, ps0});
       d.advance(9000, {w1, ps0}); // worker:0 falls silent
       EXPECT_EQ(d.job_state(), "RUNNING");
       d.advance(1500, {w1, ps0});
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_EQ(d.state(w0), "LOST");
       EXPECT_TRUE(contains(d.diagnostics(), "no heartbeat from its executor for 10 s"));
     }},
    {"yarn_exit_statuses_are_named_in_plain_words", nullptr,
     [](driver& d) {
       for (auto [status, words] : {std::pair{-100, "the node running it was lost"},
                                    std::pair{-101, "disks of its node failed"},
                                    std::pair{-102, "preempted by the scheduler"},
                                    std::pair{-103, "virtual memory limit"},
                                    std::pair{-104, "ask for more memory"},
                                    std::pair{-105, "killed by the ApplicationMaster"},
                                    std::pair{-106, "killed by the ResourceManager"},
                                    std::pair{3, "exited with status 3"}})
         EXPECT_TRUE(contains(core::lifecycle::describe_container_exit(status), words))
             << status;
       d.run_job();
       d.complete(w0, -100, "Container released on a *lost* node");
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_EQ(d.state(w0), "LOST"); // statuses <= -100 are losses
       EXPECT_TRUE(contains(d.diagnostics(), "worker:0 failed: its container was lost"));
       EXPECT_TRUE(contains(d.diagnostics(), "*lost* node"));
     }},
    {"a_failed_job_waits_for_the_reason_yarn_gives_for_a_signalled_task", nullptr,
     [](driver& d) {
       // The NodeManager kills worker:1's container over its memory limit:
       // the executor reports the signal first, the RM the reason later.
       d.run_job();
       d.exit(w1, 143, "", 15);
       EXPECT_EQ(d.job_state(), "FAILED");
       d.exit(w0, 143, "", 15);
       d.exit(ps0, 143, "", 15);
       ASSERT_EQ(d.of<core::stop_containers>().size(), 1u);
       d.send(core::containers_stopped{});
       EXPECT_TRUE(d.of<core::unregister>().empty()); // it waits for the reason
       d.complete(w1, -104,
                  "Container [pid=42] is running 400M beyond the 'PHYSICAL' memory "
                  "limit.\nDump of the process-tree");
       ASSERT_EQ(d.of<core::unregister>().size(), 1u);
       auto diag = d.of<core::unregister>()[0].report.diagnostics;
       EXPECT_TRUE(contains(diag, "worker:1 was killed by signal 15 (Terminated): its "
                                  "container was killed for exceeding its memory "
                                  "limit (exit status -104)"))
           << diag;
       EXPECT_TRUE(contains(diag, "beyond the 'PHYSICAL' memory limit"));
       EXPECT_FALSE(contains(diag, "Dump of the process-tree"));
       EXPECT_TRUE(contains(d.task(w1).diagnostics, "exceeding its memory limit"));
       EXPECT_EQ(d.task(w1).exit_code, -104);
     }},
    {"a_failed_job_waits_for_the_reason_of_a_task_whose_executor_vanished", nullptr,
     [](driver& d) {
       // The NodeManager's SIGKILL can beat the executor's report.
       d.run_job();
       d.send(core::executor_lost{d.task(w1).container_id, "connection reset"});
       EXPECT_EQ(d.job_state(), "FAILED");
       d.exit(w0, 143, "", 15);
       d.exit(ps0, 143, "", 15);
       d.send(core::containers_stopped{});
       EXPECT_TRUE(d.of<core::unregister>().empty());
       d.complete(w1, -104, "Container [pid=42] is running beyond");
       ASSERT_EQ(d.of<core::unregister>().size(), 1u);
       auto diag = d.of<core::unregister>()[0].report.diagnostics;
       EXPECT_TRUE(contains(diag, "worker:1 lost: its executor's connection dropped"));
       EXPECT_TRUE(contains(diag, "its container was killed for exceeding its memory "
                                  "limit (exit status -104)"))
           << diag;
     }},
    {"the_ams_own_stop_adds_no_reason_and_a_missing_reason_waits_boundedly", nullptr,
     [](driver& d) {
       d.run_job();
       d.exit(w1, 137, "", 9); // a kill -9 by hand
       d.exit(w0, 143, "", 15);
       d.exit(ps0, 143, "", 15);
       d.send(core::containers_stopped{});
       d.complete(w1, -105, "Container killed by the ApplicationMaster.");
       ASSERT_EQ(d.of<core::unregister>().size(), 1u);
       EXPECT_TRUE(contains(d.of<core::unregister>()[0].report.diagnostics,
                            "killed by signal 9"));
       EXPECT_FALSE(contains(d.of<core::unregister>()[0].report.diagnostics, "-105"));
       driver silent;
       silent.run_job();
       silent.exit(w1, 143, "", 15);
       silent.exit(w0, 143, "", 15);
       silent.exit(ps0, 143, "", 15);
       silent.send(core::containers_stopped{});
       silent.advance(2900);
       EXPECT_TRUE(silent.ever<core::unregister>().empty());
       silent.advance(200);
       ASSERT_EQ(silent.ever<core::unregister>().size(), 1u);
       EXPECT_EQ(silent.ever<core::unregister>()[0].report.final_status, "FAILED");
     }},
    {"a_succeeded_job_does_not_wait_for_reasons", nullptr,
     [](driver& d) {
       d.run_job();
       d.exit(w0, 0);
       d.exit(w1, 0);
       d.exit(ps0, 143, "", 15); // stopped by the AM
       d.send(core::containers_stopped{});
       EXPECT_EQ(d.of<core::unregister>().size(), 1u);
     }},
    {"the_job_runs_only_when_the_barrier_releases", nullptr,
     [](driver& d) {
       d.start();
       d.grant_all();
       for (auto t : {w0, w1, ps0})
         d.register_task(t);
       EXPECT_EQ(d.job_state(), "REGISTERING");
       EXPECT_EQ(d.state(w0), "REGISTERED");
       d.send(core::barrier_released{1});
       EXPECT_EQ(d.job_state(), "RUNNING");
       EXPECT_EQ(d.state(w0), "RUNNING");
       EXPECT_GT(d.task(w0).started_ms, 0);
     }},
    {"the_registration_timeout_fails_the_job_naming_the_missing_tasks", nullptr,
     [](driver& d) {
       d.start();
       d.grant_all();
       d.register_task(w0);
       d.advance(119000, {w0});
       EXPECT_EQ(d.job_state(), "REGISTERING");
       d.advance(2000, {w0});
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "registration timeout"));
       EXPECT_TRUE(contains(d.diagnostics(), "worker:1, ps:0"));
     }},
    {"a_container_ending_before_its_executor_registered_fails_its_task", nullptr,
     [](driver& d) {
       d.start();
       d.grant_all();
       d.register_task(w0);
       d.complete(w1, 3, "Exception from container-launch.");
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(),
                            "worker:1 failed: its container exited with status 3"));
     }},
    {"an_executor_that_cannot_start_is_reported_with_its_error_files", nullptr,
     [](driver& d) {
       // What a Hadoop 3 NodeManager reports of a container whose executor
       // could not load its libraries (exit 127).
       d.start();
       d.grant_all();
       d.register_task(w0);
       // (Hadoop 3.4.2 reports the tail twice.)
       const std::string loader_error =
           "./tony/bin/tony-executor: error while loading shared libraries: "
           "libcaf_io.so.0.17.6: cannot open shared object file: No such file or "
           "directory\n";
       d.complete(
           w1, 127,
           "[2024-01-01 00:00:00.000]Exception from container-launch.\nContainer id: "
           "c2\nExit code: 127\nException message: Launch container failed\n"
           "Error file: prelaunch.err.\nLast 4096 bytes of prelaunch.err :\n" +
               loader_error +
               "\n[2024-01-01 00:00:00.000]Container exited with a non-zero exit "
               "code 127. Error file: prelaunch.err.\nLast 4096 bytes of "
               "prelaunch.err :\n" +
               loader_error + "\n");
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(),
                            "worker:1 failed: its container exited with "
                            "status 127 before its executor registered"));
       EXPECT_TRUE(
           contains(d.diagnostics(),
                    "\n--- last lines of prelaunch.err ---\n./tony/bin/tony-executor: "
                    "error while loading shared libraries: libcaf_io.so.0.17.6"));
       EXPECT_FALSE(contains(d.diagnostics(), "Exception from container-launch"));
       EXPECT_FALSE(contains(d.diagnostics(), "Container exited with"));
       auto first = d.diagnostics().find("--- last lines");
       EXPECT_EQ(d.diagnostics().find("--- last lines", first + 1), std::string::npos)
           << d.diagnostics();
       // Both error files, the second named by the stderr pattern; empty
       // ones say nothing.
       driver e;
       e.start();
       e.grant_all();
       e.complete(w0, 2,
                  "Container exited with a non-zero exit code 2. Error file: "
                  "prelaunch.err.\nLast 4096 bytes of prelaunch.err :\n\nError files: "
                  "stderr, executor.stderr.\nLast 4096 bytes of executor.stderr :\n"
                  "line 1\nline 2\ntony-executor: TONY_AM_ADDRESS is not set\n");
       EXPECT_FALSE(contains(e.diagnostics(), "--- last lines of prelaunch.err"))
           << e.diagnostics();
       EXPECT_TRUE(contains(e.diagnostics(),
                            "\n--- last lines of executor.stderr ---\nline "
                            "1\nline 2\ntony-executor: TONY_AM_ADDRESS"));
       EXPECT_FALSE(contains(e.diagnostics(), "Error files:"));
     }},
    {"the_allocation_timeout_fails_naming_what_is_missing_and_cancels",
     [](job_spec& j) { j.policy.allocation_timeout_ms = 120000; },
     [](driver& d) {
       d.start();
       d.grant(1, 1);
       d.advance(120000);
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "allocation timeout: after 120 s"));
       EXPECT_TRUE(
           contains(d.diagnostics(), "missing: worker:1 (1024 MiB, 1 vcores), ps:0"));
       EXPECT_FALSE(d.ever<core::cancel_asks>().empty());
       auto stops = d.ever<core::stop_containers>();
       ASSERT_EQ(stops.size(), 1u);
       EXPECT_EQ(stops[0].containers.size(), 1u); // the one granted
     }},
    {"a_task_larger_than_the_largest_container_fails_at_once",
     [](job_spec& j) {
       j.tasks[0].capability = {65536, 1, 0};
     },
     [](driver& d) {
       d.start();
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(),
                            "each worker task asks for 65536 MiB, 1 vcores, but"));
       EXPECT_TRUE(contains(d.diagnostics(),
                            "; lower tasks.worker.memory or use a larger "
                            "queue/cluster"))
           << d.diagnostics();
       EXPECT_TRUE(d.ever<core::ask_containers>().empty());
       EXPECT_EQ(d.ever<core::unregister>().size(), 1u);
     }},
    {"a_job_larger_than_the_cluster_fails_at_once", nullptr,
     [](driver& d) {
       d.rm.cluster_capacity = {2048, 8, 0};
       d.start();
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(
           contains(d.diagnostics(),
                    "it can never be scheduled: lower tasks.worker.memory or "
                    "tasks.worker.instances or tasks.ps.memory or tasks.ps.instances"))
           << d.diagnostics();
       EXPECT_TRUE(d.ever<core::ask_containers>().empty());
     }},
    {"the_whole_job_timeout_kills_the_job", [](job_spec& j) { j.timeout_ms = 60000; },
     [](driver& d) {
       d.run_job();
       d.advance(59000, {w0, w1, ps0});
       EXPECT_EQ(d.job_state(), "RUNNING");
       d.advance(1500, {w0, w1, ps0});
       EXPECT_EQ(d.job_state(), "KILLED");
       EXPECT_TRUE(contains(d.diagnostics(), "ran past its timeout of 60 s"));
     }},
    {"a_kill_stops_everything", nullptr,
     [](driver& d) {
       d.run_job();
       d.send(core::kill_job{"killed by the user"});
       EXPECT_EQ(d.job_state(), "KILLED");
       EXPECT_EQ(d.of<core::stop_executor>().size(), 3u);
       EXPECT_EQ(d.diagnostics(), "killed by the user");
       d.send(core::kill_job{"again"}); // nothing changes twice
       EXPECT_EQ(d.diagnostics(), "killed by the user");
     }},
    {"executors_that_do_not_stop_are_killed_after_the_grace", nullptr,
     [](driver& d) {
       d.run_job();
       d.send(core::kill_job{""});
       EXPECT_EQ(d.diagnostics(), "killed on request");
       d.advance(3000);
       EXPECT_TRUE(d.ever<core::stop_containers>().empty());
       d.advance(600);
       EXPECT_EQ(d.ever<core::stop_containers>().size(), 1u);
       EXPECT_TRUE(contains(d.task(w0).diagnostics, "did not stop within the grace"));
     }},
    {"messages_of_an_earlier_attempt_change_nothing",
     [](job_spec& j) { j.policy.max_attempts = 2; },
     [](driver& d) {
       d.run_job();
       auto old_w1 = d.task(w1).container_id;
       d.exit(w0, 1, "boom\n");
       EXPECT_EQ(d.lc.attempt(), 2);
       d.send(core::exited{task_exit{w1, 1, 1, 0, "", old_w1}});
       d.send(core::completed{{container_completion{old_w1, -105, ""}}});
       EXPECT_NE(d.job_state(), "FAILED");
       EXPECT_EQ(d.state(w1), "REQUESTED");
     }},
    {"a_failed_attempt_restarts_every_task_and_the_job_fails_after_the_last",
     [](job_spec& j) { j.policy.max_attempts = 2; },
     [](driver& d) {
       d.run_job();
       d.exit(w0, 1, "boom\n");
       EXPECT_EQ(d.lc.attempt(), 2);
       EXPECT_EQ(d.job_state(), "ALLOCATING");
       EXPECT_EQ(d.of<core::stop_executor>().size(), 2u);
       ASSERT_EQ(d.of<core::discard_containers>().size(), 1u);
       EXPECT_EQ(d.of<core::discard_containers>()[0].containers.size(), 3u);
       ASSERT_EQ(d.of<core::expect_tasks>().size(), 1u);
       EXPECT_EQ(d.of<core::expect_tasks>()[0].attempt, 2);
       ASSERT_EQ(d.of<core::publish_status>().size(), 1u);
       EXPECT_EQ(d.of<core::publish_status>()[0].status.attempt, 1);
       d.grant_all();
       d.register_all();
       d.exit(w1, 2, "boom again\n");
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "attempt 2 of 2 failed"));
     }},
    {"an_excess_container_is_released_and_never_launched", nullptr,
     [](driver& d) {
       d.start();
       d.grant(1, 3);
       EXPECT_EQ(d.ever<core::launch>().size(), 2u);
       auto releases = d.ever<core::release_containers>();
       ASSERT_EQ(releases.size(), 1u);
       EXPECT_EQ(releases[0].container_ids.size(), 1u);
     }},
    {"a_resource_manager_failure_fails_the_job", nullptr,
     [](driver& d) {
       d.run_job();
       d.send(core::rm_failed{"the resource manager did not answer allocate for 30 s"});
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "did not answer allocate"));
     }},
    {"asks_carry_the_placement_and_every_attempt_expects_its_tasks", nullptr,
     [](driver& d) {
       d.start();
       auto asks = d.ever<core::ask_containers>();
       ASSERT_EQ(asks.size(), 2u);
       EXPECT_EQ(asks[0].ask.task_type, "worker");
       EXPECT_EQ(asks[0].ask.count, 2);
       EXPECT_EQ(asks[1].ask.priority, 2);
       auto expect = d.ever<core::expect_tasks>();
       ASSERT_EQ(expect.size(), 1u);
       EXPECT_EQ(expect[0].tasks, (std::vector<task_id>{w0, w1, ps0}));
     }},
    {"a_gang_waits_without_a_deadline_by_default_and_says_why", nullptr,
     [](driver& d) {
       d.start();
       EXPECT_TRUE(contains(d.diagnostics(), "waiting for 3 of 3 containers"))
           << d.diagnostics();
       EXPECT_TRUE(contains(d.diagnostics(), "has not answered the asks yet"));
       d.send(core::cluster_seen{{512, 4, 0}, 3});
       d.grant(1, 1);
       d.advance(3600000);
       EXPECT_EQ(d.job_state(), "ALLOCATING");
       EXPECT_TRUE(contains(d.diagnostics(), "waiting for 2 of 3 containers (1 worker of "
                                             "1024 MiB, 1 vcores; 1 ps of"))
           << d.diagnostics();
       EXPECT_TRUE(contains(d.diagnostics(), "the queue's headroom is 512 MiB, 4 vcores, "
                                             "less than one worker container"))
           << d.diagnostics();
       d.send(core::cluster_seen{{8192, 8, 0}, 0});
       EXPECT_TRUE(contains(d.diagnostics(), "no running NodeManager"))
           << d.diagnostics();
       d.grant_all();
       EXPECT_FALSE(contains(d.diagnostics(), "waiting for")) << d.diagnostics();
     }},
    {"zero_timeouts_arm_no_deadline",
     [](job_spec& j) {
       j.policy.allocation_timeout_ms = 0;
       j.policy.registration_timeout_ms = 0;
     },
     [](driver& d) {
       d.start();
       d.grant(1, 1);
       d.advance(600000);
       EXPECT_EQ(d.job_state(), "ALLOCATING");
       EXPECT_TRUE(d.pending_delays().empty());
     }},
};

INSTANTIATE_TEST_SUITE_P(old_rules, lifecycle, ::testing::ValuesIn(old_rules),
                         param_name);

// -- restarts, tolerated failures, elastic worlds
// ----------------------------------------------

void restart_workers(job_spec& j, int32_t max_restarts = 2, int64_t backoff = 0) {
  auto& worker = type_of(j, "worker");
  worker.restart = restart_policy::on_failure;
  worker.max_restarts = max_restarts;
  worker.restart_backoff_ms = backoff;
}

job_spec with_chief(job_spec j) {
  task_type_spec chief;
  chief.name = "chief";
  chief.capability = {1024, 1, 0};
  chief.priority = 0;
  j.tasks.insert(j.tasks.begin(), chief);
  return j;
}

const rule new_rules[] = {
    {"a_failed_worker_is_restarted_in_a_new_container_while_the_others_run",
     [](job_spec& j) { restart_workers(j); },
     [](driver& d) {
       d.run_job();
       auto old = d.task(w1).container_id;
       d.exit(w1, 3, "flaky\n");
       EXPECT_EQ(d.job_state(), "RUNNING");
       EXPECT_EQ(d.state(w1), "REQUESTED");
       EXPECT_EQ(d.task(w1).restarts, 1);
       EXPECT_TRUE(contains(d.task(w1).diagnostics, "restart 1 of 2 after: worker:1"));
       ASSERT_EQ(d.of<core::reopen_task>().size(), 1u);
       EXPECT_EQ(d.of<core::reopen_task>()[0].task, w1);
       ASSERT_EQ(d.of<core::ask_containers>().size(), 1u);
       EXPECT_EQ(d.of<core::ask_containers>()[0].ask.count, 1);
       EXPECT_EQ(d.of<core::ask_containers>()[0].ask.priority, 1);
       EXPECT_TRUE(d.of<core::stop_executor>().empty()); // its executor is gone
       ASSERT_EQ(d.of<core::discard_containers>().size(), 1u);
       EXPECT_EQ(d.of<core::discard_containers>()[0].containers[0].id, old);
       d.grant(1, 1);
       ASSERT_EQ(d.ever<core::launch>().back().restart, 1);
       EXPECT_NE(d.task(w1).container_id, old);
       d.register_task(w1);
       EXPECT_EQ(d.state(w1), "RUNNING"); // the registry gives it the spec at once
       EXPECT_EQ(d.state(w0), "RUNNING");
       d.exit(w0, 0);
       d.exit(w1, 0);
       EXPECT_EQ(d.job_state(), "SUCCEEDED");
       EXPECT_EQ(d.lc.attempt(), 1);
     }},
    {"a_restart_waits_its_backoff_which_doubles",
     [](job_spec& j) { restart_workers(j, 3, 1000); },
     [](driver& d) {
       d.run_job();
       d.exit(w1, 3);
       EXPECT_EQ(d.state(w1), "RESTARTING");
       EXPECT_TRUE(d.of<core::ask_containers>().empty());
       d.advance(999, {w0, ps0});
       EXPECT_EQ(d.state(w1), "RESTARTING");
       d.advance(1, {w0, ps0});
       EXPECT_EQ(d.state(w1), "REQUESTED");
       d.grant(1, 1);
       d.register_task(w1);
       d.exit(w1, 3);
       d.advance(1999, {w0, ps0});
       EXPECT_EQ(d.state(w1), "RESTARTING");
       d.advance(1, {w0, ps0});
       EXPECT_EQ(d.state(w1), "REQUESTED");
     }},
    {"restarts_exhausted_fail_the_job_with_a_diagnostic_counting_them",
     [](job_spec& j) { restart_workers(j, 2); },
     [](driver& d) {
       d.run_job();
       for (int run = 0; run < 2; ++run) {
         d.exit(w1, 3);
         d.grant(1, 1);
         d.register_task(w1);
       }
       d.exit(w1, 3, "still broken\n");
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(),
                            "worker:1 failed after 2 restarts (max_restarts = 2): "
                            "worker:1 exited with code 3"));
     }},
    {"the_chief_is_never_restarted",
     [](job_spec& j) {
       j = with_chief(j);
       type_of(j, "chief").restart = restart_policy::on_failure;
       type_of(j, "chief").max_restarts = 3;
       type_of(j, "chief").restart_backoff_ms = 0;
     },
     [](driver& d) {
       d.run_job();
       d.exit({"chief", 0}, 3);
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "chief:0 is the chief, which is never"));
       EXPECT_TRUE(d.of<core::reopen_task>().empty());
     }},
    {"worker_0_is_the_chief_without_a_chief_type",
     [](job_spec& j) { restart_workers(j); },
     [](driver& d) {
       d.run_job();
       d.exit(w0, 3);
       EXPECT_EQ(d.job_state(), "FAILED");
     }},
    {"a_stale_exit_of_a_restarted_task_is_ignored",
     [](job_spec& j) { restart_workers(j); },
     [](driver& d) {
       d.run_job();
       auto old = d.task(w1).container_id;
       d.send(core::executor_lost{old, "connection reset"});
       EXPECT_EQ(d.state(w1), "REQUESTED");
       d.grant(1, 1);
       d.send(core::exited{task_exit{w1, 1, 9, 0, "", old}});
       d.send(core::completed{{container_completion{old, -105, ""}}});
       EXPECT_EQ(d.state(w1), "LAUNCHED");
       EXPECT_EQ(d.task(w1).restarts, 1);
     }},
    {"a_silent_executor_is_told_to_stop_before_its_task_restarts",
     [](job_spec& j) { restart_workers(j); },
     [](driver& d) {
       d.run_job();
       auto old = d.task(w1).container_id;
       d.advance(11000, {w0, ps0});
       EXPECT_EQ(d.state(w1), "REQUESTED");
       EXPECT_TRUE(has(d.stopped_executors(), old));
       EXPECT_EQ(d.job_state(), "RUNNING");
     }},
    {"a_restarted_task_that_gets_no_container_fails_for_good",
     [](job_spec& j) {
       restart_workers(j);
       j.policy.allocation_timeout_ms = 120000;
     },
     [](driver& d) {
       d.run_job();
       d.exit(w1, 3);
       d.advance(120000, {w0, ps0});
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "worker:1 could not be restarted"));
       auto asks = d.ever<core::ask_containers>();
       EXPECT_EQ(asks.back().ask.count, -1); // the ask is withdrawn
     }},
    {"a_restarted_task_that_does_not_register_fails_again",
     [](job_spec& j) { restart_workers(j, 1); },
     [](driver& d) {
       d.run_job();
       d.exit(w1, 3);
       d.grant(1, 1);
       d.advance(120000, {w0, ps0});
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "did not register within 120 s"));
     }},
    {"a_tolerated_failure_lets_the_job_succeed_with_the_failure_shown",
     [](job_spec& j) { j.policy.tolerated_failures = 1; },
     [](driver& d) {
       d.run_job();
       d.exit(w1, 3);
       EXPECT_EQ(d.job_state(), "RUNNING");
       EXPECT_EQ(d.state(w1), "FAILED");
       d.exit(w0, 0);
       EXPECT_EQ(d.job_state(), "SUCCEEDED");
       EXPECT_EQ(d.diagnostics(), "succeeded with 1 tolerated failure: worker:1");
     }},
    {"failures_past_the_tolerance_fail_the_job",
     [](job_spec& j) {
       j.policy.tolerated_failures = 1;
       type_of(j, "worker").instances = 3;
     },
     [](driver& d) {
       d.run_job();
       d.exit(w1, 3);
       EXPECT_EQ(d.job_state(), "RUNNING");
       d.exit({"worker", 2}, 4);
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "worker:2 exited with code 4"));
     }},
    {"the_chief_failing_fails_the_job_at_once_whatever_the_tolerance",
     [](job_spec& j) {
       j = with_chief(j);
       j.policy.tolerated_failures = 5;
       restart_workers(j);
     },
     [](driver& d) {
       d.run_job();
       d.exit({"chief", 0}, 3);
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "chief:0 exited with code 3"));
     }},
    {"a_type_budget_counts_apart_from_the_job_budget",
     [](job_spec& j) {
       j.policy.tolerated_failures = 0;
       type_of(j, "ps").tolerated_failures = 1;
     },
     [](driver& d) {
       d.run_job();
       d.exit(ps0, 1);
       EXPECT_EQ(d.job_state(), "RUNNING");
       d.exit(w1, 3);
       EXPECT_EQ(d.job_state(), "FAILED");
     }},
    {"a_job_whose_every_tracked_task_failed_within_tolerance_fails",
     [](job_spec& j) {
       // Evaluators are outside the world: no chief among them.
       auto& worker = type_of(j, "worker");
       worker.name = "evaluator";
       worker.tolerated_failures = 2;
     },
     [](driver& d) {
       d.run_job();
       d.exit({"evaluator", 1}, 3);
       EXPECT_EQ(d.job_state(), "RUNNING");
       d.exit({"evaluator", 0}, 3);
       EXPECT_EQ(d.job_state(), "FAILED");
       EXPECT_TRUE(contains(d.diagnostics(), "no tracked task succeeded"));
     }},
    {"an_elastic_world_goes_on_while_at_least_min_tasks_remain",
     [](job_spec& j) {
       j.framework = "pytorch";
       auto& worker = type_of(j, "worker");
       worker.instances = 3;
       worker.elastic_min = 2;
       worker.elastic_max = 3;
     },
     [](driver& d) {
       d.run_job();
       d.exit(w0, 1); // no chief in an elastic world
       EXPECT_EQ(d.job_state(), "RUNNING");
       d.exit(w1, 1);
       EXPECT_EQ(d.job_state(), "FAILED");
     }},
    {"restarts_are_counted_per_attempt",
     [](job_spec& j) {
       restart_workers(j, 1);
       j.policy.max_attempts = 2;
     },
     [](driver& d) {
       d.run_job();
       d.exit(w1, 3);
       d.grant(1, 1);
       d.register_task(w1);
       d.exit(w1, 3);
       EXPECT_EQ(d.lc.attempt(), 2);
       d.grant_all();
       d.register_all();
       EXPECT_EQ(d.task(w1).restarts, 0);
       d.exit(w1, 3);
       EXPECT_EQ(d.state(w1), "REQUESTED");
     }},
    {"the_tensorboard_the_chief_starts_is_in_the_status_while_the_chief_runs",
     [](job_spec& j) {
       j.tensorboard.enabled = true;
       j.tensorboard.on = "chief";
       j.tensorboard.log_dir = "/runs/a";
     },
     [](driver& d) {
       d.start();
       d.grant_all();
       EXPECT_EQ(d.lc.status().tensorboard_task, "worker:0") << "worker:0 is the chief";
       EXPECT_EQ(d.lc.status().tensorboard_log_dir, "/runs/a");
       EXPECT_EQ(d.lc.status().tensorboard_address, "") << "not registered yet";
       executor_hello hello;
       hello.task = w0;
       hello.attempt = d.lc.attempt();
       hello.container_id = d.task(w0).container_id;
       hello.host = "node1";
       hello.port = 2000;
       hello.tensorboard_port = 6006;
       d.send(core::registered{hello});
       d.register_all();
       EXPECT_EQ(d.lc.status().tensorboard_address, "node1:6006") << "TB_PORT, not 2000";
       d.exit(w0, 0);
       EXPECT_EQ(d.lc.status().tensorboard_address, "") << "gone with the chief";
       EXPECT_EQ(d.lc.status().tensorboard_task, "worker:0");
     }},
    {"the_sidecars_tensorboard_is_in_the_status_the_same_way",
     [](job_spec& j) {
       j.tensorboard.enabled = true;
       j.tensorboard.log_dir = "/runs/b";
       task_type_spec tb;
       tb.name = "tensorboard";
       tb.tracked = false;
       tb.sidecar = true;
       tb.command = "tensorboard";
       tb.priority = static_cast<int32_t>(j.tasks.size()) + 1;
       j.tasks.push_back(tb);
     },
     [](driver& d) {
       d.run_job();
       auto st = d.lc.status();
       EXPECT_EQ(st.tensorboard_task, "tensorboard:0");
       EXPECT_EQ(st.tensorboard_address, "host-tensorboard:2000");
       EXPECT_EQ(st.tensorboard_log_dir, "/runs/b");
     }},
    {"a_failed_job_waits_for_the_reason_of_a_container_killed_under_its_task", nullptr,
     [](driver& d) {
       d.run_job();
       d.exit(w1, 143, "", 15); // the NodeManager's TERM, before the RM says why
       EXPECT_EQ(d.job_state(), "FAILED");
       d.exit(w0, 143, "", 15);
       d.exit(ps0, 143, "", 15);
       d.send(core::containers_stopped{});
       EXPECT_TRUE(d.ever<core::unregister>().empty());
       d.complete(w1, -104,
                  "Container [pid=7,containerID=c] is running 100B beyond the 'PHYSICAL' "
                  "memory limit. Current usage: 356 MB of 256 MB physical memory used; "
                  "1 GB of 537.6 MB virtual memory used. Killing container.\nDump of the "
                  "process-tree for c :");
       ASSERT_EQ(d.of<core::unregister>().size(), 1u);
       auto diag = d.of<core::unregister>()[0].report.diagnostics; // of() is a copy
       EXPECT_TRUE(contains(diag, "worker:1 was killed by signal 15 (Terminated): its "
                                  "container was killed for exceeding its memory limit "
                                  "(exit status -104)"))
           << diag;
       EXPECT_TRUE(contains(diag, "(Container [pid=7,containerID=c] is running 100B "
                                  "beyond the 'PHYSICAL' memory limit."));
       EXPECT_FALSE(contains(diag, "Dump of the process-tree"));
       EXPECT_EQ(d.task(w1).exit_code, -104);
     }},
    {"the_wait_for_a_containers_reason_is_bounded", nullptr,
     [](driver& d) {
       d.run_job();
       d.send(core::executor_lost{d.task(w1).container_id, "connection reset"});
       d.exit(w0, 143, "", 15);
       d.exit(ps0, 143, "", 15);
       d.send(core::containers_stopped{});
       d.advance(2900);
       EXPECT_TRUE(d.ever<core::unregister>().empty());
       d.advance(200);
       ASSERT_EQ(d.ever<core::unregister>().size(), 1u);
       EXPECT_TRUE(contains(d.ever<core::unregister>()[0].report.diagnostics,
                            "worker:1 lost: its executor's connection dropped"));
     }},
    {"a_task_lost_with_its_node_has_the_next_attempt_avoid_the_node",
     [](job_spec& j) { j.policy.max_attempts = 2; },
     [](driver& d) {
       d.run_job();
       auto node = launched_on(d, w0);
       d.send(core::executor_lost{d.task(w0).container_id, "connection reset"});
       EXPECT_EQ(d.lc.attempt(), 2);
       // The blacklist goes out before the next attempt's asks.
       auto avoid = first_index<core::avoid_nodes>(d.out);
       auto ask = first_index<core::ask_containers>(d.out);
       ASSERT_LT(avoid, d.out.size());
       EXPECT_LT(avoid, ask);
       EXPECT_EQ(std::get<core::avoid_nodes>(d.out[avoid]).hosts,
                 std::vector<std::string>{node});
       EXPECT_TRUE(contains(d.diagnostics(), "on " + node + ")")) << d.diagnostics();
       // Another task lost there later: the node is avoided once.
       d.grant_all();
       d.register_all();
       d.send(core::executor_lost{d.task(w1).container_id, "connection reset"});
       auto hosts = std::vector<std::string>{};
       for (auto& a : d.ever<core::avoid_nodes>())
         hosts.insert(hosts.end(), a.hosts.begin(), a.hosts.end());
       EXPECT_EQ(std::count(hosts.begin(), hosts.end(), node), 1) << node;
     }},
    {"a_lost_node_or_failed_disks_are_avoided_and_a_preemption_or_an_exit_is_not",
     nullptr,
     [](driver& d) {
       auto avoided_after = [](std::function<void(driver&)> what) {
         driver e{workers_and_ps()};
         e.run_job();
         what(e);
         EXPECT_NE(e.job_state(), "RUNNING");
         return e.ever<core::avoid_nodes>().size();
       };
       EXPECT_EQ(avoided_after([](driver& e) { e.complete(w0, -100, "lost node"); }), 1u);
       EXPECT_EQ(avoided_after([](driver& e) { e.complete(w0, -101, "disks"); }), 1u);
       EXPECT_EQ(avoided_after([](driver& e) {
                   e.advance(2000, {w1, ps0});
                   e.advance(9000, {w1, ps0}); // worker:0 silent
                 }),
                 1u);
       EXPECT_EQ(avoided_after([](driver& e) { e.complete(w0, -102, "preempted"); }), 0u);
       EXPECT_EQ(avoided_after([](driver& e) { e.exit(w0, 1, "boom\n"); }), 0u);
       d.run_job(); // the table's own driver: nothing lost, nothing avoided
       EXPECT_TRUE(d.ever<core::avoid_nodes>().empty());
     }},
    {"a_launch_refused_by_a_node_clock_ahead_has_the_next_attempt_avoid_the_node",
     [](job_spec& j) { j.policy.max_attempts = 2; },
     [](driver& d) {
       d.start();
       auto failed = grant_failing_one(d, w0, clock_refusal);
       EXPECT_EQ(d.lc.attempt(), 2);
       auto avoid = first_index<core::avoid_nodes>(d.out);
       auto ask = first_index<core::ask_containers>(d.out);
       ASSERT_LT(avoid, d.out.size());
       EXPECT_LT(avoid, ask);
       EXPECT_EQ(std::get<core::avoid_nodes>(d.out[avoid]).hosts,
                 std::vector<std::string>{failed.host});
       EXPECT_TRUE(contains(d.diagnostics(), "worker:0 could not be launched in " +
                                                 failed.id + " on " + failed.host))
           << d.diagnostics();
       EXPECT_TRUE(contains(d.diagnostics(), "clock is about 1 h 0 min (3600 s) ahead"))
           << d.diagnostics();
       bool said = false;
       for (auto& n : d.ever<core::note>())
         said |= contains(n.text, "node " + failed.host +
                                      " starts no container: its clock is ahead of the "
                                      "ResourceManager's (worker:0)");
       EXPECT_TRUE(said);
     }},
    {"a_launch_refused_by_a_node_clock_ahead_restarts_the_task_elsewhere",
     [](job_spec& j) {
       type_of(j, "worker").restart = restart_policy::on_failure;
       type_of(j, "worker").max_restarts = 1;
       type_of(j, "worker").restart_backoff_ms = 0;
     },
     [](driver& d) {
       d.start();
       auto failed = grant_failing_one(d, w1, clock_refusal);
       EXPECT_EQ(d.lc.attempt(), 1);
       EXPECT_EQ(d.state(w1), "REQUESTED");
       auto avoid = first_index<core::avoid_nodes>(d.out);
       auto ask = first_index<core::ask_containers>(d.out);
       ASSERT_LT(avoid, d.out.size());
       EXPECT_LT(avoid, ask);
       EXPECT_EQ(std::get<core::avoid_nodes>(d.out[avoid]).hosts,
                 std::vector<std::string>{failed.host});
     }},
    {"a_launch_refused_for_another_reason_avoids_no_node",
     [](job_spec& j) { j.policy.max_attempts = 2; },
     [](driver& d) {
       d.start();
       grant_failing_one(d, w0,
                         "127.0.0.3:45454: starting container c failed: "
                         "org.apache.hadoop.yarn.exceptions.YarnException: Unauthorized "
                         "request to start container.");
       EXPECT_EQ(d.lc.attempt(), 2);
       EXPECT_TRUE(d.ever<core::avoid_nodes>().empty());
     }},
    {"a_failed_job_whose_tasks_exited_by_themselves_does_not_wait", nullptr,
     [](driver& d) {
       d.run_job();
       d.exit(w1, 3);
       d.exit(w0, 143, "", 15);
       d.exit(ps0, 143, "", 15);
       d.send(core::containers_stopped{});
       EXPECT_EQ(d.of<core::unregister>().size(), 1u);
     }},
};

INSTANTIATE_TEST_SUITE_P(new_rules, lifecycle, ::testing::ValuesIn(new_rules),
                         param_name);

} // namespace
