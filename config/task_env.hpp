#pragma once

// The task environment: the contract between tony and user code (see
// doc/task-environment.md). Rendered by the executor once it has the cluster
// spec; a pure function so it is tested for every cluster shape.

#include <map>
#include <string>

#include "messages/types.hpp"

namespace tony {

struct task_env_input {
  std::string framework;  // tensorflow | pytorch | horovod | standalone
  std::string app_id;
  task_id task;
  int32_t attempt = 0;
  cluster_map cluster;  // every task type -> "host:port" by index
};

/// The variables tony sets for the task (TonY, YARN-DTF, TF_CONFIG, PyTorch,
/// Horovod names), on top of the container environment.
std::map<std::string, std::string> render_task_env(const task_env_input& in);

} // namespace tony
