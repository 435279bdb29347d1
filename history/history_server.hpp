#pragma once

// `tony-history serve`: every job found in the history dirs, each with the
// page the live AM showed (timeline, metrics, diagnostics, log links) plus
// what only history has — the resolved job, filters over all jobs, and
// TensorBoard started on demand for a finished job's log dir:
//
//   /                              the jobs, newest first; ?user= ?queue=
//                                  ?state= ?name= filter them
//   /jobs/<app-id>/                the job's page (?task=, ?type= as live)
//   /jobs/<app-id>/api/job         its replayed status (?metrics=1, ?timeline=1)
//   /jobs/<app-id>/config          the resolved job as job.toml
//   /jobs/<app-id>/logs/...        local logs still on this machine
//   /jobs/<app-id>/tensorboard/    TensorBoard on its [tensorboard] log_dir,
//                                  started on demand, stopped when idle
//
// On a secure cluster every request authenticates with SPNEGO, and with the
// cluster's ACLs on a job is listed and shown only to whom YARN would show
// it (doc/operations.md, "Security").
//
// Event logs are parsed once and kept while their size and time stay the
// same (10 s for a directory that does not say). With a retention, jobs
// that ended longer ago are deleted from the history dirs at start and
// every hour (the local backend's whole job directory).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <httplib.h>

#include "base/access_list.hpp"
#include "history/history_commands.hpp"

namespace tony::history {

struct serve_options {
  std::string bind = "127.0.0.1";
  int port = 0;
  /// Jobs that ended longer ago are deleted; 0 keeps every job.
  int64_t retention_ms = 0;
  /// TensorBoard on demand.
  std::string tensorboard = "tensorboard";
  int64_t tensorboard_idle_ms = 10 * 60 * 1000;
  size_t max_tensorboards = 4;
  /// Who is asking: the user's name, or nullopt with the response already
  /// made (401, 403); run before every route. Unset: no authentication.
  /// tony-history sets it to SPNEGO (web/spnego.hpp) on a secure cluster.
  std::function<std::optional<std::string>(const httplib::Request&, httplib::Response&)>
      authenticate;
  /// With `authenticate`, the cluster's ACLs (yarn.acl.enable): a job is listed
  /// and shown only to its owner, the users and groups of its view ACL (as
  /// its event log recorded it) and these admins (yarn.admin.acl); nullopt:
  /// every authenticated user sees every job, as YARN without ACLs.
  std::optional<base::access_list> admins;
  /// A line said after the URL (what is enforced); empty: none.
  std::string note;
};

/// Serves until `stop` turns true (checked a few times a second); prints the
/// URL on `out` once listening, and a line for each TensorBoard stopped and
/// each job the retention removed. The exit code.
int serve_history(const history_options& opts, const serve_options& so,
                  const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

/// Deletes the jobs of the history dirs that ended more than `retention_ms`
/// before `now_ms` (running jobs and unreadable logs stay); a line per job
/// on `out`. The number deleted.
size_t apply_retention(const history_options& opts, int64_t retention_ms, int64_t now_ms,
                       std::ostream& out, std::ostream& err);

} // namespace tony::history
