#pragma once

// The ApplicationMaster process: loads the resolved job, publishes the
// registry, builds the backend's adapters, spawns the lifecycle monitor and
// waits for the job's end. tony-am's main is a thin shell around run_am.

#include <string>

namespace tony {

struct am_options {
  std::string job_json; // the resolved job spec written by tony-submit
  std::string backend;  // local | yarn
  std::string app_id;
  std::string work_dir;      // local: the job dir; yarn: the AM container dir
  std::string host;          // the address executors and clients use
  std::string executor_path; // local: the tony-executor binary
};

/// Exit codes of tony-am (doc/operations.md): 0 job SUCCEEDED, 1 FAILED or
/// KILLED, 2 bad job spec, 3 infrastructure (cannot publish, no RM).
int run_am(const am_options& opts);

} // namespace tony
