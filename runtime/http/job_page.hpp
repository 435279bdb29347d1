#pragma once

// The HTML of the tracking page: one job's state, its tasks and its
// diagnostics, rendered from a job_status. Pure functions of their inputs, so
// the live AM (runtime/am) and tony-history render the very same page, and
// tests check it without a server.
//
// Every link is relative ("api/job", "tensorboard/", "logs/<container>/..."),
// so the page works wherever it is mounted: at the AM's own root, behind the
// ResourceManager's web proxy (/proxy/<app-id>/), or under tony-history's
// /jobs/<app-id>/.

#include <cstdint>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony::http {

struct page_options {
  /// A live job's page reloads itself every `refresh_s` seconds until the job
  /// is final; a page from the event log never does.
  bool live = true;
  int refresh_s = 2;
  /// One line shown under the title ("from the event log ...").
  std::string note;
};

/// The job page at `now_ms` (wall clock, for the elapsed time of a running job).
std::string render_job_page(const job_status& st, int64_t now_ms,
                            const page_options& opts = {});

/// One row of tony-history's index page.
struct job_summary {
  std::string app_id;
  std::string name;
  std::string state;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::string source; // where its event log is
};

/// tony-history's index: every job, linking to "jobs/<app-id>/".
std::string render_index_page(const std::vector<job_summary>& jobs);

/// `text` with &, <, >, " and ' escaped for HTML text and attribute values.
std::string html_escape(const std::string& text);

/// "2024-05-01 12:00:03 UTC", or "" for 0.
std::string format_time(int64_t ms);

/// "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min".
std::string format_duration(int64_t ms);

/// The TensorBoard a job serves, "host:port": job_status::tensorboard_address
/// (the sidecar's or the chief's), or for a status without it the running
/// `tensorboard` task's. Empty when there is none (yet, or any more).
std::string tensorboard_address(const job_status& st);

/// True if the job has a TensorBoard at all (sidecar or chief).
bool has_tensorboard(const job_status& st);

} // namespace tony::http
