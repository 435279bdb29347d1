#pragma once

// What differs between the local and the yarn backend, as the AM sees it:
// the rm_client and nm_client adapters, how an executor's container is
// launched, where a container's logs are, and what to clean up at the end.
// Everything else — the actors — is the same.

#include <functional>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/lifecycle_monitor.hpp"
#include "config/job_spec.hpp"
#include "runtime/launch_context.hpp"
#include "runtime/nm_client.hpp"
#include "runtime/rm_client.hpp"

namespace tony {

struct am_backend {
  rm_client_actor rm;
  nm_client_actor nm;
  launch_factory make_launch;
  std::function<std::string(const container&)> log_dir_of;
  /// Runs once the job's end is reported (e.g. remove the staging dir).
  std::function<void(const job_status&)> on_end;
  /// Keeps backend state (the local pool) alive as long as the AM.
  std::shared_ptr<void> keep_alive;
};

/// The local pool under `job_dir`; executors are `executor_path`.
caf::expected<am_backend> make_local_backend(caf::actor_system& sys, const job_spec& job,
                                             const am_endpoint& am,
                                             const std::string& job_dir,
                                             const std::string& executor_path);

/// YARN from inside the AM container: the AMRMToken from the container's
/// token file, the scheduler address and staged executor resources from the
/// environment tony-submit gave the AM (doc/architecture.md lists them).
caf::expected<am_backend> make_yarn_backend(caf::actor_system& sys, const job_spec& job,
                                            const am_endpoint& am);

} // namespace tony
