#pragma once

// The AM's memory of its tasks' samples, bounded whatever the job's size or
// length (doc/tracking.md, "Metrics"):
//
//  - each task keeps one series of points; a point covers `step` of time:
//    the peak of memory and GPU memory, the mean of CPU and GPU use of the
//    samples that fell into it;
//  - a series holds at most `capacity` points; when it is full, neighbours
//    are merged pairwise and the step doubles, so a series always covers
//    the task's whole run at between capacity/2 and capacity points;
//  - the capacity is the store's budget divided among the tasks (at most
//    480 and at least 32 points a task): 8 MiB by default, so 1,000 tasks
//    keep about 350 points each and 10,000 tasks 34 (about 8 MiB).
//
// The latest full sample (every GPU) and the peak memory are kept beside
// the series. tony-history fills the same store from the event log's
// coarser `metrics` lines. Not thread-safe: its owner locks.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony::metrics {

/// One task's series as pages and /api/job read it. Values are per point:
/// time_ms is the point's start; rss and GPU memory peaks in bytes; cpu in
/// cores; gpu_util in percent (mean over the task's GPUs; empty series when
/// it never had one).
struct task_series {
  int64_t step_ms = 0;
  std::vector<int64_t> time_ms;
  std::vector<int64_t> rss_bytes;
  std::vector<float> cpu_cores;
  std::vector<float> gpu_util;
  std::vector<int64_t> gpu_used_bytes;
  task_sample latest;
  int64_t peak_rss_bytes = 0;
  int32_t gpus = 0; // most GPUs seen in one sample
  bool has_gpus() const { return gpus > 0; }
};

class metrics_store {
public:
  /// `budget_bytes` is shared by every task's points; `first_step_ms` is
  /// the step of a new series (the executors' sampling interval).
  explicit metrics_store(size_t budget_bytes = 8u << 20, int64_t first_step_ms = 1000);

  /// Tells the store how many tasks share the budget (the job's task
  /// count); shrinks series already longer than the new capacity.
  void expect_tasks(size_t count);

  /// Adds a sample (ignored when it has no time).
  void add(const task_id& task, const task_sample& s);

  /// One task's series; an empty series (no points) when nothing came.
  task_series series(const task_id& task) const;

  /// One task's latest sample, peak memory and GPU count, without its
  /// points (cheap: for tables of many tasks). False when nothing came.
  bool summary(const task_id& task, task_sample& latest, int64_t& peak_rss,
               int32_t& gpus) const;

  /// Every task that sent samples.
  std::vector<task_id> tasks() const;

  /// Points a task may hold now.
  size_t capacity() const { return capacity_; }

  /// Bytes the points take (for the bound's test).
  size_t bytes() const;

  /// Per-point size, for the budget.
  static constexpr size_t point_bytes = 24;

private:
  struct point {
    uint32_t offset_ms = 0; // from the series' base
    uint16_t count = 0;     // samples merged
    uint16_t gpu_count = 0; // of them with GPUs
    float rss_mb = 0;       // peak
    float cpu = 0;          // sum (mean = cpu / count)
    float gpu_util = 0;     // sum over samples with GPUs
    float gpu_mem_mb = 0;   // peak
  };
  static_assert(sizeof(point) == point_bytes, "points are budgeted at 24 bytes");

  struct entry {
    int64_t base_ms = 0;
    int64_t step_ms = 0;
    std::vector<point> points;
    task_sample latest;
    int64_t peak_rss = 0;
    int32_t gpus = 0;
  };

  void compact(entry& e) const;

  size_t budget_;
  int64_t first_step_;
  size_t capacity_ = 480;
  std::map<task_id, entry> entries_;
};

/// The event log's step for `tasks` tasks: 5 s, or 100 ms a task beyond
/// 50 tasks (1,000 tasks: 100 s), so a line of every task (about 45 bytes
/// a task) adds at most about 1.6 MB an hour whatever the job's size.
int64_t log_step_ms(size_t tasks);

} // namespace tony::metrics
