#pragma once

// Nothing left behind: every YARN job stages its files under
// <staging root>/<application id>/ (job.json, src.tgz, ...). The AM removes
// them when the job ends, but not when it dies first: `yarn application
// -kill` and tony-submit's Ctrl-C end in the NodeManager's SIGTERM and, 250
// ms later, its SIGKILL; a killed AM or a forgetting RM end it at once. So:
//
//   tony-submit on its way out   once the RM says the application is over
//                                (FINISHED, FAILED, KILLED, or unknown to
//                                it), removes the job's own dir
//   the next submit              sweeps the root: each application_* dir
//                                whose application the RM reports ended is
//                                removed
//
// A running job's files are never touched: a dir goes only when the RM
// reports its application FINISHED, FAILED or KILLED, or does not know an
// application it issued itself and it cannot be a submission in flight (see
// removable()). A dir whose state cannot be learnt stays, and so does one of
// another cluster timestamp the RM does not know: a staging root shared by
// several clusters (or RMs) holds their running jobs too, and only their
// own RM can tell (their own tony-submit removes them on its way out). The
// content-addressed caches beside them (bin/<hash>, envs/<hash>) are shared by all jobs
// and stay.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hadoop/webhdfs.hpp"
#include "hadoop/yarn/records.hpp"

namespace tony {

/// What the RM says about an application, for the sweep.
struct rm_verdict {
  enum kind_t { live, ended, unknown, no_answer } kind = no_answer;
};

/// A staging dir of an application the RM does not know is removed only
/// when the RM issued its id (the same cluster timestamp) and it cannot
/// belong to a submission in flight: tony-submit stages between
/// getNewApplication and submitApplication, and until the submit the RM
/// knows no such application, so such dirs wait this long untouched.
constexpr int64_t unknown_app_grace_ms = 60 * 60 * 1000;

/// True when the staging dir of `app` may go: the RM reported it ended, or
/// it does not know it, `app` has the RM's `current_cluster_ts`, and the dir
/// was last modified more than unknown_app_grace_ms before `now_ms`.
bool removable(const yarn::application_id& app, rm_verdict verdict,
               int64_t current_cluster_ts, int64_t dir_modified_ms, int64_t now_ms);

struct sweep_result {
  std::vector<std::string> removed; // application ids
  std::vector<std::string> kept;    // running, in flight, or not answered
  std::vector<std::string> problems;
};

struct sweep_options {
  /// At most this many RM questions per sweep; the rest waits for the next.
  size_t max_checks = 200;
  /// Never this application (the submit's own).
  std::string except;
};

/// Sweeps `root` (the staging root URI: file:///... or hdfs://...; `nn`
/// reaches it) of ended applications' dirs, asking `ask` about each
/// application_* dir's application.
sweep_result
sweep_staging(const std::string& root, const webhdfs::namenode_http& nn,
              const std::function<rm_verdict(const yarn::application_id&)>& ask,
              int64_t current_cluster_ts, int64_t now_ms, const sweep_options& opts = {});

} // namespace tony
