#pragma once

// The AM's facade: it owns the actor system and the AM's actors (spawned and
// wired by actors/am_actors.hpp), publishes the registry, and is how
// everything that is not an actor — tony-am's main, its signal handler, the
// tracking page's HTTP threads — reaches the job: status(), kill(), wait().
// Only the facade sends the actors messages.
//
//   open(): monitor + registry spawned, registry published (with the spec
//           channel behind the same gate)
//   start(): heartbeater + launcher spawned, the job begins
//   status() / kill() / wait() / linger() / publish_tokens()   from any thread
//   ~application_master(): actors stopped, actor system ended

#include <chrono>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "actors/am_actors.hpp"
#include "messages/error.hpp"
#include "messages/types.hpp"
#include "runtime/gate/caf_bridge.hpp"

namespace tony {

class application_master {
public:
  /// An actor system with the middleman and tony's message types.
  application_master();

  /// Stops the actors and the adapters, then ends the actor system.
  ~application_master();

  application_master(const application_master&) = delete;
  application_master& operator=(const application_master&) = delete;

  caf::actor_system& system() { return *sys_; }

  /// Spawns the monitor and the registry and publishes the registry at
  /// `bind_address` on any port, behind the gate that admits only peers
  /// proving the registry's job secret (runtime/gate); the port, or why it
  /// cannot listen. Executors that ask the gate for the spec channel get
  /// their cluster specs there (registry.hpp) unless `spec_channel` is false
  /// or the channel cannot start (then the registry sends them over BASP).
  expected<uint16_t> open(monitor_config monitor, registry_config registry,
                          const std::string& bind_address, bool spec_channel = true);

  /// Closes the registry's port to new peers; what its gate and the spec
  /// channel did so far.
  std::string close_door();

  /// Spawns the rest and starts the job. Requires open().
  void start(am_drivers drivers);

  /// The job now, waiting at most `timeout` (any thread).
  expected<job_status> status(std::chrono::milliseconds timeout);

  /// Kills the job with `reason` (any thread, also a signal watcher's).
  void kill(std::string reason);

  /// Hands the job's new delegation tokens (serialized Hadoop credentials)
  /// to the registry, which seals them for every executor (any thread).
  /// Requires open().
  void publish_tokens(std::string credentials);

  /// Blocks until the job's end is reported; its final status.
  job_status wait();

  /// Blocks until every waiter for the end (clients and wait() above) has
  /// its final status (it said bye), at most `limit`.
  void linger(std::chrono::milliseconds limit);

private:
  std::unique_ptr<caf::actor_system_config> cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  am_actors actors_;
  std::shared_ptr<gate::spec_channel> specs_;
  std::unique_ptr<gate::published_gate> door_;
  monitor_config monitor_cfg_;
  rm_client_actor rm_;
  nm_client_actor nm_;
};

} // namespace tony
