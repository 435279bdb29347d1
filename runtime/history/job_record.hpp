#pragma once

// Everything the pages show beyond the status: the timeline of every task's
// runs and the tasks' resource use over time. Two ways to one record:
//
//   live      the AM's job_recorder, fed by the lifecycle monitor (every
//             new status and every sample a heartbeat carries); it diffs
//             the statuses into the event log's lines, writes them and the
//             coarser `metrics` lines, and keeps the timeline and the
//             bounded metrics for the tracking page (thread-safe)
//   replayed  build_record() over an event log's events, for tony-history
//
// A record also keeps what job_submitted said (user, queue, the resolved
// job), which tony-history lists, filters and shows.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "messages/types.hpp"
#include "runtime/history/event_log.hpp"
#include "runtime/history/timeline.hpp"
#include "runtime/metrics/metrics_store.hpp"

namespace tony::history {

/// A job as the pages show it.
struct job_record {
  job_status status;
  timeline runs;
  metrics::metrics_store metrics;
  /// job_submitted's `submitted` fields (user, backend, framework, queue,
  /// job_file) and the resolved job (job.json's JSON), when logged.
  std::map<std::string, std::string> info;
  std::string config_json;
  /// A replayed record: the log's metrics step (each series has its own).
  int64_t metrics_step_ms = 0;
};

/// The record an event log's events leave.
job_record build_record(const std::vector<job_event>& events);

/// The AM's side: observes the job, writes the event log, keeps the record.
class job_recorder {
public:
  /// `log` may be null (no event log). `tasks` is the job's task count
  /// (the metrics' budget is shared among them).
  job_recorder(std::shared_ptr<event_log_writer> log, size_t tasks);

  /// Writes `e` as it is (job_submitted) and keeps what it says.
  void submitted(const job_event& e);

  /// A new status from the lifecycle monitor: its changes go to the log and
  /// the timeline. Any thread.
  void observe(const job_status& st);

  /// A sample from a task's heartbeat. Any thread.
  void sample(const task_id& task, int32_t attempt, const task_sample& s);

  /// Runs `f` on the record (its status is the last observed) under the
  /// recorder's lock: keep it short, the monitor waits meanwhile.
  void read(const std::function<void(const job_record&)>& f) const;

  /// The metrics line's interval (metrics::log_step_ms of the task count).
  int64_t log_step_ms() const { return log_step_ms_; }

private:
  // REQUIRES: mtx_ is held.
  void write(const job_event& e);
  void flush_metrics(int64_t now_ms);

  struct interval {
    double rss_peak = 0;
    double cpu_sum = 0;
    double gpu_util_sum = 0;
    double gpu_used_peak = 0;
    int samples = 0;
  };

  mutable std::mutex mtx_;
  std::shared_ptr<event_log_writer> log_;
  std::optional<job_status> last_;
  job_record record_;
  std::map<task_id, interval> pending_;
  int64_t log_step_ms_;
  int64_t last_flush_ms_ = 0;
};

} // namespace tony::history
