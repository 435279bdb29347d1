// The job's progress as the AM reports it to the RM (core/progress.hpp).

#include "core/progress.hpp"
#include "tests/state_names.hpp"

#include <gtest/gtest.h>

using namespace tony;
using namespace tony::core;

namespace {

task_status task(std::string type, int32_t index, std::string state,
                 bool tracked = true) {
  task_status t;
  t.task = {std::move(type), index};
  t.state = task_state_of(state);
  t.tracked = tracked;
  return t;
}

job_status job(std::vector<task_status> tasks, std::string state = "RUNNING") {
  job_status st;
  st.state = job_state_of(state);
  st.attempt = 1;
  st.tasks = std::move(tasks);
  return st;
}

} // namespace

TEST(progress, without_reports_the_fraction_of_tracked_tasks_that_succeeded) {
  auto st = job({task("worker", 0, "SUCCEEDED"), task("worker", 1, "RUNNING"),
                 task("worker", 2, "RUNNING"), task("worker", 3, "FAILED"),
                 task("ps", 0, "RUNNING", false)});
  EXPECT_FLOAT_EQ(job_progress(st, {}), 0.25f);
  EXPECT_FLOAT_EQ(job_progress(job({}), {}), 0.0f);
  EXPECT_FLOAT_EQ(job_progress(job({task("ps", 0, "RUNNING", false)}), {}), 0.0f);
}

TEST(progress, the_tasks_own_reports_are_averaged) {
  auto st = job({task("chief", 0, "RUNNING"), task("worker", 0, "RUNNING"),
                 task("worker", 1, "RUNNING")});
  // Only the chief writes: its progress is the job's.
  EXPECT_FLOAT_EQ(job_progress(st, {{{"chief", 0}, {1, 0.4f}}}), 0.4f);
  // Every rank writes: the mean.
  EXPECT_FLOAT_EQ(job_progress(st, {{{"chief", 0}, {1, 0.4f}},
                                    {{"worker", 0}, {1, 0.6f}},
                                    {{"worker", 1}, {1, 0.5f}}}),
                  0.5f);
  // One that reported and succeeded counts 1.
  st.tasks[0].state = task_state::succeeded;
  EXPECT_FLOAT_EQ(
      job_progress(st, {{{"chief", 0}, {1, 0.4f}}, {{"worker", 0}, {1, 0.5f}}}), 0.75f);
}

TEST(progress, reports_of_another_attempt_and_untracked_tasks_do_not_count) {
  auto st = job({task("worker", 0, "RUNNING"), task("tensorboard", 0, "RUNNING", false)});
  st.attempt = 2;
  EXPECT_FLOAT_EQ(job_progress(st, {{{"worker", 0}, {1, 0.9f}}}), 0.0f);
  EXPECT_FLOAT_EQ(job_progress(st, {{{"tensorboard", 0}, {2, 0.9f}}}), 0.0f);
  EXPECT_FLOAT_EQ(job_progress(st, {{{"worker", 0}, {2, 0.3f}}}), 0.3f);
}

TEST(progress, a_restarted_task_counts_once_by_its_last_run) {
  auto st = job({task("worker", 0, "FAILED"), task("worker", 1, "SUCCEEDED"),
                 task("worker", 0, "SUCCEEDED")});
  EXPECT_FLOAT_EQ(job_progress(st, {}), 1.0f);
}

TEST(progress, a_final_job_is_done) {
  EXPECT_FLOAT_EQ(job_progress(job({task("worker", 0, "FAILED")}, "FAILED"), {}), 1.0f);
}
