#include "runtime/metrics/metrics_store.hpp"

#include <algorithm>

namespace tony::metrics {

namespace {

constexpr size_t max_points = 480;
constexpr size_t min_points = 32;
constexpr double mib = 1024.0 * 1024.0;

// Merges `x` into `into` (peaks stay peaks, sums add up).
template <class Point>
void merge(Point& into, const Point& x) {
  into.count = static_cast<uint16_t>(std::min(65535, into.count + x.count));
  into.gpu_count = static_cast<uint16_t>(std::min(65535, into.gpu_count + x.gpu_count));
  into.rss_mb = std::max(into.rss_mb, x.rss_mb);
  into.cpu += x.cpu;
  into.gpu_util += x.gpu_util;
  into.gpu_mem_mb = std::max(into.gpu_mem_mb, x.gpu_mem_mb);
}

} // namespace

metrics_store::metrics_store(size_t budget_bytes, int64_t first_step_ms)
    : budget_(budget_bytes)
    , first_step_(std::max<int64_t>(first_step_ms, 1)) {
  // nop
}

void metrics_store::expect_tasks(size_t count) {
  auto per_task = budget_ / std::max<size_t>(count, 1) / point_bytes;
  capacity_ = std::clamp(per_task, min_points, max_points);
  for (auto& [_, e] : entries_)
    while (e.points.size() > capacity_)
      compact(e);
}

void metrics_store::compact(entry& e) const {
  e.step_ms *= 2;
  std::vector<point> merged;
  merged.reserve(capacity_); // one allocation of the bound, kept
  for (auto& p : e.points) {
    auto bucket = static_cast<uint32_t>(p.offset_ms / e.step_ms * e.step_ms);
    if (!merged.empty() && merged.back().offset_ms == bucket) {
      merge(merged.back(), p);
    } else {
      merged.push_back(p);
      merged.back().offset_ms = bucket;
    }
  }
  e.points = std::move(merged);
}

void metrics_store::add(const task_id& task, const task_sample& s) {
  if (s.time_ms <= 0)
    return;
  auto& e = entries_[task];
  if (e.step_ms == 0) {
    e.base_ms = s.time_ms;
    e.step_ms = first_step_;
    e.points.reserve(capacity_);
  }
  if (s.time_ms < e.base_ms)
    return; // older than the series: a clock step back
  e.latest = s;
  e.peak_rss = std::max(e.peak_rss, s.rss_bytes);
  e.gpus = std::max(e.gpus, static_cast<int32_t>(s.gpus.size()));
  point p;
  auto offset = std::min<int64_t>(s.time_ms - e.base_ms, UINT32_MAX);
  p.offset_ms = static_cast<uint32_t>(offset / e.step_ms * e.step_ms);
  p.count = 1;
  p.rss_mb = static_cast<float>(static_cast<double>(s.rss_bytes) / mib);
  p.cpu = s.cpu_cores;
  if (!s.gpus.empty()) {
    p.gpu_count = 1;
    double util = 0, used = 0;
    for (auto& g : s.gpus) {
      util += g.util_pct;
      used += static_cast<double>(g.used_bytes);
    }
    p.gpu_util = static_cast<float>(util / static_cast<double>(s.gpus.size()));
    p.gpu_mem_mb = static_cast<float>(used / mib);
  }
  if (!e.points.empty() && e.points.back().offset_ms == p.offset_ms)
    merge(e.points.back(), p);
  else
    e.points.push_back(p);
  while (e.points.size() > capacity_)
    compact(e);
}

task_series metrics_store::series(const task_id& task) const {
  task_series out;
  auto i = entries_.find(task);
  if (i == entries_.end())
    return out;
  auto& e = i->second;
  out.step_ms = e.step_ms;
  out.latest = e.latest;
  out.peak_rss_bytes = e.peak_rss;
  out.gpus = e.gpus;
  for (auto& p : e.points) {
    out.time_ms.push_back(e.base_ms + p.offset_ms);
    out.rss_bytes.push_back(static_cast<int64_t>(static_cast<double>(p.rss_mb) * mib));
    out.cpu_cores.push_back(p.count > 0 ? p.cpu / p.count : 0.0f);
    if (e.gpus > 0) {
      out.gpu_util.push_back(p.gpu_count > 0 ? p.gpu_util / p.gpu_count : 0.0f);
      out.gpu_used_bytes.push_back(
          static_cast<int64_t>(static_cast<double>(p.gpu_mem_mb) * mib));
    }
  }
  return out;
}

bool metrics_store::summary(const task_id& task, task_sample& latest, int64_t& peak_rss,
                            int32_t& gpus) const {
  auto i = entries_.find(task);
  if (i == entries_.end())
    return false;
  latest = i->second.latest;
  peak_rss = i->second.peak_rss;
  gpus = i->second.gpus;
  return true;
}

std::vector<task_id> metrics_store::tasks() const {
  std::vector<task_id> out;
  for (auto& [id, _] : entries_)
    out.push_back(id);
  return out;
}

size_t metrics_store::bytes() const {
  size_t n = 0;
  for (auto& [_, e] : entries_)
    n += e.points.size() * point_bytes;
  return n;
}

int64_t log_step_ms(size_t tasks) {
  return std::max<int64_t>(5000, static_cast<int64_t>(tasks) * 100);
}

} // namespace tony::metrics
