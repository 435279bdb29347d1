// Why a gang waits, in words (core/waiting.hpp).

#include "core/waiting.hpp"

#include <gtest/gtest.h>

using namespace tony;
using namespace tony::core;

namespace {

std::vector<pending_containers> two_workers_and_a_gpu_task() {
  std::vector<pending_containers> pending;
  add_pending(pending, "worker", {2048, 2, 0}, "");
  add_pending(pending, "worker", {2048, 2, 0}, "");
  add_pending(pending, "trainer", {4096, 4, 1}, "gpu");
  return pending;
}

} // namespace

TEST(waiting, pending_containers_group_by_type_capability_and_label) {
  auto pending = two_workers_and_a_gpu_task();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].count, 2);
  EXPECT_EQ(pending[1].count, 1);
  add_pending(pending, "worker", {1024, 2, 0}, ""); // its own capability
  EXPECT_EQ(pending.size(), 3u);
}

TEST(waiting, nothing_pending_says_nothing) {
  EXPECT_EQ(waiting_reason({}, 4, cluster_view{{0, 0, 0}, 3}), "");
}

TEST(waiting, the_reason_comes_from_what_the_rm_said) {
  auto pending = two_workers_and_a_gpu_task();
  auto unknown = waiting_reason(pending, 5, std::nullopt);
  EXPECT_EQ(
      unknown.rfind("waiting for 3 of 5 containers (2 worker of 2048 MiB, 2 vcores; "
                    "1 trainer of 4096 MiB, 4 vcores",
                    0),
      0u)
      << unknown;
  EXPECT_NE(unknown.find("on nodes labelled 'gpu'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("has not answered the asks yet"), std::string::npos);

  auto empty = waiting_reason(pending, 5, cluster_view{{8192, 8, 1}, 0});
  EXPECT_NE(empty.find("no running NodeManager"), std::string::npos) << empty;

  auto full = waiting_reason(pending, 5, cluster_view{{3072, 8, 1}, 3});
  EXPECT_NE(full.find("the queue's headroom is 3072 MiB, 8 vcores"), std::string::npos)
      << full;
  EXPECT_NE(full.find("less than one trainer container"), std::string::npos) << full;
  EXPECT_NE(full.find("3 nodes"), std::string::npos) << full;

  auto roomy = waiting_reason(pending, 5, cluster_view{{65536, 64, 4}, 3});
  EXPECT_NE(roomy.find("the queue has room"), std::string::npos) << roomy;
  EXPECT_NE(roomy.find("not placed them yet"), std::string::npos) << roomy;
}
