// Scenarios of the job lifecycle (doc/lifecycle.md), one rule each.

#define CAF_SUITE lifecycle

#include "tests/actors/harness.hpp"

using namespace tony;
using namespace tony::testing;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const task_id w0{"worker", 0};
const task_id w1{"worker", 1};
const task_id ps0{"ps", 0};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

job_spec job_with(std::function<void(job_spec&)> f) {
  auto job = default_job();
  f(job);
  return job;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(lifecycle_tests, harness)

CAF_TEST(all tracked tasks succeed so the job succeeds and the ps is stopped) {
  start();
  CAF_CHECK_EQUAL(nm_state().started.size(), 3u);
  register_all();
  CAF_CHECK_EQUAL(status().state, "RUNNING");
  exit_task(w0, 0);
  CAF_CHECK_EQUAL(status().state, "RUNNING");
  exit_task(w1, 0);
  CAF_CHECK_EQUAL(exec_state(ps0).stops.size(), 1u); // untracked ps told to stop
  exit_task(ps0, 143, "", 1, 15);
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "SUCCEEDED");
  CAF_CHECK_EQUAL(task_state(ps0), "KILLED");
  CAF_CHECK(stopped_ids().count(container_of(ps0).id) == 1);
  CAF_REQUIRE_EQUAL(rm_state().finishes.size(), 1u);
  CAF_CHECK_EQUAL(rm_state().finishes[0].final_status, "SUCCEEDED");
  // Nothing later changes the outcome or reports it again.
  advance(seconds(30));
  CAF_CHECK_EQUAL(rm_state().finishes.size(), 1u);
}

CAF_TEST(the end is recorded before the rm hears of it) {
  // What a client reads once it sees the application finish (the event log
  // in the history dir) is kept before the RM is told.
  std::vector<job_status> seen;
  size_t finishes_before = 99;
  before_unregister = [&](const job_status& st) {
    seen.push_back(st);
    finishes_before = rm_state().finishes.size();
  };
  start();
  register_all();
  exit_task(w0, 0);
  exit_task(w1, 0);
  exit_task(ps0, 143, "", 1, 15);
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  CAF_CHECK_EQUAL(finishes_before, 0u);
  CAF_CHECK_EQUAL(seen[0].state, "SUCCEEDED");
  CAF_CHECK_GREATER(seen[0].finished_ms, 0);
  CAF_REQUIRE_EQUAL(rm_state().finishes.size(), 1u);
  // The end's time is the one recorded then, not the RM's answer's.
  CAF_CHECK_EQUAL(status().finished_ms, seen[0].finished_ms);
}

CAF_TEST(a failing worker fails the job at once and stops every other container) {
  start();
  register_all();
  exit_task(w1, 3,
            "loading data\nTraceback (most recent call last):\nValueError: bad shape\n");
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(contains(st.diagnostics, "worker:1 exited with code 3"));
  CAF_CHECK(contains(st.diagnostics, "ValueError: bad shape"));
  CAF_CHECK_EQUAL(exec_state(w0).stops.size(), 1u);
  CAF_CHECK_EQUAL(exec_state(ps0).stops.size(), 1u);
  exit_task(w0, 143, "", 1, 15);
  exit_task(ps0, 143, "", 1, 15);
  auto stopped = stopped_ids();
  CAF_CHECK(stopped.count(container_of(w0).id) == 1);
  CAF_CHECK(stopped.count(container_of(ps0).id) == 1);
  CAF_REQUIRE_EQUAL(rm_state().finishes.size(), 1u);
  CAF_CHECK_EQUAL(rm_state().finishes[0].final_status, "FAILED");
  CAF_CHECK(contains(rm_state().finishes[0].diagnostics, "worker:1"));
}

CAF_TEST(a ps failing before the end fails the job) {
  start();
  register_all();
  exit_task(ps0, 1, "ps crashed\n");
  CAF_CHECK_EQUAL(status().state, "FAILED");
  CAF_CHECK(contains(status().diagnostics, "ps:0 exited with code 1"));
}

CAF_TEST(a sidecar failure is reported and ignored) {
  job = job_with([](job_spec& j) {
    task_type_spec tb;
    tb.name = "tensorboard";
    tb.instances = 1;
    tb.capability = {512, 1, 0};
    tb.command = "tensorboard";
    tb.tracked = false;
    tb.sidecar = true;
    tb.priority = 3;
    j.tasks.push_back(tb);
  });
  start();
  register_all();
  exit_task({"tensorboard", 0}, 1, "port in use\n");
  CAF_CHECK_EQUAL(status().state, "RUNNING");
  CAF_CHECK_EQUAL(task_state({"tensorboard", 0}), "FAILED");
  exit_task(w0, 0);
  exit_task(w1, 0);
  exit_task(ps0, 143, "", 1, 15);
  CAF_CHECK_EQUAL(status().state, "SUCCEEDED");
}

CAF_TEST(a dropped executor connection is a lost task and fails the job) {
  start();
  register_all();
  kill_executor(w0);
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK_EQUAL(task_state(w0), "LOST");
  CAF_CHECK(contains(st.diagnostics, "worker:0 lost: its executor's connection dropped"));
}

CAF_TEST(an executor that stops heartbeating is lost after the timeout) {
  start();
  register_all();
  // worker:1 and ps:0 keep beating; worker:0 falls silent.
  for (int i = 0; i < 18; ++i) {
    advance(milliseconds(500));
    heartbeat(w1);
    heartbeat(ps0);
    if (i < 4)
      heartbeat(w0);
  }
  CAF_CHECK_EQUAL(status().state, "RUNNING");
  for (int i = 0; i < 6; ++i) {
    advance(milliseconds(500));
    heartbeat(w1);
    heartbeat(ps0);
  }
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK_EQUAL(task_state(w0), "LOST");
  CAF_CHECK(contains(st.diagnostics, "no heartbeat from its executor for 10 s"));
}

CAF_TEST(samples carry the clock of the AM whatever the clock of their node says) {
  std::vector<std::pair<task_id, task_sample>> got;
  on_sample = [&](const task_id& t, int32_t, const task_sample& s) {
    got.emplace_back(t, s);
  };
  auto wall = [] {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  };
  auto before = wall();
  start();
  register_all();
  advance(seconds(2));
  // worker:0's node is an hour ahead, worker:1's an hour behind.
  task_sample ahead;
  ahead.time_ms = before + 3'600'000;
  ahead.rss_bytes = 1 << 20;
  task_sample behind = ahead;
  behind.time_ms = before - 3'600'000;
  heartbeat(w0, 1, ahead);
  heartbeat(w1, 1, behind);
  heartbeat(ps0, 1, task_sample{}); // no sample yet: nothing to store
  auto after = wall();
  CAF_REQUIRE_EQUAL(got.size(), 2u);
  for (auto& [task, s] : got) {
    // The AM's clock: its wall time at spawn plus the 2 s the test moved.
    CAF_CHECK_GREATER_OR_EQUAL(s.time_ms, before + 2000);
    CAF_CHECK_LESS_OR_EQUAL(s.time_ms, after + 2000);
    CAF_CHECK_EQUAL(s.rss_bytes, 1 << 20);
  }
  CAF_CHECK_EQUAL(got[0].first, w0);
  CAF_CHECK_EQUAL(got[0].second.time_ms, got[1].second.time_ms);
}

CAF_TEST(a lost node is named in plain words) {
  start();
  register_all();
  complete_container(container_of(w0).id, -100, "Container released on a *lost* node");
  advance(seconds(2));
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(contains(st.diagnostics, "the node running it was lost"));
  CAF_CHECK(contains(st.diagnostics, "worker:0"));
}

CAF_TEST(a preempted container is named in plain words) {
  start();
  register_all();
  complete_container(container_of(w1).id, -102, "Container preempted by scheduler");
  advance(seconds(2));
  CAF_CHECK(contains(status().diagnostics, "preempted by the scheduler"));
}

CAF_TEST(a container over its memory limit is named in plain words) {
  start();
  register_all();
  complete_container(container_of(w1).id, -104,
                     "Container killed on request. Exit code is 137");
  advance(seconds(2));
  auto st = status();
  CAF_CHECK(contains(st.diagnostics, "killed for exceeding its memory limit"));
  CAF_CHECK(contains(st.diagnostics, "ask for more memory"));
}

CAF_TEST(a task ended by a signal gets the reason YARN gives in the final status) {
  // The NodeManager kills worker:1's container over its memory limit: the
  // executor reports the signal first, the RM the reason a beat later.
  start();
  register_all();
  exit_task(w1, 143, "", 1, 15);
  CAF_CHECK_EQUAL(status().state, "FAILED");
  exit_task(w0, 143, "", 1, 15);
  exit_task(ps0, 143, "", 1, 15);
  CAF_CHECK(rm_state().finishes.empty()); // the final status waits for the reason
  complete_container(container_of(w1).id, -104,
                     "Container [pid=42,containerID=c] is running 400M beyond the "
                     "'PHYSICAL' memory limit.\nDump of the process-tree");
  advance(seconds(2));
  CAF_REQUIRE_EQUAL(rm_state().finishes.size(), 1u);
  auto& diag = rm_state().finishes[0].diagnostics;
  CAF_CHECK(contains(diag,
                     "worker:1 was killed by signal 15 (Terminated): its container "
                     "was killed for exceeding its memory limit (exit status -104)"));
  CAF_CHECK(contains(diag, "beyond the 'PHYSICAL' memory limit"));
  CAF_CHECK(!contains(diag, "Dump of the process-tree"));
  CAF_CHECK(contains(status().diagnostics, "exit status -104"));
  for (auto& t : status().tasks)
    if (t.task == w1) {
      CAF_CHECK(contains(t.diagnostics, "exceeding its memory limit"));
      CAF_CHECK_EQUAL(t.exit_code, -104);
    }
}

CAF_TEST(a task whose executor vanished gets the reason YARN gives in the final status) {
  // The NodeManager's SIGKILL can beat the executor's report.
  start();
  register_all();
  kill_executor(w1);
  CAF_CHECK_EQUAL(status().state, "FAILED");
  exit_task(w0, 143, "", 1, 15);
  exit_task(ps0, 143, "", 1, 15);
  CAF_CHECK(rm_state().finishes.empty());
  complete_container(container_of(w1).id, -104, "Container [pid=42] is running beyond");
  advance(seconds(2));
  CAF_REQUIRE_EQUAL(rm_state().finishes.size(), 1u);
  auto& diag = rm_state().finishes[0].diagnostics;
  CAF_CHECK(contains(diag, "worker:1 lost: its executor's connection dropped"));
  CAF_CHECK(contains(diag, "killed for exceeding its memory limit (exit status -104)"));
}

CAF_TEST(a task ended by a signal without a YARN reason ends the job after the wait) {
  start();
  register_all();
  exit_task(w1, 137, "", 1, 9); // a kill -9 by hand: the AM's own stop follows
  exit_task(w0, 143, "", 1, 15);
  exit_task(ps0, 143, "", 1, 15);
  complete_container(container_of(w1).id, -105,
                     "Container killed by the ApplicationMaster.");
  advance(seconds(2));
  CAF_REQUIRE_EQUAL(rm_state().finishes.size(), 1u);
  CAF_CHECK(contains(rm_state().finishes[0].diagnostics, "killed by signal 9"));
  CAF_CHECK(!contains(rm_state().finishes[0].diagnostics, "-105"));
}

CAF_TEST(a reason that never comes delays the final status by the bounded wait only) {
  start();
  register_all();
  exit_task(w1, 143, "", 1, 15);
  exit_task(w0, 143, "", 1, 15);
  exit_task(ps0, 143, "", 1, 15);
  advance(milliseconds(2500));
  CAF_CHECK(rm_state().finishes.empty());
  advance(seconds(1));
  CAF_REQUIRE_EQUAL(rm_state().finishes.size(), 1u);
  CAF_CHECK_EQUAL(rm_state().finishes[0].final_status, "FAILED");
  CAF_CHECK(contains(rm_state().finishes[0].diagnostics, "killed by signal 15"));
}

CAF_TEST(nobody gets the cluster spec before every task registered) {
  start();
  CAF_REQUIRE(register_task(w0));
  CAF_REQUIRE(register_task(ps0));
  CAF_CHECK(exec_state(w0).specs.empty());
  CAF_CHECK(exec_state(ps0).specs.empty());
  CAF_CHECK_NOT_EQUAL(status().state, "RUNNING");
  // The last registration releases the barrier: every executor gets the
  // same, complete spec.
  auto exec = sys.spawn(fake_executor, w1);
  executors[w1] = exec;
  executor_hello hello{w1, 1, container_of(w1).id, "h1", 2001, secret, 7};
  self->send(registry, register_atom_v, hello, exec);
  expect((register_atom, executor_hello, executor_actor),
         from(self).to(registry).with(_, _, _));
  expect((registered_atom, executor_hello, executor_actor),
         from(registry).to(monitor).with(_, _, _));
  expect((spec_atom, cluster_spec), from(registry).to(executors[w0]).with(_, _));
  expect((spec_atom, cluster_spec), from(registry).to(executors[ps0]).with(_, _));
  expect((spec_atom, cluster_spec), from(registry).to(exec).with(_, _));
  settle();
  auto spec = decode_cluster(exec_state(w0).specs.at(0).encoded);
  CAF_REQUIRE(spec);
  CAF_CHECK_EQUAL(spec->at("worker").size(), 2u);
  CAF_CHECK_EQUAL(spec->at("worker")[1], "h1:2001");
  CAF_CHECK_EQUAL(spec->at("ps").size(), 1u);
  CAF_CHECK_EQUAL(status().state, "RUNNING");
}

CAF_TEST(the registration timeout fails the job naming the missing tasks) {
  start();
  CAF_REQUIRE(register_task(w0));
  for (int i = 0; i < 238; ++i) {
    advance(milliseconds(500));
    heartbeat(w0);
  }
  CAF_CHECK_NOT_EQUAL(status().state, "FAILED");
  for (int i = 0; i < 4; ++i) {
    advance(milliseconds(500));
    heartbeat(w0);
  }
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(contains(st.diagnostics, "registration timeout"));
  CAF_CHECK(contains(st.diagnostics, "worker:1, ps:0"));
  CAF_CHECK(exec_state(w0).specs.empty());
}

CAF_TEST(an executor dying before it registered fails the job instead of hanging) {
  start();
  CAF_REQUIRE(register_task(w0));
  CAF_REQUIRE(register_task(ps0));
  complete_container(container_of(w1).id, 3, "Exception from container-launch.");
  advance(seconds(2));
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(
      contains(st.diagnostics, "worker:1 failed: its container exited with status 3"));
  CAF_CHECK(exec_state(w0).specs.empty());
}

CAF_TEST(the allocation timeout fails the job with what was missing and releases) {
  job = job_with([](job_spec& j) { j.policy.allocation_timeout_ms = 120000; });
  rm_state().auto_grant = false;
  start();
  // Only one worker container arrives.
  rm_state().to_grant.push_back(rm_state().make_container(1, {1024, 1, 0}));
  advance(seconds(1));
  CAF_CHECK_EQUAL(nm_state().started.size(), 1u);
  // While it waits, the status says why, from the RM's headroom and node
  // count as the heartbeater passed them on.
  auto waiting = status();
  CAF_CHECK(contains(waiting.diagnostics, "waiting for 2 of 3 containers"));
  CAF_CHECK(contains(waiting.diagnostics, "the queue's headroom is 0 MiB"));
  CAF_CHECK(contains(waiting.diagnostics, "3 nodes"));
  advance(seconds(120));
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(contains(st.diagnostics, "allocation timeout"));
  CAF_CHECK(contains(st.diagnostics, "missing: worker:1 (1024 MiB, 1 vcores), ps:0"));
  // The granted container is stopped and the outstanding asks are cancelled.
  CAF_CHECK_EQUAL(stopped_ids().size(), 1u);
  auto& last = rm_state().allocations.back();
  bool cancelled = !rm_state().outstanding.empty();
  for (auto& [prio, ask] : rm_state().outstanding) {
    CAF_MESSAGE("outstanding at priority " << prio << ": " << ask.count);
    cancelled = cancelled && ask.count == 0;
  }
  CAF_CHECK(cancelled);
  (void)last;
  CAF_CHECK_EQUAL(rm_state().finishes.size(), 1u);
}

CAF_TEST(a request larger than the cluster maximum fails at once) {
  job = job_with([](job_spec& j) { j.tasks[0].capability = {65536, 1, 0}; });
  start();
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(contains(st.diagnostics, "each worker task asks for 65536 MiB"));
  CAF_CHECK(
      contains(st.diagnostics, "largest container this cluster grants is 8192 MiB"));
  CAF_CHECK(nm_state().started.empty());
  CAF_CHECK_EQUAL(rm_state().finishes.size(), 1u);
}

CAF_TEST(the whole - job timeout kills the job with the reason) {
  job = job_with([](job_spec& j) { j.timeout_ms = 60000; });
  start();
  register_all();
  for (int i = 0; i < 121; ++i) {
    advance(milliseconds(500));
    heartbeat(w0);
    heartbeat(w1);
    heartbeat(ps0);
  }
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "KILLED");
  CAF_CHECK(contains(st.diagnostics, "ran past its timeout of 60 s"));
  CAF_CHECK_EQUAL(exec_state(w0).stops.size(), 1u);
}

CAF_TEST(a kill from the client stops everything) {
  start();
  register_all();
  self->send(monitor, kill_atom_v, std::string{"killed by the user"});
  settle();
  CAF_CHECK_EQUAL(status().state, "KILLED");
  for (auto t : {w0, w1, ps0})
    CAF_CHECK_EQUAL(exec_state(t).stops.size(), 1u);
  for (auto t : {w0, w1, ps0})
    exit_task(t, 143, "", 1, 15);
  CAF_CHECK_EQUAL(stopped_ids().size(), 3u);
  CAF_REQUIRE_EQUAL(rm_state().finishes.size(), 1u);
  CAF_CHECK_EQUAL(rm_state().finishes[0].final_status, "KILLED");
  CAF_CHECK_EQUAL(rm_state().finishes[0].diagnostics, "killed by the user");
}

CAF_TEST(a wrong secret is rejected and the job goes on) {
  start();
  auto res = register_task(w0, 1, "guess");
  CAF_REQUIRE(!res);
  CAF_CHECK_EQUAL(res.error().code(), static_cast<uint8_t>(errc::bad_secret));
  register_all();
  CAF_CHECK_EQUAL(status().state, "RUNNING");
}

CAF_TEST(an unknown task is rejected and the job goes on) {
  start();
  auto res = register_task({"worker", 7});
  CAF_REQUIRE(!res);
  CAF_CHECK_EQUAL(res.error().code(), static_cast<uint8_t>(errc::unknown_task));
  register_all();
  CAF_CHECK_EQUAL(status().state, "RUNNING");
}

CAF_TEST(a duplicate registration is rejected and the first one stays) {
  start();
  CAF_REQUIRE(register_task(w0, 1, secret, "first.test"));
  auto first = executors[w0];
  auto res = register_task(w0, 1, secret, "second.test");
  CAF_REQUIRE(!res);
  CAF_CHECK_EQUAL(res.error().code(), static_cast<uint8_t>(errc::duplicate_registration));
  executors[w0] = first;
  CAF_REQUIRE(register_task(w1));
  CAF_REQUIRE(register_task(ps0));
  CAF_REQUIRE_EQUAL(exec_state(w0).specs.size(), 1u);
  auto spec = decode_cluster(exec_state(w0).specs[0].encoded);
  CAF_REQUIRE(spec);
  CAF_CHECK_EQUAL(spec->at("worker")[0], "first.test:2000");
  CAF_CHECK_EQUAL(status().state, "RUNNING");
}

CAF_TEST(a failed attempt restarts every task and the job fails after the last) {
  job = job_with([](job_spec& j) { j.policy.max_attempts = 2; });
  start();
  register_all();
  exit_task(w0, 1, "boom\n");
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "REGISTERING"); // the new containers are granted at once
  CAF_CHECK_EQUAL(st.attempt, 2);
  // Every task got a new container whose environment says attempt 2.
  CAF_REQUIRE_EQUAL(nm_state().started.size(), 6u);
  for (size_t i = 3; i < 6; ++i)
    CAF_CHECK_EQUAL(nm_state().started[i].env.at("TONY_ATTEMPT"), "2");
  // Stale reports of attempt 1 change nothing.
  exit_task(w1, 1, "", 1);
  CAF_CHECK_EQUAL(status().state, "REGISTERING");
  // Registrations for attempt 1 are refused now.
  CAF_CHECK(!register_task(w1, 1));
  register_all(2);
  CAF_CHECK_EQUAL(status().state, "RUNNING");
  exit_task(w1, 2, "boom again\n", 2);
  st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(contains(st.diagnostics, "attempt 2 of 2 failed"));
  // The others were told to stop; they never answer, so the grace runs out.
  CAF_CHECK_EQUAL(rm_state().finishes.size(), 0u);
  advance(seconds(4));
  CAF_CHECK_EQUAL(rm_state().finishes.size(), 1u);
  CAF_CHECK_EQUAL(task_state(w0), "KILLED");
}

CAF_TEST(an excess container is released and never launched) {
  rm_state().auto_grant = false;
  start();
  for (int i = 0; i < 3; ++i)
    rm_state().to_grant.push_back(rm_state().make_container(1, {1024, 1, 0}));
  rm_state().to_grant.push_back(rm_state().make_container(2, {512, 1, 0}));
  advance(seconds(1));
  CAF_CHECK_EQUAL(nm_state().started.size(), 3u);
  std::set<std::string> launched;
  for (auto& s : nm_state().started)
    launched.insert(s.env.at("TONY_TASK_TYPE") + s.env.at("TONY_TASK_INDEX"));
  CAF_CHECK_EQUAL(launched.size(), 3u); // worker0, worker1, ps0: none twice
  advance(seconds(2));
  CAF_CHECK_EQUAL(rm_state().released.size(), 1u);
}

CAF_TEST(the node of a lost executor is blacklisted before the next attempt asks) {
  job = job_with([](job_spec& j) { j.policy.max_attempts = 2; });
  start();
  register_all();
  auto node = container_of(w0).host;
  auto before = rm_state().allocations.size();
  kill_executor(w0);
  advance(seconds(1));
  CAF_CHECK_EQUAL(status().attempt, 2);
  auto& calls = rm_state().allocations;
  size_t blacklisted = calls.size();
  size_t asked = calls.size();
  for (size_t i = before; i < calls.size(); ++i) {
    if (!calls[i].blacklist_additions.empty() && blacklisted == calls.size()) {
      blacklisted = i;
      CAF_CHECK_EQUAL(calls[i].blacklist_additions, std::vector<std::string>{node});
    }
    if (!calls[i].asks.empty() && asked == calls.size())
      asked = i;
  }
  CAF_REQUIRE_LESS(blacklisted, calls.size());
  CAF_CHECK_LESS_OR_EQUAL(blacklisted, asked);
  // Sent once: the RM keeps it.
  size_t sent = 0;
  for (auto& call : calls)
    sent += call.blacklist_additions.size();
  CAF_CHECK_EQUAL(sent, 1u);
}

CAF_TEST(an RM that lost the registration gets every outstanding ask again) {
  rm_state().auto_grant = false;
  start();
  advance(seconds(1));
  CAF_CHECK_EQUAL(rm_state().outstanding[1].count, 2);
  rm_state().lose_registration = true;
  auto lost_at = rm_state().allocations.size();
  advance(seconds(1));
  // The call after the resync starts over at response id 0 with every ask.
  auto& calls = rm_state().allocations;
  CAF_REQUIRE_GREATER(calls.size(), lost_at + 1);
  CAF_CHECK_EQUAL(calls[lost_at + 1].response_id, 0);
  CAF_CHECK_EQUAL(calls[lost_at + 1].asks.size(), 2u);
  CAF_CHECK_EQUAL(rm_state().outstanding[1].count, 2);
  CAF_CHECK_EQUAL(rm_state().outstanding[2].count, 1);
  // And the job goes on as if nothing happened.
  rm_state().auto_grant = true;
  advance(seconds(1));
  CAF_CHECK_EQUAL(nm_state().started.size(), 3u);
}

CAF_TEST(a resource manager that cannot be reached fails the job) {
  start();
  rm_state().fail_allocate = true;
  register_all();
  for (int i = 0; i < 70; ++i) {
    advance(milliseconds(500));
    heartbeat(w0);
    heartbeat(w1);
    heartbeat(ps0);
  }
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(contains(st.diagnostics, "resource manager did not answer allocate"));
}

CAF_TEST(an unregister no RM answers is tried again so the outcome reaches the RM) {
  start();
  register_all();
  rm_state().unanswered_finishes = 2; // the RMs are down, then one is back
  exit_task(w0, 0);
  exit_task(w1, 3, "boom\n");
  advance(seconds(6));
  CAF_CHECK_EQUAL(rm_state().finish_calls, 3);
  CAF_REQUIRE_EQUAL(rm_state().finishes.size(), 1u);
  CAF_CHECK_EQUAL(rm_state().finishes[0].final_status, "FAILED");
  CAF_CHECK(contains(rm_state().finishes[0].diagnostics, "worker:1 exited with code 3"));
}

CAF_TEST(an unregister the RM refuses for a gone attempt ends the AM at once) {
  // The RM failed the attempt (its node was lost) and killed a task as the
  // job was ending: the AM's unregister finds the attempt gone. Trying
  // again cannot help; the AM ends as for any gone attempt (no linger), so
  // it does not outlive the application.
  start();
  register_all();
  rm_state().finish_attempt_not_found = true;
  exit_task(w0, 0);
  exit_task(w1, 3, "boom\n");
  advance(seconds(6)); // the other tasks stopped, then the unregister
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK_EQUAL(rm_state().finish_calls, 1);
  CAF_CHECK_EQUAL(attempt_gone_calls, 1);
  CAF_CHECK(contains(st.diagnostics, "AM attempt 1 stops its tasks and exits"));
  advance(seconds(40));
  CAF_CHECK_EQUAL(rm_state().finish_calls, 1);
}

CAF_TEST(the heartbeater polls fast while asks are pending and slowly when steady) {
  rm_state().auto_grant = false;
  start();
  auto before = rm_state().allocations.size();
  advance(seconds(1));
  auto pending_calls = rm_state().allocations.size() - before;
  CAF_CHECK_GREATER_OR_EQUAL(pending_calls, 8u); // ~every 100 ms
  for (int i = 0; i < 2; ++i)
    rm_state().to_grant.push_back(rm_state().make_container(1, {1024, 1, 0}));
  rm_state().to_grant.push_back(rm_state().make_container(2, {512, 1, 0}));
  advance(seconds(1));
  register_all();
  before = rm_state().allocations.size();
  for (int i = 0; i < 10; ++i) {
    advance(milliseconds(500));
    heartbeat(w0);
    heartbeat(w1);
    heartbeat(ps0);
  }
  auto steady_calls = rm_state().allocations.size() - before;
  CAF_CHECK_LESS_OR_EQUAL(steady_calls, 6u); // ~every second
  CAF_CHECK_GREATER_OR_EQUAL(steady_calls, 4u);
}

CAF_TEST(a task with its own capability asks with its own priority) {
  job = job_with([](job_spec& j) {
    j.tasks[0].index_capability[1] = resource{4096, 2, 0};
    j.tasks[0].index_priority[1] = 3;
  });
  start();
  CAF_REQUIRE(!rm_state().allocations.empty());
  std::map<int32_t, container_ask> asks;
  for (auto& req : rm_state().allocations)
    for (auto& ask : req.asks)
      asks.emplace(ask.priority, ask);
  CAF_REQUIRE_EQUAL(asks.size(), 3u);
  CAF_CHECK_EQUAL(asks[1].count, 1);
  CAF_CHECK(asks[1].capability == (resource{1024, 1, 0}));
  CAF_CHECK_EQUAL(asks[3].count, 1);
  CAF_CHECK_EQUAL(asks[3].task_type, "worker");
  CAF_CHECK(asks[3].capability == (resource{4096, 2, 0}));
  CAF_CHECK_EQUAL(asks[2].task_type, "ps");
  CAF_CHECK_EQUAL(container_of(w0).priority, 1);
  CAF_CHECK_EQUAL(container_of(w1).priority, 3);
  CAF_CHECK(container_of(w1).capability == (resource{4096, 2, 0}));
  register_all();
  CAF_CHECK_EQUAL(status().state, "RUNNING");
}

// -- a later AM attempt (doc/operations.md "AM restart") ---------------------------

CAF_TEST(a later AM attempt adopts the running containers and their executors return ) {
  am_attempt = 2;
  resume = saved_running_job(job);
  settle(); // the fake RM takes its spawn arguments first
  rm_state().registration.previous_containers = containers_of(*resume);
  start();
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "RUNNING");
  CAF_CHECK(st.recovery.find("AM attempt 2 adopted 3 running tasks") !=
            std::string::npos);
  CAF_CHECK(nm_state().started.empty()); // nothing launched again
  // The adopted executors register again; a stranger's container does not.
  CAF_CHECK(register_again(w0, "container_worker_0"));
  auto stranger = register_again(w1, "container_1_0001_01_000099");
  CAF_REQUIRE(!stranger);
  CAF_CHECK_EQUAL(stranger.error().code(), static_cast<uint8_t>(errc::stale_attempt));
  CAF_CHECK(register_again(w1, "container_worker_1"));
  CAF_CHECK(register_again(ps0, "container_ps_0"));
  CAF_CHECK(exec_state(w0).specs.empty()); // their commands run: no new spec
  // Their exits end the job as usual; the ps is stopped through its executor.
  exit_task(w0, 0);
  exit_task(w1, 0);
  CAF_CHECK_EQUAL(status().state, "SUCCEEDED");
  CAF_CHECK_EQUAL(exec_state(ps0).stops.size(), 1u);
}

CAF_TEST(an executor of the AM before is asked to retry until the new AM decided) {
  am_attempt = 2;
  resume = saved_running_job(job);
  settle();
  rm_state().refuse_registration = true; // the AM never gets to decide
  start();
  auto early = register_again(w0, "container_worker_0");
  CAF_REQUIRE(!early);
  CAF_CHECK_EQUAL(early.error().code(), static_cast<uint8_t>(errc::not_ready));
}

CAF_TEST(a first AM refuses executors that register again) {
  start();
  auto stray = register_again(w0, "container_worker_0");
  CAF_REQUIRE(!stray);
  CAF_CHECK_EQUAL(stray.error().code(), static_cast<uint8_t>(errc::stale_attempt));
}

CAF_TEST(an AM whose attempt the RM no longer knows stops its tasks and ends at once) {
  std::string last_saved;
  on_change = [&](const job_status& s) { last_saved = to_string(s.state); };
  start();
  register_all();
  auto calls = rm_state().allocations.size();
  rm_state().attempt_not_found = true;
  advance(seconds(1));
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK_EQUAL(attempt_gone_calls, 1);
  CAF_CHECK(contains(st.diagnostics, "ApplicationAttemptNotFoundException"));
  CAF_CHECK(contains(st.diagnostics, "AM attempt 1 stops its tasks and exits"));
  CAF_CHECK_EQUAL(last_saved, "FAILED"); // the last attempt's end is the job's
  CAF_CHECK_EQUAL(exec_state(w0).stops.size(), 1u);
  CAF_CHECK_EQUAL(exec_state(w1).stops.size(), 1u);
  CAF_CHECK_EQUAL(exec_state(ps0).stops.size(), 1u);
  // No unregister (the RM refuses it), no retries, no linger.
  advance(seconds(40));
  CAF_CHECK_EQUAL(rm_state().finish_calls, 0);
  CAF_CHECK_LESS_OR_EQUAL(rm_state().allocations.size(), calls + 2);
}

CAF_TEST(an AM whose attempt is gone leaves its tasks to the next attempt) {
  job = job_with([](job_spec& j) { j.am.max_app_attempts = 2; });
  // What the AM saves for the next attempt and logs (am_host's sink).
  std::string last_saved;
  on_change = [&](const job_status& s) { last_saved = to_string(s.state); };
  start();
  register_all();
  caf::scoped_actor client{sys}; // tony-submit, waiting for the end
  auto end = client->request(monitor, caf::infinite, wait_atom_v);
  settle();
  rm_state().attempt_not_found = true;
  advance(seconds(1));
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "RUNNING"); // the job goes on in the next attempt
  // Told the job as it stands, not a failure: it follows the next attempt.
  end.receive([&](job_status& told) { CAF_CHECK_EQUAL(told.state, "RUNNING"); },
              [](caf::error& err) { CAF_FAIL("wait failed: " << err); });
  CAF_CHECK_EQUAL(attempt_gone_calls, 1);
  CAF_CHECK(contains(st.diagnostics,
                     "AM attempt 1 exits and leaves its tasks to the next attempt"));
  CAF_CHECK_EQUAL(exec_state(w0).stops.size(), 0u);
  CAF_CHECK_EQUAL(rm_state().finish_calls, 0);
  // The next attempt finds the job RUNNING and adopts its tasks: this
  // attempt's end is not saved as the job's outcome.
  CAF_CHECK_EQUAL(last_saved, "RUNNING");
}

CAF_TEST(an AM_SHUTDOWN command ends the AM at once) {
  start();
  register_all();
  rm_state().order_shutdown = true;
  advance(seconds(1));
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK_EQUAL(attempt_gone_calls, 1);
  CAF_CHECK(contains(st.diagnostics, "AM_SHUTDOWN"));
  CAF_CHECK_EQUAL(exec_state(w0).stops.size(), 1u);
  advance(seconds(40));
  CAF_CHECK_EQUAL(rm_state().finish_calls, 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
