#pragma once

// The registry: the AM's endpoint for executors (and for clients asking for
// the job's status). Published on the AM's RPC port.
//
// Registration is authenticated by the job secret and checked against the
// tasks its supervisor (the lifecycle monitor, given at spawn) expects for
// the current attempt. The barrier is gang: nobody gets the cluster spec
// until every expected task registered; then each executor receives it and
// the supervisor hears `barrier`.
//
//   expect(tasks, attempt) ─▶ register … register ─all in─▶ spec to all, barrier
//                                                             │
//   reopen(task) ─▶ register(task) ─────────▶ the new spec to all (the restarted
//                                               task's new address included)
//
// A later AM attempt (the AM before died, YARN kept its containers): the
// supervisor says which containers it adopted (`resume`: the attempt, its
// tasks, and per adopted task the container); their executors register
// again (`executor_hello::resumed`) without a new barrier or spec: their
// commands run. Any other resumed registration is refused as stale.
//
// How a spec reaches an executor: where the AM has a spec channel
// (registry_config::spec_channel; tony-am) and the executor can read it
// (executor_hello::reads_spec_channel; tony-executor), through the channel:
// the registry publishes each spec there once, before the acknowledgement
// that tells the executor to open it, so a channel opened after the ack
// finds the spec that includes its own executor. Every other executor gets
// the spec over BASP, as one message shared by all, after its ack.
//
// Only the supervisor may send `expect`, `reopen` and `resume`, and only the AM's own
// process `tokens`: the job's new delegation tokens, which the registry
// seals with the job secret and sends to every registered executor (and
// with every later registration's acknowledgement). Clients ask for the
// status, wait for the end, and say `bye` once they have the final status
// (the AM waits for that before it exits; doc/architecture.md).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/executor.hpp"
#include "messages/atoms.hpp"
#include "messages/types.hpp"

namespace tony {

/// What the registry tells its supervisor, and what it hands on to it.
using registry_supervisor_actor =
    caf::typed_actor<caf::reacts_to<registered_atom, executor_hello, executor_actor>,
                     caf::reacts_to<barrier_atom, int32_t>,
                     caf::reacts_to<heartbeat_atom, task_id, int32_t, task_sample>,
                     caf::replies_to<exit_atom, task_exit>::with<bool>,
                     caf::replies_to<status_atom>::with<job_status>,
                     caf::replies_to<wait_atom>::with<job_status>,
                     caf::reacts_to<bye_atom>>;

using registry_actor =
    caf::typed_actor<caf::replies_to<register_atom, executor_hello,
                                     executor_actor>::with<registration_ack>,
                     caf::reacts_to<heartbeat_atom, task_id, int32_t, task_sample>,
                     caf::replies_to<exit_atom, task_exit>::with<bool>,
                     caf::replies_to<status_atom>::with<job_status>,
                     caf::replies_to<wait_atom>::with<job_status>,
                     caf::reacts_to<bye_atom>,
                     caf::reacts_to<expect_atom, std::vector<task_id>, int32_t>,
                     caf::reacts_to<reopen_atom, task_id, int32_t>,
                     caf::reacts_to<resume_atom, std::vector<task_id>,
                                    std::vector<executor_hello>, int32_t>,
                     caf::reacts_to<tokens_atom, std::string>>;

struct registry_config {
  std::string app_id;
  std::string secret;
  int32_t heartbeat_interval_ms = 1000;
  /// A later AM attempt: executors of the AM before register again
  /// (resumed) and wait (errc::not_ready) until the supervisor said which
  /// it adopted (`resume`) or that the job starts over (`expect`).
  bool takes_over = false;
  /// Publishes a spec (to_channel_frame's bytes) to the AM's spec channel;
  /// empty: there is none, every spec goes over BASP.
  std::function<void(std::shared_ptr<const std::string>)> spec_channel = nullptr;
};

registry_actor spawn_registry(caf::actor_system& sys, registry_config cfg,
                              registry_supervisor_actor supervisor);

/// Builds the cluster map from registrations: type -> "host:port" by index.
/// Exposed for tests.
cluster_map make_cluster_map(const std::vector<executor_hello>& registered);

} // namespace tony
