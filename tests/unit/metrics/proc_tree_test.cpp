#include "runtime/metrics/proc_tree.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

using namespace tony::metrics;

namespace {

proc_info proc(pid_t pid, pid_t ppid, pid_t pgrp, int64_t rss_pages) {
  proc_info p;
  p.pid = pid;
  p.ppid = ppid;
  p.pgrp = pgrp;
  p.session = 1;
  p.rss_pages = rss_pages;
  p.vsize = rss_pages * 2 * page_size();
  return p;
}

} // namespace

TEST(proc_tree, a_stat_line_is_parsed_even_with_parentheses_in_the_name) {
  proc_info p;
  ASSERT_TRUE(
      parse_stat("4242 (my (weird) prog) S 4200 4242 4100 0 -1 4194304 10 0 0 0 "
                 "150 25 0 0 20 0 3 0 12345 734003200 179200 18446744073709551615",
                 p));
  EXPECT_EQ(p.pid, 4242);
  EXPECT_EQ(p.name, "my (weird) prog");
  EXPECT_EQ(p.state, 'S');
  EXPECT_EQ(p.ppid, 4200);
  EXPECT_EQ(p.pgrp, 4242);
  EXPECT_EQ(p.session, 4100);
  EXPECT_EQ(p.utime, 150u);
  EXPECT_EQ(p.stime, 25u);
  EXPECT_EQ(p.vsize, 734003200);
  EXPECT_EQ(p.rss_pages, 179200);
  EXPECT_FALSE(parse_stat("garbage", p));
  EXPECT_FALSE(parse_stat("12 (x) S", p));
}

TEST(proc_tree, the_tree_is_the_root_its_descendants_and_its_group) {
  process_table all;
  for (auto p : {proc(10, 1, 10, 100), proc(11, 10, 11, 200), proc(12, 11, 11, 300),
                 proc(13, 1, 11, 400),   // daemonised: parent gone, group kept
                 proc(20, 1, 20, 5000)}) // a stranger
    all[p.pid] = p;
  auto pids = tree_of(all, 10, 11);
  ASSERT_EQ(pids.size(), 4u);
  EXPECT_EQ(pids[0], 10);
  auto u = usage_of(all, pids);
  EXPECT_EQ(u.processes, 4);
  EXPECT_EQ(u.rss_bytes, 1000 * page_size());
  EXPECT_EQ(tree_of(all, 10).size(), 3u); // without the group: no daemon
  EXPECT_TRUE(tree_of(all, 99).empty());
}

TEST(proc_tree, sizes_are_written_as_hadoop_writes_them) {
  EXPECT_EQ(binary_prefix(512), "512");
  EXPECT_EQ(binary_prefix(256LL << 20), "256 M");
  EXPECT_EQ(binary_prefix((700LL << 20) + (512LL << 10)), "700.5 M");
  EXPECT_EQ(binary_prefix(3LL << 30), "3 G");
  EXPECT_EQ(binary_prefix(int64_t{1288490189}), "1.2 G");
  EXPECT_EQ(binary_prefix((1LL << 20) - 10), "1.0 M"); // 1024.0 K goes a prefix up
}

TEST(proc_tree, the_memory_diagnostic_is_yarns) {
  tree_usage u;
  u.rss_bytes = (700LL << 20) + (512LL << 10);
  u.vmem_bytes = 3LL << 30;
  auto d = physical_memory_diagnostic(4242, "container_1_0001_01_000002", u, 256LL << 20,
                                      2.1, "\t|- PID PPID\n");
  EXPECT_EQ(d,
            "Container [pid=4242,containerID=container_1_0001_01_000002] is running "
            "466092032B beyond the 'PHYSICAL' memory limit. Current usage: 700.5 MB of "
            "256 MB physical memory used; 3 GB of 537.6 MB virtual memory used. Killing "
            "container.\nDump of the process-tree for container_1_0001_01_000002 :\n"
            "\t|- PID PPID\n");
}

TEST(proc_tree, this_process_is_found_with_its_memory) {
  auto all = read_processes();
  auto pids = tree_of(all, ::getpid());
  ASSERT_FALSE(pids.empty());
  auto u = usage_of(all, pids);
  EXPECT_GT(u.rss_bytes, 1 << 20);
  auto dump = process_tree_dump(all, pids);
  EXPECT_NE(dump.find("metrics_test"), std::string::npos) << dump;
}
