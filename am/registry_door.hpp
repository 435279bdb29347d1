#pragma once

// How tony-am puts its registry behind the gate: one port, two services.
// application_master::open() publishes with this plan, and the registry
// benchmark (bench/registry_bench.cpp) measures exactly this plan.
//
//   executor ──gate proof, purpose BASP──▶ CAF ──▶ registry (register, heartbeats...)
//   executor ──gate proof, purpose spec channel──▶ spec_channel ◀──publish── registry
//
// The spec channel (runtime/gate/spec_channel.hpp) carries every cluster
// spec to the executors that read it, from one buffer, so the AM's memory
// stays bounded at 10,000 executors (bench/notes.md); the registry sends
// over BASP only to executors that do not read it (registry.hpp).

#include <cstdint>
#include <memory>

#include "actors/registry.hpp"
#include "runtime/gate/caf_bridge.hpp"
#include "runtime/gate/spec_channel.hpp"

namespace tony {

struct registry_door_plan {
  /// The started channel, or null: none wanted, or the kernel refused it
  /// (then every spec goes over BASP).
  std::shared_ptr<gate::spec_channel> specs;
  /// What the gate is published with: the channel, and room for a job of
  /// this size connecting at once.
  gate::gate_options gate;
};

/// The open files the AM keeps for itself with `tasks` executors: their
/// established connections (two each) and its own RPC, HDFS and log files.
/// The waiting connections of its ports share what is left.
size_t am_reserved_files(int64_t tasks);

/// Starts the spec channel (unless `spec_channel` is false), wires it into
/// `registry` (registry_config::spec_channel) and sizes the gate for
/// `tasks` executors: each holds two connections (its registry connection
/// and its channel), and all of them may be proving the secret at once.
registry_door_plan plan_registry_door(registry_config& registry, int64_t tasks,
                                      bool spec_channel = true);

} // namespace tony
