#pragma once

// The rm_heartbeater owns the allocate loop: told to start, it registers the
// AM with the resource manager, then calls allocate every interval — fast
// while asks are outstanding, slow when steady — and forwards grants and
// completions to its listener (the lifecycle monitor). What is asked,
// released and echoed lives in its allocation ledger (core/), the one owner
// of the AM's side of the allocate protocol.
//
//   start ─▶ register ─rm_ready─▶ allocate … allocate ─finish─▶ unregister
//
// An answer with `resync` (the RM lost the registration and the client
// registered again) starts the ledger over: every outstanding ask goes again
// from response id 0, and so does the blacklist (`avoid`: nodes the job
// lost, never to be used again). A failing RM call is retried on the next tick; failing
// for longer than rm_failure_limit_ms is reported as rm_error. `finish` unregisters
// (repeated until the RM confirms) and stops the loop. `progress` (0..1, the
// monitor's core/progress.hpp) goes with every allocate call from then on.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/types.hpp"
#include "runtime/rm_client.hpp"

namespace tony {

struct am_timing {
  int64_t allocate_fast_ms = 100;      // allocate interval while asks are pending
  int64_t allocate_slow_ms = 1000;     // allocate interval when steady
  int64_t rpc_timeout_ms = 10000;      // any request to the RM or an NM
  int64_t rm_failure_limit_ms = 30000; // RM unreachable this long -> FAILED
};

/// What the heartbeater tells its listener.
using allocation_listener_actor =
    caf::typed_actor<caf::reacts_to<rm_ready_atom, rm_registration>,
                     // what failed; true: the RM no longer knows this AM attempt
                     caf::reacts_to<rm_error_atom, std::string, bool>,
                     caf::reacts_to<allocated_atom, std::vector<container>>,
                     caf::reacts_to<completed_atom, std::vector<container_completion>>,
                     // the queue's headroom and the cluster's node count,
                     // when either changed
                     caf::reacts_to<cluster_atom, resource, int32_t>>;

using rm_heartbeater_actor = caf::typed_actor<
    caf::reacts_to<start_atom>, caf::reacts_to<ask_atom, std::vector<container_ask>>,
    caf::reacts_to<release_atom, std::vector<std::string>>, caf::reacts_to<cancel_atom>,
    caf::reacts_to<avoid_atom, std::vector<std::string>>,
    caf::replies_to<finish_atom, final_report>::with<bool>,
    caf::reacts_to<tick_atom, int64_t>, caf::reacts_to<progress_atom, float>>;

rm_heartbeater_actor spawn_rm_heartbeater(caf::actor_system& sys, rm_client_actor rm,
                                          allocation_listener_actor listener,
                                          am_registration am, am_timing timing);

} // namespace tony
