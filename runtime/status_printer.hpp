#pragma once

// What tony-submit prints while it follows a job. status_printer turns
// job_status snapshots into lines (one per change) and into a compact table
// of the tasks; status_view puts them on the terminal: on a terminal the
// table is rewritten in place, otherwise plain lines are appended, so logs
// and CI output stay readable. Pure apart from the stream, so tested without
// a job.

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony {

class status_printer {
public:
  /// Lines for what changed since the previous snapshot.
  std::vector<std::string> update(const job_status& st);

  /// The closing lines: outcome, diagnostics, where the logs are (the job's
  /// and those of every task that did not succeed).
  static std::vector<std::string> summary(const job_status& st, const std::string& logs);

  /// The job's line and its task table at `now_ms`: one row per task, or
  /// one per task type when there are more than `max_rows` tasks.
  static std::vector<std::string> table(const job_status& st, int64_t now_ms,
                                        size_t max_rows = 16);

private:
  std::string job_state_;
  int32_t attempt_ = 0;
  std::map<std::string, std::string> task_states_; // "worker:0" -> state
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
};

} // namespace tony
