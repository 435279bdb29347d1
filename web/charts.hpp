#pragma once

// Server-made SVG for the job page (doc/tracking.md): the timeline of every
// task's runs and line charts of the tasks' resource use. Plain functions of
// their inputs returning markup, so the live page and tony-history draw the
// same pictures, nothing runs in the browser, and the tests read the
// pictures' parts in the DOM (ids, classes and data-* attributes).
//
//   timeline_chart   one row per task, one bar per run: asked for, granted,
//                    launched, registered, running, and its end
//   phase_chart      one row per task type: how many of its tasks were in
//                    each phase over time (the view of a big job)
//   line_chart       one line per task (or per type's min/median/max band)

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/history/timeline.hpp"

namespace tony::http::svg {

/// A row of the timeline: a task and its runs.
struct timeline_row {
  std::string label; // "worker:0"
  std::string href;  // where the label links ("?task=worker:0"), may be empty
  const history::task_runs* runs = nullptr;
};

/// The per-task timeline between `t0` and `t1` (wall-clock ms); runs still
/// going end at `now`.
std::string timeline_chart(const std::string& id, const std::vector<timeline_row>& rows,
                           int64_t t0, int64_t t1, int64_t now);

/// A task type's tasks over time, counted by phase (waiting, starting,
/// running, succeeded, failed).
struct phase_row {
  std::string label; // "worker (1000)"
  std::string href;  // "?type=worker"
  std::vector<const history::task_runs*> tasks;
};

std::string phase_chart(const std::string& id, const std::vector<phase_row>& rows,
                        int64_t t0, int64_t t1, int64_t now);

/// One line of a chart. `lo` and `hi`, when given, draw a band around it
/// (a type's min and max around its median).
struct line {
  std::string label;
  std::string href;
  std::vector<int64_t> t;
  std::vector<double> v;
  std::vector<double> lo;
  std::vector<double> hi;
};

struct chart_options {
  std::string id;    // "chart-memory"
  std::string title; // "Memory (resident)"
  std::string unit;  // "MiB", "cores", "%"
  int64_t t0 = 0;
  int64_t t1 = 0;
  double limit = -1; // a dashed line ("limit 2048 MiB"), when >= 0
  std::string limit_label;
  double y_max = 0; // 0: from the data
};

std::string line_chart(const chart_options& opts, const std::vector<line>& lines);

/// The colour of the `i`-th line (a palette readable on white).
const char* line_color(size_t i);

/// The legend of the timeline's colours, as HTML.
std::string timeline_legend();

} // namespace tony::http::svg
