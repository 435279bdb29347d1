// Registration deadlines count from the containers running (doc/lifecycle.md,
// rule 9): the launcher asks the node managers about started containers and
// tells the monitor when each runs.

#define CAF_SUITE running

#include <algorithm>

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

job_spec five_seconds() {
  auto job = default_job();
  job.policy.registration_timeout_ms = 5000;
  return job;
}

/// How many status calls named `id`.
size_t asked_about(const fake_nm_state& nm, const std::string& id) {
  return std::count_if(nm.status_calls.begin(), nm.status_calls.end(), [&](auto& ids) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  });
}

/// Moves time by `ms` in half seconds, the executors of `beat` heartbeating.
void pass(harness& h, int ms, const std::vector<task_id>& beat) {
  for (int i = 0; i < ms / 500; ++i) {
    h.advance(milliseconds(500));
    for (auto& t : beat)
      h.heartbeat(t);
  }
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(running_tests, harness)

CAF_TEST(a container localizing past the registration timeout is not failed) {
  job = five_seconds();
  nm_state().others = "localizing";
  start();
  auto slow = container_of(w1).id;
  nm_state().phases[container_of(w0).id] = {"running"};
  nm_state().phases[container_of(ps0).id] = {"running"};
  CAF_REQUIRE(register_task(w0));
  CAF_REQUIRE(register_task(ps0));
  pass(*this, 30000, {w0, ps0});
  CAF_CHECK_EQUAL(status().state, "REGISTERING");
  CAF_CHECK_EQUAL(task_state(w1), "LAUNCHED");
  // Asked about once a second, and no more about the registered ones.
  auto n = asked_about(nm_state(), slow);
  CAF_CHECK_GREATER_OR_EQUAL(n, 29u);
  CAF_CHECK_LESS_OR_EQUAL(n, 32u);
  CAF_CHECK_LESS_OR_EQUAL(asked_about(nm_state(), container_of(w0).id), 2u);
  nm_state().phases[slow] = {"running"};
  pass(*this, 1000, {w0, ps0});
  auto after_running = asked_about(nm_state(), slow);
  pass(*this, 3000, {w0, ps0});
  CAF_CHECK_EQUAL(asked_about(nm_state(), slow), after_running);
  CAF_CHECK_EQUAL(status().state, "REGISTERING");
  CAF_REQUIRE(register_task(w1));
  CAF_CHECK_EQUAL(status().state, "RUNNING");
}

CAF_TEST(a container running without registering hits the registration timeout) {
  job = five_seconds();
  nm_state().others = "localizing";
  start();
  CAF_REQUIRE(register_task(w0));
  CAF_REQUIRE(register_task(ps0));
  pass(*this, 20000, {w0, ps0});
  CAF_CHECK_EQUAL(status().state, "REGISTERING");
  nm_state().phases[container_of(w1).id] = {"running"};
  pass(*this, 4000, {w0, ps0});
  CAF_CHECK_EQUAL(status().state, "REGISTERING");
  pass(*this, 3000, {w0, ps0});
  auto st = status();
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(contains(st.diagnostics, "5 s after their containers were running, these "
                                     "tasks had not registered: worker:1"));
}

CAF_TEST(a node manager without sub states counts from launch as before) {
  job = five_seconds();
  nm_state().others = "unknown";
  start();
  CAF_REQUIRE(register_task(w0));
  advance(milliseconds(4900));
  CAF_CHECK_EQUAL(status().state, "REGISTERING");
  advance(milliseconds(200));
  CAF_CHECK_EQUAL(status().state, "FAILED");
  CAF_CHECK(contains(status().diagnostics, "worker:1, ps:0"));
}

CAF_TEST(a node manager that cannot be asked counts from launch as before) {
  job = five_seconds();
  nm_state().others = "localizing";
  start(); // the launcher asked at launch: localizing
  for (auto t : {w0, w1, ps0})
    nm_state().fail_status.insert(container_of(t).id);
  advance(seconds(2));
  CAF_CHECK_EQUAL(status().state, "REGISTERING");
  auto calls = nm_state().status_calls.size();
  advance(seconds(5));
  // Taken for running after the failed call: asked no more, and the
  // deadline ran.
  CAF_CHECK_EQUAL(nm_state().status_calls.size(), calls);
  CAF_CHECK_EQUAL(status().state, "FAILED");
}

CAF_TEST_FIXTURE_SCOPE_END()
