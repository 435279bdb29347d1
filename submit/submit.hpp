#pragma once

// tony-submit's work after the job is loaded: start the job on its backend,
// follow it, and turn its outcome into the exit code.

#include <atomic>
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
  std::string hadoop_conf; // --hadoop-conf, else HADOOP_CONF_DIR, else [cluster]
  /// The directory holding tony-am and tony-executor (tony-submit's own).
  std::string bin_dir;
  /// Set (to the signal number) when the user interrupts tony-submit. The
  /// watcher that sets it must exist before any thread starts (main).
  const std::atomic<int>* interrupted = nullptr;
};

/// Runs `job` on the local backend and follows it to the end.
int submit_local(const job_spec& job, const submit_options& opts);

/// Submits `job` to YARN and follows it to the end (doc/operations.md).
int submit_yarn(const job_spec& job, const submit_options& opts);

/// tony-submit --kill APP_ID: kills a YARN application.
int kill_yarn_application(const std::string& app_id, const submit_options& opts);

/// tony-submit --status APP_ID: prints a YARN application's state and, while
/// it runs, its tasks.
int status_yarn_application(const std::string& app_id, const submit_options& opts);

} // namespace tony
