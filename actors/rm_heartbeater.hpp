#pragma once

// The rm_heartbeater owns the allocate loop: it registers the AM with the
// resource manager, then calls allocate every interval — fast while asks are
// outstanding, slow when steady — carrying asks and releases, echoing the
// response_id, and forwards grants and completions to the lifecycle monitor.
// It keeps the outstanding count per priority: asks add to it, grants
// decrement it, `cancel` zeroes it, as the RM does on its side.
//
// A failing RM call is retried on the next tick; failing for longer than
// rm_failure_limit_ms is reported as rm_error. `finish` unregisters (repeated
// until the RM confirms) and stops the loop.

#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/lifecycle_monitor.hpp"
#include "messages/atoms.hpp"
#include "messages/types.hpp"
#include "runtime/rm_client.hpp"

namespace tony {

using rm_heartbeater_actor =
    caf::typed_actor<caf::reacts_to<ask_atom, std::vector<container_ask>>,
                     caf::reacts_to<release_atom, std::vector<std::string>>,
                     caf::reacts_to<cancel_atom>,
                     caf::replies_to<finish_atom, final_report>::with<bool>,
                     caf::reacts_to<tick_atom, int64_t>>;

rm_heartbeater_actor spawn_rm_heartbeater(caf::actor_system& sys, rm_client_actor rm,
                                          lifecycle_monitor_actor monitor,
                                          am_registration am, am_timing timing);

} // namespace tony
