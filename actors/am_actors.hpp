#pragma once

// The AM's actors, spawned and wired in one place, in the order their
// dependencies allow:
//
//   spawn_am:  lifecycle_monitor (idle) ◀── registry (its supervisor given)
//                 the caller publishes the registry: its port is the AM's
//                 RPC port, which executors' launch contexts carry
//   start_am:  rm_heartbeater ──▶ monitor      container_launcher ──▶ monitor
//              monitor ◀── start(registry, heartbeater, launcher): the job begins
//
//   lifecycle_monitor ◀── registry ◀── executors, clients (remote)
//          ▲  ◀────────── rm_heartbeater ◀──▶ rm_client (adapter)
//          └───────────── container_launcher ◀──▶ nm_client (adapter)
//
// The AM process (am/application_master.hpp) and the actor harness
// both use it, so the harness runs the wiring the product runs.

#include <caf/actor_system.hpp>

#include "actors/container_launcher.hpp"
#include "actors/lifecycle_monitor.hpp"
#include "actors/registry.hpp"
#include "actors/rm_heartbeater.hpp"
#include "runtime/nm_client.hpp"
#include "runtime/rm_client.hpp"

namespace tony {

struct am_actors {
  lifecycle_monitor_actor monitor;
  registry_actor registry;
  rm_heartbeater_actor heartbeater;
  container_launcher_actor launcher;
};

/// What the rest of the AM needs; known once the registry is published.
struct am_drivers {
  rm_client_actor rm;
  nm_client_actor nm;
  launch_factory make_launch;
  am_registration registration; // host, RPC port (the registry's), tracking URL
};

/// Spawns the actors executors and clients reach: the lifecycle monitor,
/// idle until start_am, and the registry with the monitor as supervisor.
am_actors spawn_am(caf::actor_system& sys, monitor_config monitor,
                   registry_config registry);

/// Spawns the rm_heartbeater and the container_launcher with the monitor as
/// their listener, hands the monitor its actors, and so starts the job.
void start_am(caf::actor_system& sys, am_actors& am, am_drivers drivers,
              const am_timing& timing);

/// Ends every actor of `am` (the adapters are the caller's).
void stop_am(const am_actors& am);

} // namespace tony
