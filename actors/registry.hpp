#pragma once

// The registry: the AM's endpoint for executors (and for clients asking for
// the job's status). Published on the AM's RPC port.
//
// Registration is authenticated by the job secret and checked against the
// tasks the lifecycle monitor expects for the current attempt. The barrier is
// gang: nobody gets the cluster spec until every expected task registered;
// then each executor receives it and the monitor hears `barrier`.
//
// Whoever sends `expect` first becomes the registry's supervisor (the
// lifecycle monitor): it receives registrations, heartbeats and exits, and
// only it may send `expect` again (a new attempt).

#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/executor.hpp"
#include "messages/atoms.hpp"
#include "messages/types.hpp"

namespace tony {

using registry_actor =
    caf::typed_actor<caf::replies_to<register_atom, executor_hello,
                                     executor_actor>::with<registration_ack>,
                     caf::reacts_to<heartbeat_atom, task_id, int32_t>,
                     caf::replies_to<exit_atom, task_exit>::with<bool>,
                     caf::replies_to<status_atom>::with<job_status>,
                     caf::replies_to<wait_atom>::with<job_status>,
                     caf::reacts_to<expect_atom, std::vector<task_id>, int32_t>>;

struct registry_config {
  std::string app_id;
  std::string secret;
  int32_t heartbeat_interval_ms = 1000;
};

registry_actor spawn_registry(caf::actor_system& sys, registry_config cfg);

/// Builds the cluster map from registrations: type -> "host:port" by index.
/// Exposed for tests.
cluster_map make_cluster_map(const std::vector<executor_hello>& registered);

} // namespace tony
