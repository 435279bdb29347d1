#pragma once

// The HTML of the tracking page: one job's state, its tasks and its
// diagnostics, rendered from a job_status. Pure functions of their inputs, so
// the live AM (am/) and tony-history render the very same page, and
// tests check it without a server.
//
// Every link is relative ("api/job", "tensorboard/", "logs/<container>/..."),
// so the page works wherever it is mounted: at the AM's own root, behind the
// ResourceManager's web proxy (/proxy/<app-id>/), or under tony-history's
// /jobs/<app-id>/.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony::history {
struct job_record;
} // namespace tony::history

namespace tony::http {

struct page_options {
  /// A live job's page reloads itself every `refresh_s` seconds until the job
  /// is final; a page from the event log never does.
  bool live = true;
  int refresh_s = 2;
  /// One line shown under the title ("from the event log ...").
  std::string note;
  /// What the page shows (its query): one task (?task=worker:0), the tasks
  /// of one type (?type=worker, with ?state=FAILED and ?page=N, 100 a
  /// page), or the job (neither).
  std::string task;
  std::string type;
  std::string state;
  int page = 0;
  /// Beyond this many tasks the job's page groups them by type.
  size_t group_above = 40;
  /// tony-history: "open TensorBoard" starts one on the job's log dir, and
  /// the resolved job is at "config".
  bool tensorboard_on_demand = false;
  bool config_link = false;
};

/// The query of a page request as page_options (task, type, state, page).
void read_page_query(const std::multimap<std::string, std::string>& params,
                     page_options& opts);

/// The job page at `now_ms` (wall clock, for the elapsed time of a running
/// job). With `rec` (its timeline and metrics) it draws them too.
std::string render_job_page(const job_status& st, int64_t now_ms,
                            const page_options& opts = {},
                            const history::job_record* rec = nullptr);

/// Tasks per page of a type's list.
constexpr size_t tasks_per_page = 100;

/// One row of tony-history's index page.
struct job_summary {
  std::string app_id;
  std::string name;
  std::string state;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::string source; // where its event log is
  std::string user = {};
  std::string queue = {};
  std::string backend = {};
};

/// The index's filters (its query: user, queue, state, name; name matches
/// a part, case-insensitive; the rest exactly).
struct index_filter {
  std::string user;
  std::string queue;
  std::string state;
  std::string name;

  bool matches(const job_summary& j) const;
  bool empty() const {
    return user.empty() && queue.empty() && state.empty() && name.empty();
  }
};

/// tony-history's index: every job, linking to "jobs/<app-id>/"; with a
/// filter, the jobs it matches and a form to change it. `total` is the
/// number of jobs before filtering (0: jobs.size()); `retention` a line
/// saying how long jobs are kept (empty: forever).
std::string render_index_page(const std::vector<job_summary>& jobs,
                              const index_filter& filter = {}, size_t total = 0,
                              const std::string& retention = {});

/// "700 MiB", "1.5 GiB" for a byte count.
std::string format_bytes(int64_t bytes);

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
