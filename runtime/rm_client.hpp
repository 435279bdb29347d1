#pragma once

// The resource manager as the AM's actors see it: YARN's
// ApplicationMasterProtocol on the yarn backend (runtime/yarn/), the local
// resource pool on the local backend (runtime/local/), a scripted fake in the
// actor harness (tests/actors/). The rm_heartbeater is its only user.
//
//   register  once, first          -> rm_registration (max capability, queue)
//   allocate  every heartbeat      -> granted and completed containers
//   finish    once, last           -> true once unregistered
//
// Every call may fail with a caf::error; the caller retries or fails the job.

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/types.hpp"

namespace tony {

using rm_client_actor = caf::typed_actor<
    caf::replies_to<register_atom, am_registration>::with<rm_registration>,
    caf::replies_to<allocate_atom, allocate_request>::with<allocate_response>,
    caf::replies_to<finish_atom, final_report>::with<bool>>;

} // namespace tony
