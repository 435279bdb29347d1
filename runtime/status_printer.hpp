#pragma once

// What tony-submit prints while it follows a job. status_printer turns
// job_status snapshots into lines (one per change) and into a compact table
// of the tasks; status_view puts them on the terminal: on a terminal the
// table is rewritten in place, otherwise plain lines are appended, so logs
// and CI output stay readable. Pure apart from the stream, so tested without
// a job.

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony {

class status_printer {
public:
  /// Lines for what changed since the previous snapshot (at `now_ms`, wall
  /// clock; 0: no clock). A job of more than `max_task_lines` tasks gets
  /// progress lines ("allocated 1000/1000, registered 812/1000") at most
  /// every 2 s instead of a line per task, and a line for each task that
  /// fails. The job's final state comes after its tasks' last lines.
  std::vector<std::string> update(const job_status& st, int64_t now_ms = 0,
                                  size_t max_task_lines = 16);

  /// Where a job's tasks are: "allocated 1000/1000, registered 812/1000,
  /// running 0/1000" (and succeeded / failed once some ended).
  static std::string progress(const job_status& st);

  /// The closing lines: outcome, diagnostics, where the logs are (the job's
  /// and those of every task that did not succeed).
  static std::vector<std::string> summary(const job_status& st, const std::string& logs);

  /// The job's line and its task table at `now_ms`: one row per task, or
  /// one per task type when there are more than `max_rows` tasks.
  static std::vector<std::string> table(const job_status& st, int64_t now_ms,
                                        size_t max_rows = 16);

private:
  void task_lines(const job_status& st, bool per_task, std::vector<std::string>& lines);

  std::optional<tony::job_state> job_state_;
  int32_t attempt_ = 0;
  std::map<std::string, task_state> task_states_; // "worker:0" -> state
  std::string last_progress_;
  int64_t last_progress_ms_ = 0;
  void waiting_line(const job_status& st, bool changed, int64_t now_ms,
                    std::vector<std::string>& lines);
  int64_t allocating_since_ms_ = 0;
  std::string last_waiting_;
  int64_t last_waiting_ms_ = 0;
};

class status_view {
public:
  /// `live`: `out` is a terminal that understands ANSI cursor movement.
  status_view(std::ostream& out, bool live, bool quiet);

  /// Shows a new snapshot.
  void show(const job_status& st);

  /// A line of its own, printed above the table ("YARN: ... RUNNING").
  void note(const std::string& line);

  /// Prints the tracking URL once (the first non-empty one given).
  void tracking_url(const std::string& url);

  /// How show() tells that the job's TensorBoard is up: its address from a
  /// status (http::tensorboard_address), empty while it is not. Once it is,
  /// "TensorBoard: <tracking URL>tensorboard/" is printed, once.
  void tensorboard_probe(std::function<std::string(const job_status&)> probe);

  /// A line of a task's output (--follow), printed as it is above the table.
  void output(const std::string& line);

  /// The final table (on a terminal) or the last changes; the table then
  /// stays on the screen and later lines go below it.
  void leave(const job_status& st);

  /// leave(), then the summary.
  void finish(const job_status& st, const std::string& logs);

  /// True if stdout is a terminal worth drawing on (not TERM=dumb).
  static bool stdout_is_terminal();

private:
  void erase_table();
  void draw_table(const job_status& st);

  std::ostream& out_;
  bool live_;
  bool quiet_;
  status_printer printer_;
  size_t drawn_ = 0; // table lines currently on the screen
  bool url_shown_ = false;
  std::string url_;
  std::function<std::string(const job_status&)> tensorboard_probe_;
  bool tensorboard_shown_ = false;
};

} // namespace tony
