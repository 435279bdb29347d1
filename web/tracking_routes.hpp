#pragma once

// The routes behind a job's tracking URL, relative to where the job is
// mounted (doc/tracking.md):
//
//   ""  or "/"                 the job page (HTML, reloads itself while live);
//                              ?task=worker:0 one task, ?type=worker one type
//   "/api/job"                 the job status as JSON (runtime/status_json);
//                              ?metrics=1 adds the tasks' resource use,
//                              ?timeline=1 their runs
//   "/logs/<container>/<file>" stdout, stderr or executor.log of a task whose
//                              logs are on this machine (local backend)
//   "/tensorboard/..."         the job's TensorBoard, reverse-proxied
//
// The AM mounts them at its root; tony-history at /jobs/<app-id>. Handlers
// reach the job only through a job_source: in the AM a facade that asks the
// actors (am/am_host.cpp), in tony-history a replayed event log.

#include <functional>
#include <memory>
#include <string>

#include <httplib.h>

#include "messages/error.hpp"
#include "messages/types.hpp"
#include "web/request_body.hpp"

namespace tony::history {
struct job_record;
} // namespace tony::history

namespace tony::http {

class job_source {
public:
  virtual ~job_source();

  /// The job's status now, or why it cannot be had (it is called from the
  /// server's threads and must bound its own wait).
  virtual expected<job_status> status() = 0;

  /// A live job's page refreshes itself and proxies its TensorBoard.
  virtual bool live() const = 0;

  /// Runs `f` on the job's record (timeline, metrics, what was submitted)
  /// and returns true, or returns false when the source keeps none.
  virtual bool read_record(const std::function<void(const history::job_record&)>& f);
};

struct route_options {
  /// Where the routes are mounted on this server: "" or "/jobs/<app-id>".
  std::string mount;
  /// How clients reach this server's root, for redirects: "" directly, the
  /// RM's "/proxy/<app-id>" behind YARN's web proxy (APPLICATION_WEB_PROXY_BASE).
  std::string public_base;
  /// A line under the page title.
  std::string note;
  /// tony-history: the page offers to start TensorBoard on the job's log dir,
  /// and links the resolved job at "config".
  bool tensorboard_on_demand = false;
  bool config_link = false;
  /// The AM: the job's TensorBoard token, sent to TensorBoard with every
  /// request (config/task_env.hpp, tensorboard_token_header); empty: none.
  std::string tensorboard_token;
};

/// Answers the request for `path` (relative to the mount point, starting
/// with "/" or empty) from `src`. `body` is the raw request body. The
/// answer may be written after this returns (the API's metrics and
/// timeline are streamed a few tasks at a time): `src` is kept until then.
void handle_job_request(const std::shared_ptr<job_source>& src, const std::string& path,
                        const httplib::Request& req, const std::string& body,
                        httplib::Response& res, const route_options& opts);

/// The largest request body the TensorBoard proxy passes on (TensorBoard's
/// front end posts small forms: a dashboard's queries, a few KiB).
constexpr size_t proxy_body_cap = 8 << 20;

/// What the routes take as a request body, for `path` relative to the mount
/// point: up to proxy_body_cap under /tensorboard/, nothing elsewhere (the
/// page, the API and the logs only answer GET and HEAD).
body_rule tracking_body_rule(const std::string& method, const std::string& path);

/// The part of the raw request target (path and query) after `mount`, e.g.
/// target "/jobs/a/tensorboard/x?y=1", mount "/jobs/a/tensorboard" -> "/x?y=1".
std::string target_after(const std::string& target, const std::string& mount);

} // namespace tony::http
