#pragma once

// The states of a job and of its tasks, as they cross actor and process
// boundaries (job_status, task_status) and as clients show them. Their
// names ("RUNNING", ...) are those of /api/job, the event log and
// doc/lifecycle.md; on the wire between tony's processes they travel as
// enums, so no component compares them as strings.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string_view>

namespace tony {

enum class job_state : uint8_t {
  fresh,       // "NEW": submitted; the AM waits for the resource manager
  allocating,  // asks are out
  registering, // every container granted; executors register
  running,     // the barrier released: every task has the cluster spec
  succeeded,
  failed,
  killed,
  lost, // a client's view only: the AM ended without a final status
};

/// "NEW", "ALLOCATING", ...
const char* to_string(job_state x);

std::ostream& operator<<(std::ostream& out, job_state x);

/// The state named `name` (as to_string writes it); nothing for any other.
std::optional<job_state> job_state_named(std::string_view name);

/// Succeeded, failed or killed: the AM's final word.
bool is_final(job_state x);

enum class task_state : uint8_t {
  requested,  // a container is asked for
  allocated,  // a container is granted; the launch is under way
  launched,   // the container runs its executor
  registered, // the executor registered (holds the task's port)
  running,    // the command runs
  restarting, // failed; a new container is asked after the backoff
  succeeded,
  failed,
  killed,
  lost, // the executor or its container vanished
};

/// "REQUESTED", "ALLOCATED", ...
const char* to_string(task_state x);

std::ostream& operator<<(std::ostream& out, task_state x);

/// The state named `name` (as to_string writes it); nothing for any other.
std::optional<task_state> task_state_named(std::string_view name);

/// Succeeded, failed, killed or lost.
bool is_final(task_state x);

/// Failed or lost: the task ended with something to look at.
bool is_failure(task_state x);

} // namespace tony
