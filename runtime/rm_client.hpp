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
// Every call may fail with a caf::error; the caller retries or fails the job,
// except for attempt_gone_error: the RM no longer knows this AM attempt, and
// no call of it will be answered again.

#include <string>

#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/types.hpp"

namespace tony {

using rm_client_actor = caf::typed_actor<
    caf::replies_to<register_atom, am_registration>::with<rm_registration>,
    caf::replies_to<allocate_atom, allocate_request>::with<allocate_response>,
    caf::replies_to<finish_atom, final_report>::with<bool>>;

/// The category of attempt_gone_error.
constexpr caf::atom_value attempt_gone_category = caf::atom("am_gone");

/// An allocate answer of an RM that no longer knows this AM attempt
/// (ApplicationAttemptNotFoundException, a refused resync); `why` says so.
inline caf::error attempt_gone_error(std::string why) {
  return {1, attempt_gone_category, caf::make_message(std::move(why))};
}

inline bool is_attempt_gone(const caf::error& err) {
  return err.category() == attempt_gone_category;
}

} // namespace tony
