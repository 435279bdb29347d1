#pragma once

// YARN-DTF's ytf-submit command line (the "TensorFlow on YARN" design and
// its APPENDIX), as a job_draft:
//
//   ytf-submit [OPTIONS] -r <cluster_requirement> <task_command>
//
// -r ps:2,worker:4 declares the task types; -c/-m give vcores and memory in
// the general (4), job-level (worker:4) and task-level (worker[0]:4) forms;
// -s ships a script named by DTF_TASK_SCRIPT; -i/-o set DTF_INPUT_PATH and
// DTF_OUTPUT_PATH; -t adds the TensorBoard sidecar on the output path;
// --client runs one more task, client:0, on the submitting machine.

#include <map>
#include <string>
#include <vector>

#include "compat/job_draft.hpp"

namespace tony {

struct ytf_args {
  std::string cluster_requirement;
  std::vector<std::string> task_vcores;
  std::vector<std::string> task_memory;
  std::string input;
  std::string output;
  std::string script;
  bool tensorboard = false;
  std::string docker_image;
  std::string queue;
  std::string name;
  bool client = false;
  std::string task_command;
};

/// YARN-DTF's defaults, which differ from job.toml's.
constexpr int64_t ytf_default_memory_mb = 8192;
constexpr int64_t ytf_default_vcores = 1;

struct ytf_job {
  job_draft draft;
  /// --client: client:0's command and what its environment adds to the
  /// submitting shell's (DTF_TASK_SCRIPT names the local script).
  bool client = false;
  std::string client_command;
  std::map<std::string, std::string> client_env;
};

/// The job `args` describe; relative paths are relative to `cwd`.
ytf_job translate_ytf(const ytf_args& args, const std::string& cwd);

} // namespace tony
