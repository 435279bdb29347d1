#include "runtime/metrics/nvml.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

using namespace tony;
using namespace tony::metrics;

namespace {

// The environment the fake library reads, reset after each test.
struct fake_env : ::testing::Test {
  void SetUp() override {
    ::unsetenv("FAKE_NVML_DEVICES");
    ::unsetenv("FAKE_NVML_PROCESSES");
    ::unsetenv("FAKE_NVML_FAIL_INIT");
  }
  void TearDown() override { SetUp(); }
};

} // namespace

TEST_F(fake_env, nvml_is_loaded_at_run_time_and_reads_devices) {
  ::setenv("FAKE_NVML_DEVICES", "2", 1);
  std::string why;
  auto lib = nvml::load(TONY_FAKE_NVML, &why);
  ASSERT_TRUE(lib) << why;
  EXPECT_EQ(lib->device_count(), 2);
  nvml::device_state d;
  ASSERT_TRUE(lib->read(1, d));
  EXPECT_EQ(d.index, 1);
  EXPECT_EQ(d.total_bytes, int64_t{16} << 30);
  EXPECT_EQ(d.used_bytes, int64_t{2} << 30);
  EXPECT_GE(d.util_pct, 10.0f);
  EXPECT_LE(d.util_pct, 90.0f);
  EXPECT_FALSE(lib->read(2, d));
}

TEST_F(fake_env, a_missing_library_or_a_failed_init_is_no_gpu_and_says_why) {
  std::string why;
  EXPECT_FALSE(nvml::load("/nonexistent/libnvidia-ml.so.1", &why));
  EXPECT_NE(why.find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos);
  ::setenv("FAKE_NVML_FAIL_INIT", "1", 1);
  EXPECT_FALSE(nvml::load(TONY_FAKE_NVML, &why));
  EXPECT_NE(why.find("nvmlInit failed with NVML error 9"), std::string::npos) << why;
}

TEST_F(fake_env, a_tasks_gpus_are_those_its_processes_use_and_those_it_was_given) {
  // pid 111 (the task) holds 3 GiB on device 2; pid 999 (another task) device 0.
  ::setenv("FAKE_NVML_PROCESSES", "111:2:3072,999:0:5000", 1);
  auto lib = nvml::load(TONY_FAKE_NVML);
  ASSERT_TRUE(lib);
  auto used = sample_gpus(*lib, {110, 111}, {});
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].index, 2);
  EXPECT_EQ(used[0].used_bytes, int64_t{3} << 30);
  EXPECT_EQ(used[0].total_bytes, int64_t{16} << 30);
  // Given device 1 (CUDA_VISIBLE_DEVICES) but not using it yet: 0 bytes its own.
  auto given = sample_gpus(*lib, {110, 111}, {1});
  ASSERT_EQ(given.size(), 2u);
  EXPECT_EQ(given[0].index, 1);
  EXPECT_EQ(given[0].used_bytes, 0);
  EXPECT_TRUE(sample_gpus(*lib, {42}, {}).empty());
}

TEST_F(fake_env, many_processes_grow_the_buffer) {
  std::string procs;
  for (int i = 0; i < 40; ++i)
    procs += (procs.empty() ? "" : ",") + std::to_string(1000 + i) + ":0:100";
  ::setenv("FAKE_NVML_PROCESSES", procs.c_str(), 1);
  auto lib = nvml::load(TONY_FAKE_NVML);
  ASSERT_TRUE(lib);
  nvml::device_state d;
  ASSERT_TRUE(lib->read(0, d));
  EXPECT_EQ(d.processes.size(), 40u);
  auto s = sample_gpus(*lib, {1039}, {});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].used_bytes, int64_t{100} << 20);
}

TEST(nvml_devices, visible_device_lists_are_indices_or_nothing) {
  EXPECT_EQ(parse_device_list("0,2"), (std::vector<int>{0, 2}));
  EXPECT_EQ(parse_device_list("3"), (std::vector<int>{3}));
  EXPECT_TRUE(parse_device_list("").empty());
  EXPECT_TRUE(parse_device_list("GPU-8d3c1a,GPU-77").empty());
  EXPECT_TRUE(parse_device_list("all").empty());
  EXPECT_TRUE(parse_device_list("0,,1").empty());
}

TEST(nvml_devices, without_nvml_the_gpus_are_counted_from_proc) {
  ::setenv("TONY_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  auto dir = std::filesystem::temp_directory_path() /
             ("tony-gpus-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "0000:3b:00.0");
  std::filesystem::create_directories(dir / "0000:d8:00.0");
  EXPECT_EQ(count_gpus(dir.string()), 2);
  EXPECT_EQ(count_gpus((dir / "none").string()), 0);
  std::filesystem::remove_all(dir);
  ::setenv("TONY_NVML_LIBRARY", TONY_FAKE_NVML, 1);
  ::setenv("FAKE_NVML_DEVICES", "3", 1);
  EXPECT_EQ(count_gpus("/nonexistent"), 3); // NVML first
  ::unsetenv("TONY_NVML_LIBRARY");
  ::unsetenv("FAKE_NVML_DEVICES");
}
