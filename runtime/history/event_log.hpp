#pragma once

// The job's event log: an append-only file of JSON lines the AM writes while
// the job runs (doc/tracking.md has the format). Each line is one event:
//
//   job_submitted   the AM is up: who, what, where (once, first)
//   job_state       the job's state, attempt or diagnostics changed
//   task_requested  task_allocated  task_launched  task_registered
//   task_started    task_finished   task_updated   a task changed
//   metrics         every task's resource use over the last interval
//                   (coarser than the AM's own series; runtime/metrics)
//   job_finished    the job ended (last)
//
// The AM does not decide events one by one: the lifecycle monitor hands every
// new snapshot of the job to the writer (monitor_config::on_change), and
// diff() names what changed. Task events carry the task's whole status and
// job events the job's, so replay() rebuilds exactly the table the live AM
// showed at each point.

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "messages/error.hpp"
#include "messages/types.hpp"

namespace tony::history {

struct job_event {
  int64_t time_ms = 0;
  std::string kind;
  /// job_* events: the job's fields (its task list stays empty).
  job_status job;
  /// task_* events: the task's status.
  task_status task;
  /// job_submitted: user, backend, framework, queue, job_file.
  std::map<std::string, std::string> info;
  /// job_submitted: instances per task type.
  std::map<std::string, int32_t> task_counts;
  /// job_submitted: the resolved job (job.json's object), when logged.
  std::string config_json;
  /// metrics: the interval the line covers, and per task ("worker:0") its
  /// values in metric_fields order over the interval (peak memory, mean
  /// CPU, mean GPU use, peak GPU memory).
  int64_t step_ms = 0;
  std::map<std::string, std::vector<double>> metrics;
};

/// The names of a metrics line's values, in order.
const std::vector<std::string>& metric_fields();

/// The task event for a task now in `state` ("RUNNING" -> "task_started").
std::string task_event_kind(task_state state);

/// The events that lead from `before` (nullptr: nothing seen yet) to `after`,
/// stamped `now_ms`. Empty when nothing changed.
std::vector<job_event> diff(const job_status* before, const job_status& after,
                            int64_t now_ms);

/// One line of the log, without the newline.
std::string to_json_line(const job_event& e);

expected<job_event> event_from_json(const std::string& line);

/// Every event of a log's text. A torn last line (the AM died mid-write) is
/// left out; any other bad line is an error naming its line number.
expected<std::vector<job_event>> parse_event_log(const std::string& text);

/// Applies one event to `st`.
void apply(job_status& st, const job_event& e);

/// The job as the events left it: the AM's last status.
job_status replay(const std::vector<job_event>& events);

/// Appends events to a file, one flushed line each. observe() may be called
/// from any thread.
class event_log_writer {
public:
  ~event_log_writer();

  /// Opens `path` for appending (creating it).
  static expected<std::unique_ptr<event_log_writer>> open(const std::string& path);

  /// Appends what changed since the last snapshot observed.
  void observe(const job_status& st);

  /// Appends one event as it is.
  void write(const job_event& e);

  const std::string& path() const { return path_; }

private:
  event_log_writer(std::string path, std::FILE* file);

  void append(const std::vector<job_event>& events);

  std::mutex mtx_;
  std::string path_;
  std::FILE* file_ = nullptr;
  std::optional<job_status> last_;
};

} // namespace tony::history
