#include "runtime/metrics/metrics_store.hpp"

#include <gtest/gtest.h>

using namespace tony;
using namespace tony::metrics;

namespace {

task_sample at(int64_t ms, int64_t rss_mib, float cpu) {
  task_sample s;
  s.time_ms = ms;
  s.rss_bytes = rss_mib << 20;
  s.cpu_cores = cpu;
  return s;
}

} // namespace

TEST(metrics_store, a_long_run_keeps_its_whole_span_in_bounded_points) {
  metrics_store store{8u << 20, 1000};
  store.expect_tasks(4);
  task_id w{"worker", 0};
  // A day of one sample a second, with one spike of memory in the middle.
  int64_t t0 = 1'700'000'000'000;
  for (int64_t i = 0; i < 86'400; ++i)
    store.add(w, at(t0 + i * 1000, i == 43'210 ? 5000 : 100, 1.0f));
  auto s = store.series(w);
  EXPECT_LE(s.time_ms.size(), store.capacity());
  EXPECT_GE(s.time_ms.size(), store.capacity() / 2);
  EXPECT_EQ(s.time_ms.front(), t0);
  EXPECT_GE(s.time_ms.back(), t0 + 86'400'000 - 2 * s.step_ms);
  // The spike survives the merging (memory keeps its peak), CPU its mean.
  auto peak = *std::max_element(s.rss_bytes.begin(), s.rss_bytes.end());
  EXPECT_EQ(peak, int64_t{5000} << 20);
  EXPECT_EQ(s.peak_rss_bytes, int64_t{5000} << 20);
  for (auto c : s.cpu_cores)
    EXPECT_FLOAT_EQ(c, 1.0f);
  EXPECT_TRUE(s.gpu_util.empty());
}

TEST(metrics_store, the_budget_holds_at_ten_thousand_tasks) {
  metrics_store store{8u << 20, 1000};
  store.expect_tasks(10'000);
  EXPECT_EQ(store.capacity(), 34u); // 8 MiB / 10,000 tasks / 24 bytes
  for (int t = 0; t < 10'000; ++t)
    for (int64_t i = 0; i < 100; ++i)
      store.add({"worker", t}, at(1000 + i * 1000, 100, 0.5f));
  EXPECT_LE(store.bytes(), size_t{10'000} * 34 * metrics_store::point_bytes);
  EXPECT_LE(store.bytes(), size_t{8} << 20);
  store.expect_tasks(1000);
  EXPECT_GT(store.capacity(), 300u);
}

TEST(metrics_store, fewer_tasks_share_the_budget_up_to_480_points) {
  metrics_store store;
  store.expect_tasks(2);
  EXPECT_EQ(store.capacity(), 480u);
  store.expect_tasks(1000);
  EXPECT_EQ(store.capacity(), size_t{8 << 20} / 1000 / metrics_store::point_bytes);
}

TEST(metrics_store, gpus_are_averaged_and_their_memory_summed) {
  metrics_store store;
  task_id w{"worker", 1};
  auto s = at(5000, 300, 2.0f);
  s.gpus = {gpu_sample{0, 80.0f, int64_t{2} << 30, int64_t{16} << 30},
            gpu_sample{1, 40.0f, int64_t{1} << 30, int64_t{16} << 30}};
  store.add(w, s);
  auto x = store.series(w);
  ASSERT_EQ(x.gpu_util.size(), 1u);
  EXPECT_FLOAT_EQ(x.gpu_util[0], 60.0f);
  EXPECT_EQ(x.gpu_used_bytes[0], int64_t{3} << 30);
  EXPECT_EQ(x.gpus, 2);
  EXPECT_EQ(x.latest.gpus.size(), 2u);
  task_sample latest;
  int64_t peak = 0;
  int32_t gpus = 0;
  ASSERT_TRUE(store.summary(w, latest, peak, gpus));
  EXPECT_EQ(peak, int64_t{300} << 20);
  EXPECT_FALSE(store.summary({"worker", 9}, latest, peak, gpus));
}

TEST(metrics_store, samples_without_time_are_ignored) {
  metrics_store store;
  store.add({"worker", 0}, task_sample{});
  EXPECT_TRUE(store.tasks().empty());
  EXPECT_TRUE(store.series({"worker", 0}).time_ms.empty());
}

TEST(metrics_store, the_event_logs_step_grows_with_the_job) {
  EXPECT_EQ(log_step_ms(1), 5'000);
  EXPECT_EQ(log_step_ms(50), 5'000);
  EXPECT_EQ(log_step_ms(300), 30'000);
  EXPECT_EQ(log_step_ms(1000), 100'000);
  EXPECT_EQ(log_step_ms(10'000), 1'000'000);
}
