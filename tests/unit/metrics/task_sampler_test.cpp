// A real child process that holds a known amount of memory, sampled as the
// executor samples its task.
#include "runtime/metrics/task_sampler.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>

#include <gtest/gtest.h>

using namespace tony;
using namespace tony::metrics;

namespace {

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// A child (its own group) that touches `mib` MiB and says so on a pipe;
// then, with `cpu_ms`, burns that much CPU time and says so again; then
// sleeps until killed.
pid_t holder(int mib, int cpu_ms, int* ready_fd) {
  int fds[2];
  if (::pipe(fds) != 0)
    return -1;
  auto pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::close(fds[0]);
    auto size = static_cast<size_t>(mib) << 20;
    auto* p = static_cast<char*>(::malloc(size));
    std::memset(p, 1, size);
    char c = 'x';
    if (::write(fds[1], &c, 1) != 1)
      ::_exit(1);
    if (cpu_ms > 0) {
      auto start = std::clock();
      volatile unsigned long sink = 0;
      while (std::clock() - start <
             static_cast<std::clock_t>(cpu_ms) * CLOCKS_PER_SEC / 1000)
        sink = sink + 1;
      if (::write(fds[1], &c, 1) != 1)
        ::_exit(1);
    }
    for (;;)
      ::pause();
  }
  ::close(fds[1]);
  *ready_fd = fds[0];
  return pid;
}

void wait_byte(int fd) {
  char c = 0;
  ASSERT_EQ(::read(fd, &c, 1), 1);
}

} // namespace

TEST(task_sampler, a_child_holding_200_mib_is_seen_with_200_mib) {
  int fd = -1;
  auto pid = holder(200, 0, &fd);
  ASSERT_GT(pid, 0);
  wait_byte(fd);
  ::close(fd);
  task_sampler sampler;
  auto s = sampler.sample(pid, pid, now_ms());
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  EXPECT_GT(s.time_ms, 0);
  EXPECT_EQ(s.processes, 1);
  // The allocation, plus what the test binary's pages the child shares.
  EXPECT_GE(s.rss_bytes, int64_t{200} << 20);
  EXPECT_LE(s.rss_bytes, int64_t{200 + 120} << 20);
  EXPECT_TRUE(s.gpus.empty()); // no NVIDIA driver here
}

TEST(task_sampler, cpu_is_the_cpu_time_used_between_samples) {
  // The child burns 600 ms of CPU between the two samples, however long
  // that takes on a busy machine: cores x wall time gives it back.
  int fd = -1;
  auto pid = holder(4, 600, &fd);
  ASSERT_GT(pid, 0);
  wait_byte(fd);
  task_sampler sampler;
  auto t1 = now_ms();
  sampler.sample(pid, pid, t1);
  wait_byte(fd);
  auto t2 = now_ms();
  auto s = sampler.sample(pid, pid, t2);
  ::close(fd);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  auto cpu_seconds =
      static_cast<double>(s.cpu_cores) * static_cast<double>(t2 - t1) / 1000;
  EXPECT_NEAR(cpu_seconds, 0.6, 0.15);
}

TEST(task_sampler, a_gone_process_is_an_empty_sample) {
  auto pid = ::fork();
  if (pid == 0)
    ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  task_sampler sampler;
  EXPECT_EQ(sampler.sample(pid, pid, now_ms()).time_ms, 0);
}
