#pragma once

// The client side of YARN's ContainerManagementProtocol: start, stop and
// query containers on their NodeManager. Each NodeManager is reached with
// the NMToken the RM issued for it (taken from the shared nm_token_cache)
// over SASL DIGEST-MD5. Blocking and thread-safe: calls for different
// containers may run in parallel.

#include <memory>
#include <string>
#include <vector>

#include "hadoop/connection_params.hpp"
#include "hadoop/deadline.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/yarn/nm_token_cache.hpp"
#include "hadoop/yarn/records.hpp"
#include "messages/types.hpp"

namespace tony::yarn {

class nm_client {
public:
  nm_client(std::shared_ptr<hadoop::ipc_client> ipc,
            std::shared_ptr<nm_token_cache> nm_tokens);

  /// Starts `spec.target` with the spec's environment, command parts (YARN
  /// semantics: joined with spaces by the NodeManager, <LOG_DIR> replaced),
  /// resources and tokens. Fails if the NodeManager lists the container
  /// among its failed requests, even though the call itself succeeded.
  expected<void> start_container(const launch_spec& spec, hadoop::deadline until);

  /// Same, with a launch context built by the caller.
  expected<void> start_container(const container& target, const container_launch& launch,
                                 hadoop::deadline until);

  /// Asks the NodeManager to stop the container.
  expected<void> stop_container(const container& target, hadoop::deadline until);

  expected<container_status> get_container_status(const container& target,
                                                  hadoop::deadline until);

  /// The states of containers of one NodeManager (that of the first), in
  /// one call. A container the NodeManager does not know (a failed request)
  /// has no status in the answer.
  expected<std::vector<container_status>>
  get_container_statuses(const std::vector<container>& targets, hadoop::deadline until);

private:
  hadoop::expected<hadoop::connection_params> target_for(const container& c) const;

  std::shared_ptr<hadoop::ipc_client> ipc_;
  std::shared_ptr<nm_token_cache> nm_tokens_;
};

} // namespace tony::yarn
