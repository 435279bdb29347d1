#pragma once

// The lifecycle monitor: the job's state machine and its policies. It spawns
// and supervises the rm_heartbeater and the container_launcher, sets the
// registry's expectations, supervises executors (down messages, heartbeats)
// and containers (exit statuses), and decides SUCCEEDED, FAILED or KILLED.
//
//   NEW ─rm_ready─▶ ALLOCATING ─all granted─▶ REGISTERING ─barrier─▶ RUNNING
//    │                 │                          │                    │
//    │                 └──────── failure, timeout, kill ───────────────┤
//    ▼                                                                 ▼
//  FAILED (unsatisfiable)            FINISHING: stop executors, stop containers,
//                                    unregister ─▶ SUCCEEDED | FAILED | KILLED
//
// A failure with attempts left restarts every task in a new attempt instead
// of finishing (doc/lifecycle.md has every rule).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/executor.hpp"
#include "actors/registry.hpp"
#include "config/job_spec.hpp"
#include "messages/atoms.hpp"
#include "messages/types.hpp"
#include "runtime/nm_client.hpp"
#include "runtime/rm_client.hpp"

namespace tony {

/// Deadline kinds carried by deadline_atom.
enum class deadline_kind : int32_t {
  allocation = 1,
  registration = 2,
  job = 3,
  stop_grace = 4,
  container_reasons = 5,
};

using lifecycle_monitor_actor = caf::typed_actor<
    // from the rm_heartbeater
    caf::reacts_to<rm_ready_atom, rm_registration>,
    caf::reacts_to<rm_error_atom, std::string>,
    caf::reacts_to<allocated_atom, std::vector<container>>,
    caf::reacts_to<completed_atom, std::vector<container_completion>>,
    // from the container_launcher
    caf::reacts_to<launched_atom, task_id, int32_t, container>,
    caf::reacts_to<launch_failed_atom, task_id, int32_t, container, std::string>,
    // from the registry
    caf::reacts_to<registered_atom, executor_hello, executor_actor>,
    caf::reacts_to<barrier_atom, int32_t>,
    caf::reacts_to<heartbeat_atom, task_id, int32_t>,
    caf::replies_to<exit_atom, task_exit>::with<bool>,
    // from clients (through the registry or the AM's facade)
    caf::replies_to<status_atom>::with<job_status>,
    caf::replies_to<wait_atom>::with<job_status>, caf::reacts_to<kill_atom, std::string>,
    // its own timers
    caf::reacts_to<deadline_atom, int32_t, int32_t>, caf::reacts_to<tick_atom>>;

/// Builds the launch context of an executor for a task in a container. Each
/// backend has its own (runtime/launch_context.hpp).
using launch_factory =
    std::function<launch_spec(const task_id&, int32_t attempt, const container&)>;

struct am_timing {
  int64_t allocate_fast_ms = 100;      // allocate interval while asks are pending
  int64_t allocate_slow_ms = 1000;     // allocate interval when steady
  int64_t rpc_timeout_ms = 10000;      // any request to the RM or an NM
  int64_t rm_failure_limit_ms = 30000; // RM unreachable this long -> FAILED
  /// A failed job waits at most this long before its final status for YARN's
  /// reason of a container whose task a signal ended (the NodeManager kills
  /// a container over its memory limit before the RM reports why).
  int64_t container_reason_wait_ms = 3000;
};

struct monitor_config {
  job_spec job;
  std::string app_id;
  am_registration am; // host, RPC port, tracking URL reported to the RM
  am_timing timing;
  /// Where a container's logs are (a directory or URL), for the status.
  std::function<std::string(const container&)> log_dir_of;
  /// Optional: gets the job's snapshot (what status_atom answers) after
  /// every message that may have changed it; the event log finds what did
  /// (runtime/history/event_log.hpp). Runs in the monitor's context: it must
  /// be quick and must not wait for actors.
  std::function<void(const job_status&)> on_change;
};

lifecycle_monitor_actor spawn_lifecycle_monitor(caf::actor_system& sys,
                                                monitor_config cfg,
                                                registry_actor registry,
                                                rm_client_actor rm, nm_client_actor nm,
                                                launch_factory make_launch);

/// The plain-words reason for a YARN container exit status (-100 "the node
/// running it was lost", -104 "killed for exceeding its memory limit", ...).
std::string describe_container_exit(int32_t exit_status);

} // namespace tony
