#pragma once

// tony-history's commands (apps/tony_history.cpp is their thin main):
//
//   list          every job found in the history dirs, newest first
//   show APP_ID   one job's timeline of events and its final task table
//   serve         the same pages as a live AM, from the event logs: an index
//                 at /, each job at /jobs/<app-id>/ (history_server.hpp)
//   clean         deletes the jobs that ended longer ago than a retention
//
// Each takes the history dirs to search (doc/tracking.md) and writes to the
// given streams; the exit code is returned.

#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "hadoop/kerberos.hpp"
#include "messages/error.hpp"
#include "messages/types.hpp"
#include "runtime/history/event_log.hpp"
#include "runtime/history/history_store.hpp"

namespace tony::history {

struct history_options {
  /// Paths, file:// or hdfs:// URIs; the defaults are ~/.tony/jobs and
  /// ~/.tony/history (missing defaults are skipped quietly).
  std::vector<std::string> dirs;
  bool default_dirs = false;
  std::string webhdfs; // NameNode HTTP address for hdfs:// dirs
  std::string user;    // for WebHDFS (SIMPLE)
  /// A Kerberos login: WebHDFS with SPNEGO instead (a secure cluster).
  std::shared_ptr<const hadoop::kerberos_credentials> kerberos;
  /// The CAs of HTTPS NameNodes (TONY_CA_FILE); empty: the system's.
  std::string ca_file;
};

/// A job found in a history dir, with its events.
struct found_job {
  std::string app_id;
  std::string location;
  std::vector<job_event> events;
};

/// Finds `app_id` in the dirs and reads its event log.
expected<found_job> find_job(const history_options& opts, const std::string& app_id);

int list_jobs(const history_options& opts, std::ostream& out, std::ostream& err);

int show_job(const history_options& opts, const std::string& app_id, bool as_json,
             std::ostream& out, std::ostream& err);

// serve: history/history_server.hpp.

/// A history dir to search; `optional` for a default dir that may not exist.
struct opened_dir {
  std::unique_ptr<history_dir> dir;
  bool optional = false;
};

/// The dirs of `opts`, opened; what cannot be opened is said on `err`.
std::vector<opened_dir> open_dirs(const history_options& opts, std::ostream& err);

/// Every log in every dir, newest first; an app id found twice is taken
/// from the first dir.
std::vector<std::pair<stored_log, history_dir*>> all_logs(std::vector<opened_dir>& dirs,
                                                          std::ostream& err);

/// One event log, parsed.
expected<std::vector<job_event>> load_events(history_dir& dir, const stored_log& log);

/// One timeline line: "+12.3 s  task_started  worker:0 RUNNING at host:port".
std::string timeline_line(const job_event& e, int64_t t0_ms);

} // namespace tony::history
