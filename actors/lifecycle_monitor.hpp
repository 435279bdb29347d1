#pragma once

// The lifecycle monitor: the actor that interprets the job's lifecycle core
// (core/lifecycle.hpp). Every message it gets becomes an event of the core;
// every command the core answers becomes a message to the registry, the
// rm_heartbeater, the container_launcher or an executor, a timer, or a log
// line. It holds no policy of its own: what it keeps are the handles the
// core cannot hold (executors by container, clients waiting for the end).
//
//   registry ─registered/exit/heartbeat/barrier─┐      ┌─expect/reopen──▶ registry
//   rm_heartbeater ─rm_ready/allocated/completed┼─▶ monitor ─ask/release/finish─▶
//   rm_heartbeater container_launcher ─launched/launch_failed──┤  (core)
//   ├─launch/stop_all──▶ container_launcher executors
//   ─down──────────────────────────────┘      └─stop──────────────▶ executors
//
// It is spawned idle; `start` hands it the actors it drives (spawned with
// the monitor as their supervisor or listener, actors/am_actors.hpp), and the
// job begins. At the end it answers everyone waiting (`wait`); `linger`
// answers once every waiter said `bye` (it has the final status) or is gone
// (its connection dropped), so the AM process can exit without cutting a
// client off and without waiting for one that left.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/container_launcher.hpp"
#include "actors/registry.hpp"
#include "actors/rm_heartbeater.hpp"
#include "config/job_spec.hpp"
#include "messages/atoms.hpp"
#include "messages/types.hpp"

namespace tony {

using lifecycle_monitor_actor = registry_supervisor_actor::
    extend_with<allocation_listener_actor, launch_listener_actor>::extend<
        caf::reacts_to<start_atom, registry_actor, rm_heartbeater_actor,
                       container_launcher_actor>,
        caf::reacts_to<kill_atom, std::string>, caf::reacts_to<timer_atom, uint64_t>,
        caf::replies_to<linger_atom>::with<bool>>;

struct monitor_config {
  job_spec job;
  std::string app_id;
  std::string tracking_url; // reported to the RM and shown in the status
  am_timing timing;
  /// Nodes and racks every ask names (YARN node-local placement).
  std::vector<std::string> nodes;
  std::vector<std::string> racks;
  /// Capped types go as SchedulingRequests (core::lifecycle_config).
  bool placement_constraints = false;
  bool placement_processor = false;
  /// Where a container's logs are (a directory or URL), for the status.
  std::function<std::string(const container&)> log_dir_of;
  /// A later AM attempt (YARN's attempt number) and the job as the AM
  /// before saved it: core::lifecycle_config's am_attempt and resume.
  int32_t am_attempt = 1;
  std::optional<job_status> resume;
  /// Optional: gets the job's snapshot (what status_atom answers) after
  /// every message that may have changed it; the event log finds what did
  /// (runtime/history/event_log.hpp). Runs in the monitor's context: it must
  /// be quick and must not wait for actors. Not called once the RM no
  /// longer knows this attempt and another attempt takes the job over
  /// (core::lifecycle::leaves_job_to_next_attempt): that end is not the job's.
  std::function<void(const job_status&)> on_change;
  /// Optional: gets every sample of a task's resource use that heartbeats
  /// carry (the AM's metrics, runtime/history/job_record.hpp), its time_ms
  /// the AM's clock when it arrived, whatever the node's clock says. Same
  /// rules.
  std::function<void(const task_id&, int32_t attempt, const task_sample&)> on_sample;
  /// Optional: called once, before waiters get the final status, when the
  /// job ended because the RM no longer knows this AM attempt (the AM then
  /// exits at once, without lingering). Same rules.
  std::function<void()> on_attempt_gone;
  /// Optional: gets the job's final snapshot once, just before the monitor
  /// tells the RM that the job ended, so that what a client may read as
  /// soon as it sees the application finish (the event log in the history
  /// dir) is there by then. Runs in the monitor's context and may take as
  /// long as a filesystem call: the RM hears of the end after it.
  std::function<void(const job_status&)> before_unregister;
};

lifecycle_monitor_actor spawn_lifecycle_monitor(caf::actor_system& sys,
                                                monitor_config cfg);

/// The plain-words reason for a YARN container exit status (-100 "the node
/// running it was lost", -104 "killed for exceeding its memory limit", ...).
std::string describe_container_exit(int32_t exit_status);

} // namespace tony
