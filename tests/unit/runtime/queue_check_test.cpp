// The submission's warning for a job larger than its queue may ever use.

#include "submit/queue_check.hpp"

#include <gtest/gtest.h>

namespace tony {
namespace {

yarn::queue_info tree() {
  yarn::queue_info root{"root", 1.0f, 1.0f, {}};
  yarn::queue_info team{"team", 0.5f, 0.5f, {}};
  team.children.push_back({"small", 0.5f, 0.5f, {}});
  root.children.push_back({"default", 0.5f, 1.0f, {}});
  root.children.push_back(team);
  return root;
}

std::vector<yarn::node_report> nodes(int running, int32_t mb) {
  std::vector<yarn::node_report> out;
  for (int i = 0; i < running + 1; ++i) {
    yarn::node_report n;
    n.host = "n" + std::to_string(i);
    n.capability = {mb, 8, 0};
    n.state = i < running ? "RUNNING" : "LOST"; // a lost node does not count
    out.push_back(n);
  }
  return out;
}

job_spec job_of(const std::string& queue, int32_t workers, int32_t mb) {
  job_spec job;
  job.queue = queue;
  job.am.capability = {512, 1, 0};
  task_type_spec w;
  w.name = "worker";
  w.instances = workers;
  w.capability = {mb, 1, 0};
  job.tasks = {w};
  return job;
}

TEST(queue_check, the_maximum_is_the_product_down_the_tree) {
  EXPECT_DOUBLE_EQ(*absolute_max_capacity(tree(), "default"), 1.0);
  EXPECT_DOUBLE_EQ(*absolute_max_capacity(tree(), "small"), 0.25);
  EXPECT_DOUBLE_EQ(*absolute_max_capacity(tree(), "root.team.small"), 0.25);
  EXPECT_FALSE(absolute_max_capacity(tree(), "nope"));
}

TEST(queue_check, a_job_over_its_queues_maximum_is_warned_and_one_within_is_not) {
  // 3 running nodes of 4096 MiB; queue small may use 25%: 3072 MiB.
  EXPECT_EQ(queue_warning(job_of("small", 2, 1024), nodes(3, 4096), tree()), "");
  auto w = queue_warning(job_of("small", 3, 1024), nodes(3, 4096), tree());
  EXPECT_EQ(w.rfind("warning: the job needs 3584 MiB in all (its AM included), more "
                    "than queue 'small' may ever use on today's cluster: 25% of "
                    "12288 MiB = 3072 MiB",
                    0),
            0u)
      << w;
  EXPECT_NE(w.find("waits until the cluster grows"), std::string::npos) << w;
  EXPECT_EQ(queue_warning(job_of("default", 11, 1024), nodes(3, 4096), tree()), "");
  EXPECT_NE(queue_warning(job_of("default", 12, 1024), nodes(3, 4096), tree()), "");
  // Nothing known: no warning.
  EXPECT_EQ(queue_warning(job_of("nope", 99, 1024), nodes(3, 4096), tree()), "");
  EXPECT_EQ(queue_warning(job_of("small", 99, 1024), {}, tree()), "");
}

} // namespace
} // namespace tony
