#pragma once

// The rm_client adapter of the yarn backend: the ResourceManager's
// ApplicationMasterProtocol behind the same typed interface as the local
// pool. amrm_client calls block, so the actor runs detached (its own
// thread); the rm_heartbeater never has more than one call outstanding.

#include <chrono>
#include <memory>

#include <caf/actor_system.hpp>

#include "hadoop/yarn/amrm_client.hpp"
#include "runtime/rm_client.hpp"

namespace tony::yarn {

/// `call_timeout` bounds every RPC (finish may repeat within it).
rm_client_actor spawn_yarn_rm(caf::actor_system& sys, std::shared_ptr<amrm_client> client,
                              std::chrono::milliseconds call_timeout);

/// "what went wrong" for a hadoop error, as a caf::error of tony's category.
caf::error to_caf_error(const hadoop::error& err);

} // namespace tony::yarn
