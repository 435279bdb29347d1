#pragma once

// Every task's runs over the job, as the page draws them: when its
// container was asked for, granted, launched, when its executor registered,
// when the command ran and when it ended, for each container it had (a
// restart or a new job attempt is a new run). Built from the event log's
// task events, in the live AM as they are written and in tony-history as
// they are read, so both pages draw the same picture.
//
// Bounded: a task keeps its last `max_runs` runs (and counts the others).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony::history {

struct job_event;

/// One container of one task, from its ask to its end. A time is 0 when the
/// run never got there (or the log did not see it).
struct task_run {
  int32_t attempt = 0;
  int32_t restart = 0;
  std::string container_id;
  int64_t requested_ms = 0;
  int64_t allocated_ms = 0;
  int64_t launched_ms = 0;
  int64_t registered_ms = 0;
  int64_t running_ms = 0;
  int64_t finished_ms = 0;
  // The last state seen; FAILED for a run that was restarted.
  task_state state = task_state::requested;
  int32_t exit_code = 0;

  bool finished() const { return finished_ms > 0; }
};

struct task_runs {
  task_id task;
  std::vector<task_run> runs;
  int32_t dropped = 0; // older runs left out
};

class timeline {
public:
  explicit timeline(size_t max_runs = 16);

  /// Applies a task event (other events are ignored).
  void apply(const job_event& e);

  /// Every task seen, in the order it first appeared.
  const std::vector<task_runs>& tasks() const { return tasks_; }

  /// The earliest and latest time seen (0 when empty).
  int64_t first_ms() const { return first_ms_; }
  int64_t last_ms() const { return last_ms_; }

  /// The runs of `task`, or nullptr.
  const task_runs* find(const task_id& task) const;

private:
  task_run& current(task_runs& t, const task_status& st);

  size_t max_runs_;
  std::vector<task_runs> tasks_;
  std::map<task_id, size_t> index_;
  int64_t first_ms_ = 0;
  int64_t last_ms_ = 0;
};

} // namespace tony::history
