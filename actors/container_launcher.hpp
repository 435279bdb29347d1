#pragma once

// The container_launcher starts and stops containers through the node
// managers, many at once: every start and stop is its own request with a
// deadline, so one slow node never holds up the others. Results go to its
// listener (the lifecycle monitor: launched / launch_failed); stop_all
// answers once every container it was given is stopped or its request
// failed.
//
// A started container may not run yet: its node manager first localizes
// its resources. The launcher asks each node manager about its started
// containers (one call per node, about once a second) and tells the
// listener `running` once a container's launch script runs, so that
// registration deadlines count from there. It stops asking about a
// container once it runs, ended, was stopped or its executor registered
// (`registered`, from the listener). A node manager that does not tell
// (before Hadoop 3) or cannot be asked: the container is taken for running
// at once, as if launched, and the log says so once.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/types.hpp"
#include "runtime/nm_client.hpp"

namespace tony {

/// Builds the launch context of the executor of a task (its `restart`-th
/// run in `attempt`) in a container. Each backend has its own
/// (runtime/launch_context.hpp).
using launch_factory = std::function<launch_spec(const task_id&, int32_t attempt,
                                                 int32_t restart, const container&)>;

/// What the launcher tells its listener.
using launch_listener_actor = caf::typed_actor<
    caf::reacts_to<launched_atom, task_id, int32_t, container>,
    caf::reacts_to<launch_failed_atom, task_id, int32_t, container, std::string>,
    caf::reacts_to<running_atom, container>>;

using container_launcher_actor =
    caf::typed_actor<caf::reacts_to<launch_atom, task_id, int32_t, int32_t, container>,
                     caf::reacts_to<stop_atom, container>,
                     caf::reacts_to<registered_atom, std::string>,
                     caf::reacts_to<tick_atom>,
                     caf::replies_to<stop_all_atom, std::vector<container>>::with<bool>>;

container_launcher_actor
spawn_container_launcher(caf::actor_system& sys, nm_client_actor nm,
                         launch_listener_actor listener, launch_factory make_launch,
                         int64_t rpc_timeout_ms, int64_t poll_period_ms = 1000);

} // namespace tony
