#pragma once

// A process tree as /proc shows it, the way YARN's NodeManager reads it
// (ProcfsBasedProcessTree): the tree under a root pid by parent links, each
// process's resident pages (rss from /proc/<pid>/stat times the page size),
// virtual size and CPU ticks. The executor samples its task's tree with it
// (runtime/metrics/task_sampler.hpp) and the local backend checks its
// containers' memory with it, so both count memory as YARN does.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tony::metrics {

struct proc_info {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t session = 0;
  char state = 0;
  std::string name;      // the command name in parentheses
  uint64_t utime = 0;    // clock ticks
  uint64_t stime = 0;    // clock ticks
  int64_t vsize = 0;     // bytes
  int64_t rss_pages = 0; // pages
  std::string cmdline;   // read only for dumps
};

using process_table = std::map<pid_t, proc_info>;

/// Parses one /proc/<pid>/stat line; false if it is not one.
bool parse_stat(const std::string& line, proc_info& out);

/// Every live process of this machine (zombies left out), from /proc.
process_table read_processes();

/// `root` and every process descending from it by parent links, plus the
/// members of process group `pgid` (when > 0): a task's command runs in a
/// group of its own, and a daemonised child keeps the group though its
/// parent went. Root first; empty when `root` is not in `all`.
std::vector<pid_t> tree_of(const process_table& all, pid_t root, pid_t pgid = 0);

struct tree_usage {
  int64_t rss_bytes = 0;
  int64_t vmem_bytes = 0;
  int32_t processes = 0;
};

/// What the processes `pids` of `all` hold.
tree_usage usage_of(const process_table& all, const std::vector<pid_t>& pids);

/// The lines YARN prints under "Dump of the process-tree for <container> :",
/// with each process's command line read from /proc.
std::string process_tree_dump(const process_table& all, const std::vector<pid_t>& pids);

/// sysconf(_SC_PAGESIZE) and sysconf(_SC_CLK_TCK).
int64_t page_size();
int64_t clock_ticks_per_second();

/// Hadoop's TraditionalBinaryPrefix.long2String(n, "", 1): "512", "256 M",
/// "700.5 M", "1.2 G" — the figures of YARN's memory diagnostics.
std::string binary_prefix(int64_t n);

/// YARN's diagnostic for a container over its physical memory limit, as
/// its ContainersMonitor writes it (with the process tree's dump).
std::string physical_memory_diagnostic(pid_t root, const std::string& container_id,
                                       const tree_usage& usage, int64_t limit_bytes,
                                       double vmem_ratio, const std::string& dump);

} // namespace tony::metrics
