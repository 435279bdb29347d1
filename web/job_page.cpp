// The job page's frame (its head, summary, diagnostics and foot), its three
// views (the job, a type's tasks, one task), the stylesheet it shares with
// tony-history's index, and the formatters of web/job_page.hpp. The task
// tables are web/job_page_tasks.cpp's, the pictures web/job_page_charts.cpp's.

#include "web/job_page.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>

#include <nlohmann/json.hpp>

#include "runtime/history/job_record.hpp"
#include "web/job_page_parts.hpp"

namespace tony::http {

const char* const page::style = R"(
body{font-family:-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px;color:#1f2328;background:#fff;max-width:1400px}
h1{font-size:22px;margin:0 0 4px 0;display:inline-block}
h2{font-size:16px;margin:28px 0 8px 0}
.note{color:#59636e;margin:4px 0 12px 0}
.state{display:inline-block;padding:2px 8px;border-radius:10px;font-size:12px;font-weight:600;
  background:#eaeef2;color:#1f2328;vertical-align:middle}
.state-RUNNING,.state-REGISTERING,.state-REGISTERED,.state-LAUNCHED{background:#ddf4ff;color:#0550ae}
.state-ALLOCATING,.state-REQUESTED,.state-ALLOCATED,.state-NEW,.state-RESTARTING{background:#fff8c5;color:#7d4e00}
.state-SUCCEEDED{background:#dafbe1;color:#116329}
.state-FAILED,.state-LOST{background:#ffebe9;color:#a40e26}
.state-KILLED{background:#eaeef2;color:#59636e}
dl.summary{display:grid;grid-template-columns:max-content auto;gap:4px 16px;margin:12px 0}
dl.summary dt{color:#59636e}
dl.summary dd{margin:0}
table{border-collapse:collapse;font-size:14px;max-width:100%}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid #d1d9e0;vertical-align:top}
td{white-space:nowrap}
td.logs{white-space:normal;min-width:9em}td.source{white-space:normal;word-break:break-all;min-width:12em;max-width:28em;color:#555;font-size:.85em}
tr.diag td{white-space:normal}
th{background:#f6f8fa;font-weight:600}
td.num{text-align:right}
tr.diag td{border-bottom:1px solid #d1d9e0;padding-top:0}
pre{background:#f6f8fa;padding:8px 12px;border-radius:6px;white-space:pre-wrap;font-size:12px;margin:0;max-width:1200px}
#diagnostics pre{background:#ffebe9}
#waiting pre{background:#fff8c5}
footer{margin-top:24px;color:#59636e;font-size:12px}
a{color:#0969da}
nav.crumbs{margin:0 0 8px 0;font-size:14px}
nav.filters a,nav.pages a{margin-right:10px}
nav.filters a.on{font-weight:700;color:#1f2328;text-decoration:none}
svg.timeline{width:100%;max-width:1100px;height:auto;display:block;font-size:11px}
svg text{fill:#59636e;font-family:inherit}
svg text.label{fill:#1f2328;font-size:12px}
svg a text.label{fill:#0969da}
svg .grid{stroke:#eaeef2;stroke-width:1}
.seg-waiting{fill:#d0d7de;background:#d0d7de}
.seg-launching{fill:#f2cc60;background:#f2cc60}
.seg-starting{fill:#d4a72c;background:#d4a72c}
.seg-registered{fill:#80ccff;background:#80ccff}
.seg-running{fill:#218bff;background:#218bff}
.seg-succeeded,.end-SUCCEEDED{fill:#1a7f37;background:#1a7f37}
.seg-failed,.end-FAILED,.end-LOST{fill:#cf222e;background:#cf222e}
.seg-killed,.end-KILLED{fill:#8c959f;background:#8c959f}
ul.legend{list-style:none;padding:0;margin:6px 0 0 0;font-size:12px;color:#59636e;display:flex;flex-wrap:wrap;gap:4px 16px}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.charts{display:flex;flex-wrap:wrap;gap:12px 24px}
figure.chart{margin:0;width:540px;max-width:100%}
figure.chart figcaption{font-size:13px;font-weight:600;margin-bottom:2px}
svg.chart{width:100%;height:auto;font-size:10px}
svg.chart .line{fill:none;stroke-width:1.6}
svg.chart .band{opacity:.15;stroke:none}
svg.chart .limit{stroke:#cf222e;stroke-dasharray:4 3}
svg.chart text.limit-label{fill:#cf222e}
form.filter{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin:8px 0 16px 0;font-size:13px}
form.filter label{display:flex;flex-direction:column;color:#59636e}
form.filter input,form.filter select{font:inherit;padding:3px 6px}
a.button{display:inline-block;padding:3px 10px;border:1px solid #d1d9e0;border-radius:6px;text-decoration:none;background:#f6f8fa}
)";

namespace {

using page::attention_section;
using page::metrics_section;
using page::phases_section;
using page::query_value;
using page::span_of;
using page::state_filters;
using page::state_tally;
using page::style;
using page::task_charts;
using page::tasks_table;
using page::timeline_section;
using page::types_table;

// The job's log dir for TensorBoard ([tensorboard] log_dir), if any.
std::string tensorboard_log_dir(const std::string& config_json) {
  auto j = nlohmann::json::parse(config_json, nullptr, false);
  if (!j.is_object() || !j.contains("tensorboard") || !j["tensorboard"].is_object())
    return {};
  auto& tb = j["tensorboard"];
  return tb.contains("log_dir") && tb["log_dir"].is_string()
             ? tb["log_dir"].get<std::string>()
             : std::string{};
}

// -- the page's frame ------------------------------------------------------------

std::string page_head(const job_status& st, const page_options& opts,
                      const std::string& subtitle) {
  bool final = is_final(st);
  std::string title = st.name.empty() ? st.app_id : st.name;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<title>" + html_escape(subtitle.empty() ? title : subtitle + " - " + title) +
       " (" + std::string{to_string(st.state)} + ") - tony</title>\n";
  if (opts.live && !final)
    h += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(opts.refresh_s) +
         "\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<style>" + std::string{style} + "</style></head>\n<body>\n";
  if (!subtitle.empty())
    h += "<nav class=\"crumbs\"><a href=\"./\">" + html_escape(title) + "</a> / " +
         html_escape(subtitle) + "</nav>\n";
  h += "<header><h1 id=\"job-name\">" + html_escape(subtitle.empty() ? title : subtitle) +
       "</h1> <span id=\"job-state\" class=\"state state-" +
       std::string{to_string(st.state)} + "\">" + to_string(st.state) +
       "</span></header>\n";
  if (!opts.note.empty())
    h += "<p class=\"note\">" + html_escape(opts.note) + "</p>\n";
  return h;
}

std::string page_foot(const job_status& st, const page_options& opts, int64_t now_ms) {
  bool final = is_final(st);
  return "<footer>tony &middot; " +
         html_escape(opts.live ? (final ? "final status"
                                        : "refreshes every " +
                                              std::to_string(opts.refresh_s) + " s")
                               : "from the event log") +
         " &middot; " + html_escape(format_time(now_ms)) + "</footer>\n</body></html>\n";
}

std::string tensorboard_row(const job_status& st, const page_options& opts,
                            const history::job_record* rec) {
  bool final = is_final(st);
  if (has_tensorboard(st) && opts.live && !final)
    return "<a id=\"tensorboard-link\" href=\"tensorboard/\">tensorboard/</a>";
  auto log_dir = rec ? tensorboard_log_dir(rec->config_json) : std::string{};
  if (opts.tensorboard_on_demand && !log_dir.empty())
    return "<a id=\"tensorboard-link\" class=\"button\" href=\"tensorboard/\">open "
           "TensorBoard</a> <small class=\"note\">on " +
           html_escape(log_dir) + "</small>";
  if (has_tensorboard(st))
    return "not running (the job ended)";
  return {};
}

std::string summary_section(const job_status& st, int64_t now_ms,
                            const page_options& opts, const history::job_record* rec) {
  std::string h = "<dl class=\"summary\">\n";
  auto row = [&](const std::string& k, const std::string& v_html, const char* id = "") {
    h += "<dt>" + k + "</dt><dd" +
         (*id ? std::string{" id=\""} + id + "\"" : std::string{}) + ">" + v_html +
         "</dd>\n";
  };
  row("Application", html_escape(st.app_id), "app-id");
  if (rec)
    for (auto key : {"user", "queue"})
      if (auto i = rec->info.find(key); i != rec->info.end() && !i->second.empty())
        row(key == std::string{"user"} ? "User" : "Queue", html_escape(i->second));
  if (st.attempt > 1)
    row("Attempt", std::to_string(st.attempt), "attempt");
  if (st.started_ms > 0) {
    row("Started", html_escape(format_time(st.started_ms)));
    if (st.finished_ms > 0)
      row("Finished", html_escape(format_time(st.finished_ms)));
    auto end = st.finished_ms > 0 ? st.finished_ms : now_ms;
    row("Elapsed", html_escape(format_duration(end - st.started_ms)), "elapsed");
  }
  if (auto tb = tensorboard_row(st, opts, rec); !tb.empty())
    row("TensorBoard", tb);
  if (opts.config_link)
    row("Job", "<a id=\"config-link\" href=\"config\">the resolved job.toml</a>");
  row("JSON", "<a href=\"api/job\">api/job</a> &middot; <a "
              "href=\"api/job?metrics=1\">with metrics</a>");
  return h + "</dl>\n";
}

// A gang that waits says why (core/waiting.hpp): not an error, so not red.
std::string diagnostics_section(const job_status& st) {
  if (st.diagnostics.empty())
    return {};
  bool waiting =
      st.state == job_state::allocating && st.diagnostics.rfind("waiting for ", 0) == 0;
  return std::string{waiting ? "<section id=\"waiting\"><h2>Waiting"
                             : "<section id=\"diagnostics\"><h2>Diagnostics"} +
         "</h2><pre>" + html_escape(st.diagnostics) + "</pre></section>\n";
}

// -- the views ---------------------------------------------------------------------

std::vector<const task_status*> all_tasks(const job_status& st) {
  std::vector<const task_status*> out;
  for (auto& t : st.tasks)
    out.push_back(&t);
  return out;
}

std::string job_view(const job_status& st, int64_t now, const page_options& opts,
                     const history::job_record* rec) {
  auto h = page_head(st, opts, "");
  h += summary_section(st, now, opts, rec);
  h += diagnostics_section(st);
  auto tasks = all_tasks(st);
  auto s = span_of(st, rec, now);
  bool grouped = tasks.size() > opts.group_above;
  h += grouped ? phases_section(st, rec, s, now) : timeline_section(tasks, rec, s, now);
  h += metrics_section(tasks, rec, s);
  h += "<h2>Tasks <small class=\"note\">" + html_escape(state_tally(tasks)) +
       "</small></h2>\n";
  if (grouped)
    h += types_table(st, rec) + attention_section(st, rec);
  else
    h += tasks_table(tasks, rec);
  return h + page_foot(st, opts, now);
}

std::string type_view(const job_status& st, int64_t now, const page_options& opts,
                      const history::job_record* rec) {
  auto h = page_head(st, opts, opts.type + " tasks");
  std::vector<const task_status*> of_type, shown;
  for (auto& t : st.tasks)
    if (t.task.type == opts.type) {
      of_type.push_back(&t);
      if (opts.state.empty() || to_string(t.state) == opts.state)
        shown.push_back(&t);
    }
  if (of_type.empty())
    return h + "<p class=\"note\">This job has no tasks of type " +
           html_escape(opts.type) + ". <a href=\"./\">Back to the job</a></p>" +
           page_foot(st, opts, now);
  h += state_filters(opts.type, opts.state, of_type);
  auto pages = std::max<size_t>((shown.size() + tasks_per_page - 1) / tasks_per_page, 1);
  auto page = std::min<size_t>(static_cast<size_t>(std::max(opts.page, 0)), pages - 1);
  std::vector<const task_status*> slice(
      shown.begin() +
          static_cast<std::ptrdiff_t>(std::min(shown.size(), page * tasks_per_page)),
      shown.begin() + static_cast<std::ptrdiff_t>(
                          std::min(shown.size(), (page + 1) * tasks_per_page)));
  auto s = span_of(st, rec, now);
  h += timeline_section(slice, rec, s, now);
  h += metrics_section(slice, rec, s);
  h += "<h2>Tasks <small class=\"note\">" +
       std::to_string(slice.empty() ? 0 : page * tasks_per_page + 1) + "&ndash;" +
       std::to_string(page * tasks_per_page + slice.size()) + " of " +
       std::to_string(shown.size()) + "</small></h2>\n";
  h += tasks_table(slice, rec);
  if (pages > 1) {
    auto base = "?type=" + query_value(opts.type) +
                (opts.state.empty() ? "" : "&state=" + query_value(opts.state));
    h += "<nav class=\"pages\">";
    for (size_t p = 0; p < pages; ++p)
      h += p == page ? "<b>" + std::to_string(p + 1) + "</b> "
                     : "<a href=\"" + html_escape(base + "&page=" + std::to_string(p)) +
                           "\">" + std::to_string(p + 1) + "</a>";
    h += "</nav>\n";
  }
  return h + page_foot(st, opts, now);
}

std::string task_view(const job_status& st, int64_t now, const page_options& opts,
                      const history::job_record* rec) {
  auto h = page_head(st, opts, opts.task);
  const task_status* task = nullptr;
  for (auto& t : st.tasks)
    if (to_string(t.task) == opts.task)
      task = &t;
  if (!task)
    return h + "<p class=\"note\">This job has no task " + html_escape(opts.task) +
           ". <a href=\"./\">Back to the job</a></p>" + page_foot(st, opts, now);
  h += tasks_table({task}, rec);
  auto s = span_of(st, rec, now);
  h += timeline_section({task}, rec, s, now);
  if (rec)
    h += task_charts(*task, rec, s);
  return h + page_foot(st, opts, now);
}

} // namespace

// -- public --------------------------------------------------------------------------

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string format_time(int64_t ms) {
  if (ms <= 0)
    return "";
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string format_duration(int64_t ms) {
  if (ms < 0)
    ms = 0;
  if (ms < 1000)
    return std::to_string(ms) + " ms";
  char buf[40];
  if (ms < 60000) {
    std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(ms) / 1000.0);
  } else if (ms < 3600000) {
    std::snprintf(buf, sizeof(buf), "%d min %02d s", static_cast<int>(ms / 60000),
                  static_cast<int>(ms / 1000 % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%d h %02d min", static_cast<int>(ms / 3600000),
                  static_cast<int>(ms / 60000 % 60));
  }
  return buf;
}

std::string format_bytes(int64_t bytes) {
  char buf[40];
  constexpr double mib = 1024.0 * 1024.0;
  auto b = static_cast<double>(std::max<int64_t>(bytes, 0));
  if (b >= 10.0 * 1024 * mib)
    std::snprintf(buf, sizeof(buf), "%.0f GiB", b / (1024 * mib));
  else if (b >= 1024 * mib)
    std::snprintf(buf, sizeof(buf), "%.1f GiB", b / (1024 * mib));
  else
    std::snprintf(buf, sizeof(buf), "%.0f MiB", b / mib);
  return buf;
}

bool has_tensorboard(const job_status& st) {
  if (!st.tensorboard_task.empty())
    return true;
  for (auto& t : st.tasks)
    if (t.task.type == "tensorboard")
      return true;
  return false;
}

std::string tensorboard_address(const job_status& st) {
  // The AM says where its TensorBoard is (sidecar or chief); a job status
  // written before it did is read the old way, from the sidecar's task.
  if (!st.tensorboard_task.empty())
    return st.tensorboard_address;
  for (auto& t : st.tasks) {
    if (t.task.type != "tensorboard" || t.port <= 0)
      continue;
    if (t.state != task_state::running && t.state != task_state::registered)
      continue;
    auto host = t.host.empty() || t.host == "0.0.0.0" ? std::string{"127.0.0.1"} : t.host;
    return host + ":" + std::to_string(t.port);
  }
  return {};
}

void read_page_query(const std::multimap<std::string, std::string>& params,
                     page_options& opts) {
  auto get = [&](const char* key) {
    auto i = params.find(key);
    return i == params.end() ? std::string{} : i->second;
  };
  opts.task = get("task");
  opts.type = get("type");
  opts.state = get("state");
  auto page = get("page");
  opts.page = !page.empty() && page.size() < 7 &&
                      page.find_first_not_of("0123456789") == std::string::npos
                  ? std::stoi(page)
                  : 0;
}

std::string render_job_page(const job_status& st, int64_t now_ms,
                            const page_options& opts, const history::job_record* rec) {
  if (!opts.task.empty())
    return task_view(st, now_ms, opts, rec);
  if (!opts.type.empty())
    return type_view(st, now_ms, opts, rec);
  return job_view(st, now_ms, opts, rec);
}

} // namespace tony::http
