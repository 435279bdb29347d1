#pragma once

// What every executor's container gets, whatever the backend: the job's and
// the task type's environment, and the TONY_* variables the executor reads
// (doc/task-environment.md lists them). Backends add the command line and
// the resources (runtime/local, runtime/yarn).

#include <map>
#include <string>

#include "config/job_spec.hpp"
#include "messages/types.hpp"

namespace tony {

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
