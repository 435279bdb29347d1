#pragma once

// tony-submit's work after the job is loaded: start the job on its backend,
// follow it, and turn its outcome into the exit code.

#include <string>

#include "config/job_spec.hpp"

namespace tony {

/// tony-submit's exit codes (doc/operations.md).
enum submit_exit : int {
  exit_succeeded = 0,
  exit_failed = 1, // the job FAILED or was KILLED (also after Ctrl-C)
  exit_usage = 2,  // bad command line or job.toml
  exit_infra = 3,  // the AM could not start, the RM is unreachable, ...
};

struct submit_options {
  bool detach = false;
  bool quiet = false;
  std::string hadoop_conf;
  /// The directory holding tony-am and tony-executor (tony-submit's own).
  std::string bin_dir;
};

/// Runs `job` on the local backend and follows it to the end.
int submit_local(const job_spec& job, const submit_options& opts);

} // namespace tony
