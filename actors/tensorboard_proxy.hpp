#pragma once

// The tensorboard_proxy: the AM's HTTP endpoint behind the tracking URL. It
// serves the job page, /api/job and the reverse proxy to the job's
// TensorBoard (runtime/http/tracking_routes.hpp) from the lifecycle
// monitor's status.
//
//   browser / RM web proxy ──HTTP──▶ http_server threads
//                                        │ facade: request(status_atom),
//                                        ▼ bounded by a timeout
//                                 tensorboard_proxy ──status_atom──▶ lifecycle_monitor
//                                        ▲
//   /tensorboard/... ──forward──▶ the `tensorboard` task's host:port (from the status)
//
// HTTP handlers never touch actor state: they only ask this actor, through
// the facade, which asks the monitor. TensorBoard runs as the job's
// `tensorboard` sidecar task ([tensorboard] in job.toml); its address is
// that task's host:port once it runs.

#include <chrono>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/lifecycle_monitor.hpp"
#include "messages/atoms.hpp"
#include "messages/types.hpp"
#include "runtime/http/http_server.hpp"

namespace tony {

using tensorboard_proxy_actor =
    caf::typed_actor<caf::replies_to<status_atom>::with<job_status>>;

struct tracking_options {
  /// How browsers reach the server's root: "" directly, or YARN's web proxy
  /// base "/proxy/<app-id>" (APPLICATION_WEB_PROXY_BASE), for redirects.
  std::string public_base;
  /// How long an HTTP request waits for the job's status.
  std::chrono::milliseconds status_timeout{3000};
};

/// Spawns the proxy and starts serving on `server`, which is bound already
/// (its port is in the tracking URL the AM registered). The caller stops the
/// server (http_server::stop joins its threads) before the actor system ends.
tensorboard_proxy_actor spawn_tensorboard_proxy(caf::actor_system& sys,
                                                std::shared_ptr<http::http_server> server,
                                                lifecycle_monitor_actor monitor,
                                                tracking_options opts);

} // namespace tony
