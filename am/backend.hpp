#pragma once

// Everything that differs between the local and the yarn backend, as the AM
// sees it: the rm_client and nm_client adapters, how an executor's container
// is launched, where containers' logs are, which nodes asks name, where the
// AM listens and keeps its event log, how clients learn where it is, and
// what to clean up at the end. The actors and run_am are the same for both.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>

#include "actors/container_launcher.hpp"
#include "am/am_host.hpp"
#include "config/job_spec.hpp"
#include "messages/error.hpp"
#include "runtime/launch_context.hpp"
#include "runtime/nm_client.hpp"
#include "runtime/rm_client.hpp"
#include "web/http_server.hpp"

namespace tony {

/// Where a running AM can be reached.
struct am_address {
  std::string app_id;
  std::string host;
  uint16_t port = 0; // the registry's
  int32_t pid = 0;
  std::string tracking_url;
};

struct am_backend {
  rm_client_actor rm;
  nm_client_actor nm;
  /// The launch factory of executors that reach the registry at `am`.
  std::function<launch_factory(const am_endpoint& am)> launcher;
  std::function<std::string(const container&)> log_dir_of;
  /// Nodes and racks named in every ask (YARN node-local placement).
  std::vector<std::string> nodes;
  std::vector<std::string> racks;
  /// The ResourceManager enables placement constraints: capped types are
  /// asked with SchedulingRequests (YARN only).
  bool placement_constraints = false;
  /// The handler is the placement processor: a spread type's strict ask
  /// goes as a SchedulingRequest too (hadoop/yarn/amrm_client.hpp).
  bool placement_processor = false;
  /// The address executors and clients reach this AM at, unless given.
  std::string host;
  /// Where the AM's servers (registry, tracking page) listen.
  std::string bind_address;
  /// The event log's path.
  std::string event_log;
  /// Tells clients where the AM is, once it listens.
  std::function<void(const am_address&)> announce;
  /// Puts what the backend needs in front of the tracking page (on YARN:
  /// only the RM's web proxy is served, Hadoop's AmIpFilter); may be empty.
  std::function<void(http::http_server&)> guard_page;
  /// Runs once the job's end is recorded (status and event log written).
  std::function<void(const job_status&)> on_end;
  /// Keeps the job's records where clients read them after the job (YARN:
  /// copies the event log into the history dir), once: the AM calls it
  /// when the job's end is in the event log, before the RM hears of the
  /// end, and on_end calls it when the AM did not (the monitor failed). May
  /// be empty.
  std::function<void()> keep_records;
  /// Starts getting new delegation tokens for a long job (YARN with a
  /// keytab; am/token_renewer.hpp), handing each lot to the function given;
  /// empty when the backend does not renew.
  std::function<void(std::function<void(const std::string&)>)> start_token_renewal;
  /// Keeps backend state (the local pool, RPC clients) alive as long as the AM.
  std::shared_ptr<void> keep_alive;
  /// Ends the calls the RM and NodeManager clients still have out (YARN:
  /// their IPC client shuts down), so that tony-am's end, which waits for
  /// the threads making them, does not wait for a NodeManager that is gone
  /// (a stop sent to it retries its connect for the whole call timeout).
  /// Called as tony-am ends, when nothing more is asked of them; may be empty.
  std::function<void()> end_calls;

  // -- AM restarts (YARN, [am] max_app_attempts >= 2; runtime/am_restart.hpp) --

  /// YARN's attempt of this AM (2 after one AM died).
  int32_t am_attempt = 1;
  /// The job as the AM before this one saved it.
  std::optional<job_status> resume;
  /// Saves the job as it changes, for the next AM attempt (may be empty).
  std::function<void(const job_status&)> save_state;
  /// Where executors whose AM died find the next one (the staging dir's
  /// am.json; empty: they do not wait for one), and its WebHDFS address.
  std::string restart_dir;
  std::string restart_webhdfs;
  /// Writes what save_state still holds and stops saving: called before
  /// on_end removes the staging dir (may be empty).
  std::function<void()> end_restarts;
};

using backend_maker = expected<am_backend> (*)(caf::actor_system&, const job_spec&,
                                               const am_options&);

/// Writes `content` to `path` through a temporary file and a rename, so a
/// reader never sees half of it; false on failure.
bool write_file_atomically(const std::string& path, const std::string& content);

/// The backends by name ("local", "yarn").
const std::map<std::string, backend_maker>& am_backends();

/// The local pool under the job dir (`opts.work_dir`); executors are
/// `opts.executor_path`.
expected<am_backend> make_local_backend(caf::actor_system& sys, const job_spec& job,
                                        const am_options& opts);

/// YARN from inside the AM container: the AMRMToken from the container's
/// token file, the scheduler address and staged executor resources from the
/// environment tony-submit gave the AM (runtime/yarn/am_env.hpp).
expected<am_backend> make_yarn_backend(caf::actor_system& sys, const job_spec& job,
                                       const am_options& opts);

} // namespace tony
