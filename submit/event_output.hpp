#pragma once

// tony-submit --output json: the job's life as JSON lines on stdout, for
// programs (the Python API, workflow engines) that must not parse the human
// output. One object per line, each with "event" and "time_ms":
//
//   submitted    {"app_id", "backend", "name", "tasks", "job_dir" | "staging"}
//   yarn_state   {"app_id", "state", "tracking_url"}          (yarn backend)
//   job_state, task_requested ... task_finished, job_finished
//                the event log's lines (doc/tracking.md), as the AM's status
//                changes
//   finished     {"app_id", "state", "diagnostics", "exit_code",
//                 "failed_tasks": [{"task", "state", "exit_code",
//                 "diagnostics", "log_dir", "stderr_tail"}], "status"}
//                always the last line when the job was followed to its end
//
// The format is part of the CLI's contract (doc/operations.md); fields are
// only ever added.

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "messages/types.hpp"

namespace tony {

class event_output {
public:
  explicit event_output(std::ostream& out)
      : out_(out) {
    // nop
  }

  /// The job was submitted. `fields` are added to the line.
  void submitted(const std::string& app_id, const std::string& backend,
                 const std::string& name, int32_t tasks,
                 const std::map<std::string, std::string>& fields);

  /// A new snapshot of the AM's status: one line per change since the last.
  void show(const job_status& st);

  /// The YARN application's state changed (yarn backend).
  void yarn_state(const std::string& app_id, const std::string& state,
                  const std::string& tracking_url);

  /// The last line. `st` is the final status (or the last one known).
  void finished(const job_status& st, int exit_code);

  /// The failed tasks of `st` with the tails of their stderr: read from the
  /// log file where it is a local path, else from the task's diagnostics.
  static nlohmann::json failed_tasks(const job_status& st, size_t tail_bytes = 4096);

private:
  void emit(nlohmann::json j);

  std::ostream& out_;
  std::optional<job_status> last_;
};

} // namespace tony
