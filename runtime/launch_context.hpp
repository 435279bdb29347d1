#pragma once

// What every executor's container gets, whatever the backend: the job's and
// the task type's environment, and the TONY_* variables the executor reads
// (doc/task-environment.md lists them). Backends add the command line and
// the resources (runtime/local, runtime/yarn).

#include <map>
#include <string>
#include <vector>

#include "config/job_spec.hpp"
#include "messages/types.hpp"

namespace tony {

/// Variables of the executor's container beyond the task's own (private to
/// the executor: it reads them, the task does not see them).
namespace launch_env {
/// [code] python_binary_path, when set.
constexpr const char* python_binary_path = "TONY_PYTHON_BINARY_PATH";
/// The names of the files and archives shipped to this task, '/'-separated
/// (a name holds no '/').
constexpr const char* shipped_files = "TONY_SHIPPED_FILES";
} // namespace launch_env

/// The files and archives a task of `type` gets: the job's, then its type's.
std::vector<shipped_file> shipped_files_of(const job_spec& job, const std::string& type);

/// launch_env::shipped_files' value as names.
std::vector<std::string> split_shipped_names(const std::string& value);

struct am_endpoint {
  std::string app_id;
  std::string host; // where executors reach the registry
  int32_t port = 0;
  std::string secret;
};

/// The container environment of the executor of `task` in `attempt`.
std::map<std::string, std::string> executor_env(const job_spec& job, const task_id& task,
                                                int32_t attempt, const am_endpoint& am);

/// Variables the executor consumes; it does not pass these to the task.
bool is_executor_private(const std::string& name);

} // namespace tony
