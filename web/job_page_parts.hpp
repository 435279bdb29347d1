#pragma once

// The parts of the job page (web/job_page.hpp) that its files share; not an
// interface beyond web/. The page's frame, its views and the stylesheet are
// web/job_page.cpp's, the task tables and the links web/job_page_tasks.cpp's,
// the timeline and resource charts web/job_page_charts.cpp's, and
// tony-history's index web/index_page.cpp's.

#include <cstdint>
#include <string>
#include <vector>

#include "messages/types.hpp"
#include "web/job_page.hpp"

namespace tony::history {
struct job_record;
} // namespace tony::history

namespace tony::http::page {

/// The stylesheet of the job page and the index.
extern const char* const style;

// -- links (web/job_page_tasks.cpp) --------------------------------------------------

/// A URL path segment: [A-Za-z0-9_.-] as they are, anything else %-escaped.
std::string url_segment(const std::string& s);

/// A query value: as url_segment, but ':' stays ("worker:0").
std::string query_value(const std::string& s);

/// "?task=worker:0".
std::string task_href(const task_id& t);

// -- task tables (web/job_page_tasks.cpp) --------------------------------------------

/// "3 RUNNING, 1 FAILED": the tasks counted by state.
std::string state_tally(const std::vector<const task_status*>& tasks);

/// The table of `tasks`, one row each (with `rec`, their memory and CPU).
std::string tasks_table(const std::vector<const task_status*>& tasks,
                        const history::job_record* rec);

/// A big job's table of task types, each linking to its tasks.
std::string types_table(const job_status& st, const history::job_record* rec);

/// The failed tasks, the first 20; empty when none failed.
std::string attention_section(const job_status& st, const history::job_record* rec);

/// A type's links to its tasks of each state, `current` marked.
std::string state_filters(const std::string& type, const std::string& current,
                          const std::vector<const task_status*>& tasks);

// -- pictures (web/job_page_charts.cpp) ----------------------------------------------

// The time span the pictures cover.
struct span {
  int64_t t0 = 0;
  int64_t t1 = 0;
};

/// From the job's (or its record's) first event to its end, or `now`.
span span_of(const job_status& st, const history::job_record* rec, int64_t now);

/// Each task's runs; empty without `rec` or tasks.
std::string timeline_section(const std::vector<const task_status*>& tasks,
                             const history::job_record* rec, const span& s, int64_t now);

/// Each task type's tasks by phase (a big job's timeline); empty without `rec`.
std::string phases_section(const job_status& st, const history::job_record* rec,
                           const span& s, int64_t now);

/// The tasks' resource charts: a line per task up to 10, else a band per type.
std::string metrics_section(const std::vector<const task_status*>& tasks,
                            const history::job_record* rec, const span& s);

/// One task's resource charts, with its memory limit and its GPUs. Requires
/// `rec`.
std::string task_charts(const task_status& t, const history::job_record* rec,
                        const span& s);

} // namespace tony::http::page
