#pragma once

// The nm_client adapter of the yarn backend: NodeManagers'
// ContainerManagementProtocol behind the same typed interface as the local
// process launcher. Each start or stop runs in a short-lived detached
// worker, so containers on many nodes start in parallel.

#include <chrono>
#include <memory>

#include <caf/actor_system.hpp>

#include "hadoop/yarn/nm_client.hpp"
#include "runtime/nm_client.hpp"

namespace tony::yarn {

nm_client_actor spawn_yarn_nm(caf::actor_system& sys, std::shared_ptr<nm_client> client,
                              std::chrono::milliseconds call_timeout);

} // namespace tony::yarn
