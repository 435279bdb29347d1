#pragma once

// The rm_client and nm_client adapters of the local backend: thin actors in
// front of one shared local_cluster.

#include <memory>

#include <caf/actor_system.hpp>

#include "runtime/local/local_cluster.hpp"
#include "runtime/nm_client.hpp"
#include "runtime/rm_client.hpp"

namespace tony::local {

rm_client_actor spawn_local_rm(caf::actor_system& sys,
                               std::shared_ptr<local_cluster> cluster);

nm_client_actor spawn_local_nm(caf::actor_system& sys,
                               std::shared_ptr<local_cluster> cluster);

} // namespace tony::local
