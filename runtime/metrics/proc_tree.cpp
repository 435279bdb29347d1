#include "runtime/metrics/proc_tree.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace tony::metrics {

namespace {

std::string read_small(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

bool parse_stat(const std::string& line, proc_info& out) {
  // "<pid> (<name>) <state> <ppid> <pgrp> <session> ..." where the name may
  // hold spaces and parentheses: it ends at the last ')'.
  auto open = line.find('(');
  auto close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return false;
  out.pid = static_cast<pid_t>(std::atoi(line.c_str()));
  out.name = line.substr(open + 1, close - open - 1);
  unsigned long long utime = 0, stime = 0, vsize = 0;
  long long rss = 0;
  int ppid = 0, pgrp = 0, session = 0;
  char state = 0;
  // Fields 3..24 of proc(5); the ones not needed are skipped with %*.
  int n =
      std::sscanf(line.c_str() + close + 1,
                  " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
                  "%*d %*d %*u %llu %lld",
                  &state, &ppid, &pgrp, &session, &utime, &stime, &vsize, &rss);
  if (n != 8 || out.pid <= 0)
    return false;
  out.state = state;
  out.ppid = ppid;
  out.pgrp = pgrp;
  out.session = session;
  out.utime = utime;
  out.stime = stime;
  out.vsize = static_cast<int64_t>(vsize);
  out.rss_pages = rss;
  return true;
}

process_table read_processes() {
  process_table result;
  auto dir = ::opendir("/proc");
  if (!dir)
    return result;
  while (auto entry = ::readdir(dir)) {
    char* end = nullptr;
    auto pid = static_cast<pid_t>(std::strtol(entry->d_name, &end, 10));
    if (pid <= 0 || *end != '\0')
      continue;
    proc_info info;
    auto line = read_small("/proc/" + std::string{entry->d_name} + "/stat");
    if (!parse_stat(line, info) || info.state == 'Z')
      continue;
    result.emplace(pid, std::move(info));
  }
  ::closedir(dir);
  return result;
}

std::vector<pid_t> tree_of(const process_table& all, pid_t root, pid_t pgid) {
  std::vector<pid_t> result;
  if (all.count(root) == 0)
    return result;
  std::map<pid_t, std::vector<pid_t>> children;
  for (auto& [pid, p] : all)
    children[p.ppid].push_back(pid);
  std::set<pid_t> seen{root};
  result.push_back(root);
  for (size_t i = 0; i < result.size(); ++i) {
    auto kids = children.find(result[i]);
    if (kids == children.end())
      continue;
    for (auto kid : kids->second)
      if (seen.insert(kid).second)
        result.push_back(kid);
  }
  if (pgid > 0)
    for (auto& [pid, p] : all)
      if (p.pgrp == pgid && seen.insert(pid).second)
        result.push_back(pid);
  return result;
}

tree_usage usage_of(const process_table& all, const std::vector<pid_t>& pids) {
  tree_usage result;
  auto page = page_size();
  for (auto pid : pids) {
    auto i = all.find(pid);
    if (i == all.end())
      continue;
    result.rss_bytes += i->second.rss_pages * page;
    result.vmem_bytes += i->second.vsize;
    ++result.processes;
  }
  return result;
}

std::string process_tree_dump(const process_table& all, const std::vector<pid_t>& pids) {
  std::string out = "\t|- PID PPID PGRPID SESSID CMD_NAME USER_MODE_TIME(MILLIS) "
                    "SYSTEM_TIME(MILLIS) VMEM_USAGE(BYTES) RSSMEM_USAGE(PAGES) "
                    "FULL_CMD_LINE\n";
  for (auto pid : pids) {
    auto i = all.find(pid);
    if (i == all.end())
      continue;
    auto& p = i->second;
    auto cmdline = read_small("/proc/" + std::to_string(pid) + "/cmdline");
    for (auto& c : cmdline)
      if (c == '\0')
        c = ' ';
    while (!cmdline.empty() && cmdline.back() == ' ')
      cmdline.pop_back();
    char buf[256];
    std::snprintf(buf, sizeof(buf), "\t|- %d %d %d %d (%s) %llu %llu %lld %lld ", p.pid,
                  p.ppid, p.pgrp, p.session, p.name.c_str(),
                  static_cast<unsigned long long>(p.utime),
                  static_cast<unsigned long long>(p.stime),
                  static_cast<long long>(p.vsize), static_cast<long long>(p.rss_pages));
    out += buf;
    out += cmdline;
    out += '\n';
  }
  return out;
}

int64_t page_size() {
  static const int64_t size = [] {
    auto n = ::sysconf(_SC_PAGESIZE);
    return n > 0 ? static_cast<int64_t>(n) : int64_t{4096};
  }();
  return size;
}

int64_t clock_ticks_per_second() {
  static const int64_t ticks = [] {
    auto n = ::sysconf(_SC_CLK_TCK);
    return n > 0 ? static_cast<int64_t>(n) : int64_t{100};
  }();
  return ticks;
}

std::string binary_prefix(int64_t n) {
  std::string sign;
  if (n < 0) {
    sign = "-";
    n = -n;
  }
  if (n < 1024)
    return sign + std::to_string(n);
  static const char* symbols = "KMGTPE";
  int shift = 10;
  int i = 0;
  while (i + 1 < 6 && n >= (int64_t{1} << (shift + 10))) {
    shift += 10;
    ++i;
  }
  if ((n & ((int64_t{1} << shift) - 1)) == 0)
    return sign + std::to_string(n >> shift) + " " + symbols[i];
  char buf[64];
  double value = static_cast<double>(n) / static_cast<double>(int64_t{1} << shift);
  std::snprintf(buf, sizeof(buf), "%.1f", value);
  // 1023.96 K prints as "1024.0": one prefix up, as Hadoop does.
  if (std::string{buf}.rfind("1024", 0) == 0 && i + 1 < 6) {
    ++i;
    shift += 10;
    value = static_cast<double>(n) / static_cast<double>(int64_t{1} << shift);
    std::snprintf(buf, sizeof(buf), "%.1f", value);
  }
  return sign + buf + " " + symbols[i];
}

std::string physical_memory_diagnostic(pid_t root, const std::string& container_id,
                                       const tree_usage& usage, int64_t limit_bytes,
                                       double vmem_ratio, const std::string& dump) {
  auto vmem_limit = static_cast<int64_t>(static_cast<double>(limit_bytes) * vmem_ratio);
  return "Container [pid=" + std::to_string(root) + ",containerID=" + container_id +
         "] is running " + std::to_string(usage.rss_bytes - limit_bytes) +
         "B beyond the 'PHYSICAL' memory limit. Current usage: " +
         binary_prefix(usage.rss_bytes) + "B of " + binary_prefix(limit_bytes) +
         "B physical memory used; " + binary_prefix(usage.vmem_bytes) + "B of " +
         binary_prefix(vmem_limit) +
         "B virtual memory used. Killing container.\nDump of the process-tree for " +
         container_id + " :\n" + dump;
}

} // namespace tony::metrics
