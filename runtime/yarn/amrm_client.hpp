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

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "messages/types.hpp"
#include "runtime/hadoop/connection_params.hpp"
#include "runtime/hadoop/credentials.hpp"
#include "runtime/hadoop/deadline.hpp"
#include "runtime/hadoop/expected.hpp"
#include "runtime/hadoop/ipc_client.hpp"
#include "runtime/yarn/nm_token_cache.hpp"
#include "runtime/yarn/records.hpp"

namespace tony::yarn {

class amrm_client {
public:
  amrm_client(std::shared_ptr<hadoop::ipc_client> ipc, hadoop::endpoint scheduler,
              hadoop::token amrm_token, std::shared_ptr<nm_token_cache> nm_tokens);

  /// The AMRMToken in `creds` (kind YARN_AM_RM_TOKEN), e.g. from
  /// hadoop::credentials_from_environment() inside the AM container.
  static hadoop::expected<hadoop::token>
  find_amrm_token(const hadoop::credentials& creds);

  /// Registers the AM.
  expected<rm_registration> register_application_master(const am_registration& reg,
                                                        hadoop::deadline until);

  /// One heartbeat: `req` with its response id and asks (placed by their
  /// nodes and racks). The response carries the RM's new response id.
  expected<allocate_response> allocate(const allocate_request& req,
                                       hadoop::deadline until);

  /// Unregisters with the final status; repeats the call (100 ms apart)
  /// until the RM confirms or the deadline passes.
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

private:
  hadoop::connection_params target_locked() const;

  std::shared_ptr<hadoop::ipc_client> ipc_;
  hadoop::endpoint scheduler_;
  std::shared_ptr<nm_token_cache> nm_tokens_;

  std::mutex call_mtx_; // one call at a time: allocate is a sequence
  mutable std::mutex mtx_;
  hadoop::token token_;
  am_command last_command_ = am_command::none;
  resource headroom_;
  std::vector<container> previous_;
};

} // namespace tony::yarn
