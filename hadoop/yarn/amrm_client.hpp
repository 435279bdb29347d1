#pragma once

// The client side of YARN's ApplicationMasterProtocol: register, the
// allocate heartbeat, finish. Speaks tony's message types directly so that
// the rm_client actor adapter stays thin.
//
//   register ─▶ allocate … allocate ─▶ finish (repeated until unregistered)
//
// Authenticates with the attempt's AMRMToken (SASL DIGEST-MD5). Keeps what
// YARN's connection needs: NMTokens per node (into the shared
// nm_token_cache) and AMRMToken rollover (a new token from an allocate
// response is used for every later connection). The allocate bookkeeping —
// outstanding asks, their placement, the response id — is the caller's
// (core/allocation_ledger.hpp): a request goes out as it is. Thread-safe;
// calls are serialized.
//
// ResourceManager HA and work-preserving RM restart: calls go to the active
// scheduler among the rm-ids (rm_failover.hpp). An RM that lost the AM's
// registration (it restarted, or another one took over) answers allocate
// with ApplicationMasterNotRegisteredException or the AM_RESYNC command;
// the client then registers again with the first registration's details and
// answers the allocate with `resync` set, so that the caller starts its
// sequence over with every outstanding ask (allocation_ledger::resync). The
// running containers stay: the RM recovers them from the NodeManagers.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hadoop/connection_params.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/deadline.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/yarn/nm_token_cache.hpp"
#include "hadoop/yarn/records.hpp"
#include "hadoop/yarn/rm_failover.hpp"
#include "messages/types.hpp"

namespace tony::yarn::proto {
class AllocateRequestProto;
class AllocateResponseProto;
} // namespace tony::yarn::proto

namespace tony::yarn {

class amrm_client {
public:
  amrm_client(std::shared_ptr<hadoop::ipc_client> ipc, hadoop::endpoint scheduler,
              hadoop::token amrm_token, std::shared_ptr<nm_token_cache> nm_tokens);

  /// A client of the schedulers of every RM in `schedulers` (RM HA).
  amrm_client(std::shared_ptr<hadoop::ipc_client> ipc, std::vector<rm_peer> schedulers,
              hadoop::token amrm_token, std::shared_ptr<nm_token_cache> nm_tokens,
              failover_options failover = {});

  /// The AMRMToken in `creds` (kind YARN_AM_RM_TOKEN), e.g. from
  /// hadoop::credentials_from_environment() inside the AM container.
  static hadoop::expected<hadoop::token>
  find_amrm_token(const hadoop::credentials& creds);

  /// Registers the AM.
  expected<rm_registration> register_application_master(const am_registration& reg,
                                                        hadoop::deadline until);

  /// One heartbeat: `req` with its response id and asks (placed by their
  /// nodes and racks). The response carries the RM's new response id, or
  /// `resync` (nothing else) when the RM had lost the registration and the
  /// client registered again.
  expected<allocate_response> allocate(const allocate_request& req,
                                       hadoop::deadline until);

  /// Unregisters with the final status; repeats the call (100 ms apart)
  /// until the RM confirms or the deadline passes (registering again first
  /// if the RM lost the registration).
  expected<void> finish_application_master(const final_report& report,
                                           hadoop::deadline until);

  /// The AMRMToken in use (the newest one the RM sent).
  hadoop::token amrm_token() const;

  /// The AMCommand of the last allocate response.
  am_command last_command() const;

  /// The headroom (AllocateResponse.limit) of the last allocate response.
  resource last_headroom() const;

  /// Containers of earlier attempts that survived (keep-containers apps),
  /// from the registration.
  std::vector<container> containers_from_previous_attempts() const;

  const std::shared_ptr<nm_token_cache>& nm_tokens() const noexcept { return nm_tokens_; }

  /// How many times the RM lost the registration and the client registered
  /// again.
  int resyncs() const;

  const rm_failover& failover() const noexcept { return failover_; }

  /// How long a new ask naming nodes stays strict (node-local, each node
  /// up to its share) before what is outstanding goes to any node; 3 s.
  void set_spread_window(std::chrono::milliseconds window) { spread_window_ = window; }

  /// The ResourceManager's yarn.resourcemanager.placement-constraints.handler
  /// ("scheduler" or "placement-processor"; empty or "disabled": none):
  /// when enabled, a capped ask (convert::by_scheduling_request) goes as a
  /// SchedulingRequest with the type's anti-affinity instead of node lists.
  /// With the placement processor, which places a SchedulingRequest when
  /// allocate brings it rather than on node heartbeats, a spread ask's
  /// strict window goes as one too: each node at most its share.
  void set_placement_constraints(const std::string& handler) {
    constraints_ = !handler.empty() && handler != "disabled";
    processor_ = handler == "placement-processor";
  }
  bool placement_constraints() const noexcept { return constraints_; }
  bool placement_processor() const noexcept { return processor_; }

private:
  hadoop::connection_params target_locked() const;

  template <class Response>
  hadoop::expected<Response> call(const std::string& method,
                                  const google::protobuf::MessageLite& req,
                                  hadoop::deadline until);

  /// registerApplicationMaster with `reg`; keeps the NMTokens it returns,
  /// and on the `first` registration the earlier attempts' containers.
  expected<rm_registration> register_locked(const am_registration& reg,
                                            hadoop::deadline until, bool first);

  /// Registers again after the RM lost the registration. A registration
  /// the RM did not answer is made again by the next allocate; an answer
  /// that the AM is already registered counts as registered.
  expected<void> reregister(const std::string& why, hadoop::deadline until);

  std::shared_ptr<hadoop::ipc_client> ipc_;
  rm_failover failover_;
  std::shared_ptr<nm_token_cache> nm_tokens_;
  std::optional<am_registration> registration_; // under call_mtx_
  bool reregister_pending_ = false;             // under call_mtx_
  /// Spread placement (convert::add_asks): an ask naming nodes is strict
  /// (node-local, each node up to its share) for spread_window after it was
  /// first sent, then sent again relaxed for what is still outstanding.
  /// With the placement processor the strict ask is a SchedulingRequest
  /// capped at the share (`cap`), cancelled when the ask relaxes, which it
  /// does at once when the processor rejects it.
  struct spreading {
    std::chrono::steady_clock::time_point since;
    container_ask ask; // as last sent, less what was granted since
    int32_t cap = 0;   // > 0: the strict ask went as a SchedulingRequest
  };
  std::map<int32_t, spreading> spreading_; // by priority; under call_mtx_
  std::chrono::milliseconds spread_window_{3000};
  void add_spread_asks(const allocate_request& req, proto::AllocateRequestProto& msg);
  /// Placement constraints: SchedulingRequests as last sent, less what was
  /// granted since, by priority; the ones the RM rejected (the
  /// placement-processor handler gives up on a request it cannot place) go
  /// again with the next call.
  bool constraints_ = false;
  bool processor_ = false;
  std::map<int32_t, container_ask> constrained_; // under call_mtx_
  std::vector<int32_t> rejected_;                // under call_mtx_
  void add_scheduling_requests(const allocate_request& req,
                               proto::AllocateRequestProto& msg);
  void note_rejected(const proto::AllocateResponseProto& rsp);
  int resyncs_ = 0; // under mtx_

  std::mutex call_mtx_; // one call at a time: allocate is a sequence
  mutable std::mutex mtx_;
  hadoop::token token_;
  am_command last_command_ = am_command::none;
  resource headroom_;
  std::vector<container> previous_;
};

} // namespace tony::yarn
