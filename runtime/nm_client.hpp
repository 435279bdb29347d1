#pragma once

// The node managers as the container_launcher sees them: YARN's
// ContainerManagementProtocol (runtime/yarn/), child processes on this
// machine (runtime/local/), or a scripted fake (tests/actors/).
//
//   start  launch_spec -> the container id once the container is started
//   stop   container   -> true once the container is stopped (or was gone)
//   status containers  -> one word per container, in order: "localizing"
//                         (started, its resources still localizing),
//                         "running" (its launch script runs), "done", or
//                         "unknown" (the node manager does not tell)
//                         (one node manager's containers per call)
//
// Calls for different containers may run concurrently.

#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/types.hpp"

namespace tony {

using nm_client_actor = caf::typed_actor<
    caf::replies_to<start_atom, launch_spec>::with<std::string>,
    caf::replies_to<stop_atom, container>::with<bool>,
    caf::replies_to<status_atom, std::vector<container>>::with<std::vector<std::string>>>;

} // namespace tony
