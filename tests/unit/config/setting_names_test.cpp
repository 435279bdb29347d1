// Refusals name what to change in the front end's own words.

#include "config/setting_names.hpp"

#include <gtest/gtest.h>

namespace tony {
namespace {

job_spec two_types() {
  job_spec job;
  task_type_spec worker;
  worker.name = "worker";
  worker.instances = 4;
  worker.capability = {8192, 1, 0};
  task_type_spec ps;
  ps.name = "ps";
  ps.capability = {8192, 1, 0};
  job.tasks = {worker, ps};
  return job;
}

TEST(setting_names, each_front_end_names_its_own_settings) {
  auto job = two_types();
  EXPECT_TRUE(setting_names_for(setting_words::job_toml, job).empty());
  auto ytf = setting_names_for(setting_words::ytf, job);
  EXPECT_EQ(ytf["tasks.worker.memory"], "-m/--task_memory");
  EXPECT_EQ(ytf["tasks.ps.vcores"], "-c/--task_vcores");
  EXPECT_EQ(ytf["tasks.ps.instances"], "-r/--cluster_requirement");
  auto tony = setting_names_for(setting_words::tony, job);
  EXPECT_EQ(tony["tasks.worker.memory"], "tony.worker.memory");
  EXPECT_EQ(tony["tasks.ps.gpus"], "tony.ps.gpus");
}

TEST(setting_names, what_to_lower_names_the_dimensions_that_do_not_fit) {
  auto job = two_types();
  auto& worker = job.tasks[0];
  EXPECT_EQ(what_to_lower(job, &worker, {8192, 1, 0}, {4096, 8, 0}),
            "lower tasks.worker.memory");
  EXPECT_EQ(what_to_lower(job, &worker, {8192, 9, 1}, {4096, 8, 0}),
            "lower tasks.worker.memory or tasks.worker.vcores or tasks.worker.gpus");
  job.setting_names = setting_names_for(setting_words::ytf, job);
  // The whole job: every type's setting once, and the number of tasks.
  EXPECT_EQ(what_to_lower(job, nullptr, {40960, 5, 0}, {24000, 8, 0}),
            "lower -m/--task_memory or -r/--cluster_requirement");
  job.setting_names = setting_names_for(setting_words::tony, job);
  EXPECT_EQ(what_to_lower(job, nullptr, {40960, 5, 0}, {24000, 8, 0}),
            "lower tony.worker.memory or tony.worker.instances or tony.ps.memory or "
            "tony.ps.instances");
}

} // namespace
} // namespace tony
