#pragma once

// Turns a stream of job_status snapshots into the lines tony-submit prints:
// one per task state change, then the final outcome. Pure, so it is tested
// without a job.

#include <map>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony {

class status_printer {
public:
  /// Lines for what changed since the previous snapshot.
  std::vector<std::string> update(const job_status& st);

  /// The closing lines: outcome, diagnostics, where the logs are.
  static std::vector<std::string> summary(const job_status& st, const std::string& logs);

private:
  std::string job_state_;
  std::map<std::string, std::string> task_states_; // "worker:0" -> state
};

} // namespace tony
