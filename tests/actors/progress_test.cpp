// The job's progress as the AM reports it to the resource manager with its
// allocate calls (core/progress.hpp, doc/task-environment.md).

#define CAF_SUITE progress

#include "tests/actors/harness.hpp"

using namespace tony;
using namespace tony::testing;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const task_id w0{"worker", 0};
const task_id w1{"worker", 1};
const task_id ps0{"ps", 0};

} // namespace

CAF_TEST_FIXTURE_SCOPE(progress_tests, harness)

CAF_TEST(without reports the progress is the fraction of tracked tasks done) {
  start();
  register_all();
  advance(milliseconds(1100));
  CAF_REQUIRE(!rm_state().allocations.empty());
  CAF_CHECK_EQUAL(rm_state().allocations.back().progress, 0.0f);
  exit_task(w0, 0);
  advance(milliseconds(1100));
  heartbeat(w1);
  heartbeat(ps0); // the untracked ps counts for nothing
  advance(milliseconds(1100));
  CAF_CHECK_EQUAL(rm_state().allocations.back().progress, 0.5f);
}

CAF_TEST(the progress tasks write is the mean of those that report) {
  start();
  register_all();
  advance(milliseconds(1100));
  heartbeat_progress(w0, 0.25f);
  advance(milliseconds(1100));
  CAF_CHECK_EQUAL(rm_state().allocations.back().progress, 0.25f);
  heartbeat_progress(w1, 0.75f);
  advance(milliseconds(1100));
  CAF_CHECK_EQUAL(rm_state().allocations.back().progress, 0.5f);
  // A reporting task that succeeded counts as done.
  exit_task(w1, 0);
  advance(milliseconds(1100));
  heartbeat_progress(w0, 0.5f);
  advance(milliseconds(1100));
  CAF_CHECK_EQUAL(rm_state().allocations.back().progress, 0.75f);
}

CAF_TEST(reports of an earlier attempt are not the progress of this one) {
  start();
  register_all();
  advance(milliseconds(1100));
  heartbeat_progress(w0, 0.9f, 0); // a late heartbeat of attempt 0
  advance(milliseconds(1100));
  CAF_CHECK_EQUAL(rm_state().allocations.back().progress, 0.0f);
}

CAF_TEST_FIXTURE_SCOPE_END()
