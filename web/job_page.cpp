#include "web/job_page.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "runtime/history/job_record.hpp"
#include "web/charts.hpp"

namespace tony::http {

namespace {

bool is_url(const std::string& s) {
  return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0;
}

// Final task states (doc/lifecycle.md).
bool task_final(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED" || state == "KILLED" ||
         state == "LOST";
}

// A URL path segment: container ids and file names are [A-Za-z0-9_.-], but
// nothing else may break the link.
std::string url_segment(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// A query value: task names ("worker:0") and states stay readable.
std::string query_value(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == ':') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string task_href(const task_id& t) {
  return "?task=" + query_value(to_string(t));
}

std::string log_links(const task_status& t) {
  if (t.log_dir.empty() || t.container_id.empty())
    return "";
  std::string out;
  for (auto file : {"stdout", "stderr", "executor.log"}) {
    std::string href;
    if (is_url(t.log_dir)) // a NodeManager's containerlogs page (YARN)
      href = t.log_dir + "/" + file + "/?start=0";
    else
      href = "logs/" + url_segment(t.container_id) + "/" + file;
    if (!out.empty())
      out += " ";
    out += "<a href=\"" + html_escape(href) + "\">" + file + "</a>";
  }
  return out;
}

// A task's time of day; the date is the job's and in the tooltip.
std::string clock_cell(int64_t ms) {
  if (ms <= 0)
    return "<td></td>";
  auto full = format_time(ms);
  auto clock = full.size() >= 19 ? full.substr(11, 8) : full;
  return "<td title=\"" + html_escape(full) + "\">" + html_escape(clock) + "</td>";
}

// The container's sequence ("01_000003"): the rest is the job's and in the
// tooltip, so the column stays narrow.
std::string container_cell(const std::string& id) {
  if (id.empty())
    return "<td></td>";
  auto shown = id;
  auto cut = id.rfind('_');
  if (cut != std::string::npos && cut > 0)
    cut = id.rfind('_', cut - 1);
  if (cut != std::string::npos)
    shown = "&hellip;" + html_escape(id.substr(cut));
  else
    shown = html_escape(id);
  return "<td class=\"container\" title=\"" + html_escape(id) + "\">" + shown + "</td>";
}

const char* style = R"(
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

// -- the record's pieces the page reads -------------------------------------------

// Memory per task type from the resolved job ([tasks.<type>] memory), MiB.
std::map<std::string, int64_t> memory_limits(const std::string& config_json) {
  std::map<std::string, int64_t> out;
  auto j = nlohmann::json::parse(config_json, nullptr, false);
  if (!j.is_object() || !j.contains("tasks") || !j["tasks"].is_array())
    return out;
  for (auto& t : j["tasks"]) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
      continue;
    auto cap = t.find("capability");
    if (cap != t.end() && cap->is_object() && cap->contains("memory_mb") &&
        (*cap)["memory_mb"].is_number_integer())
      out[t["name"].get<std::string>()] = (*cap)["memory_mb"].get<int64_t>();
  }
  return out;
}

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

struct usage {
  bool known = false;
  task_sample latest;
  int64_t peak = 0;
  int32_t gpus = 0;
};

usage usage_of(const history::job_record* rec, const task_id& t) {
  usage u;
  if (rec)
    u.known = rec->metrics.summary(t, u.latest, u.peak, u.gpus);
  return u;
}

std::string cpu_text(float cores) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", static_cast<double>(cores));
  return buf;
}

// The time span the pictures cover.
struct span {
  int64_t t0 = 0;
  int64_t t1 = 0;
};

span span_of(const job_status& st, const history::job_record* rec, int64_t now) {
  span s;
  s.t0 = st.started_ms;
  if (rec && rec->runs.first_ms() > 0 && (s.t0 == 0 || rec->runs.first_ms() < s.t0))
    s.t0 = rec->runs.first_ms();
  s.t1 = st.finished_ms > 0 ? st.finished_ms : now;
  if (rec)
    s.t1 = std::max(s.t1, rec->runs.last_ms());
  if (s.t0 == 0)
    s.t0 = s.t1;
  return s;
}

// -- the page's frame ------------------------------------------------------------

std::string page_head(const job_status& st, const page_options& opts,
                      const std::string& subtitle) {
  bool final = is_final(st);
  std::string title = st.name.empty() ? st.app_id : st.name;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<title>" + html_escape(subtitle.empty() ? title : subtitle + " - " + title) +
       " (" + html_escape(st.state) + ") - tony</title>\n";
  if (opts.live && !final)
    h += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(opts.refresh_s) +
         "\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<style>" + std::string{style} + "</style></head>\n<body>\n";
  if (!subtitle.empty())
    h += "<nav class=\"crumbs\"><a href=\"./\">" + html_escape(title) + "</a> / " +
         html_escape(subtitle) + "</nav>\n";
  h += "<header><h1 id=\"job-name\">" + html_escape(subtitle.empty() ? title : subtitle) +
       "</h1> <span id=\"job-state\" class=\"state state-" + html_escape(st.state) +
       "\">" + html_escape(st.state) + "</span></header>\n";
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
  bool waiting = st.state == "ALLOCATING" && st.diagnostics.rfind("waiting for ", 0) == 0;
  return std::string{waiting ? "<section id=\"waiting\"><h2>Waiting"
                             : "<section id=\"diagnostics\"><h2>Diagnostics"} +
         "</h2><pre>" + html_escape(st.diagnostics) + "</pre></section>\n";
}

std::string state_tally(const std::vector<const task_status*>& tasks) {
  std::map<std::string, int> counts;
  for (auto* t : tasks)
    ++counts[t->state];
  std::string tally;
  for (auto& [state, n] : counts)
    tally += (tally.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  return tally;
}

// -- the task table ---------------------------------------------------------------

std::string memory_cell(const usage& u) {
  if (!u.known)
    return "<td class=\"num\"></td>";
  return "<td class=\"num\" title=\"peak " + html_escape(format_bytes(u.peak)) + "\">" +
         html_escape(format_bytes(u.latest.rss_bytes)) + "</td>";
}

std::string task_row(const task_status& t, const usage& u) {
  auto name = to_string(t.task);
  auto id = "task-" + t.task.type + "-" + std::to_string(t.task.index);
  std::string h = "<tr class=\"task\" id=\"" + html_escape(id) + "\" data-task=\"" +
                  html_escape(name) + "\" data-state=\"" + html_escape(t.state) + "\">";
  h += "<td><a href=\"" + html_escape(task_href(t.task)) + "\">" + html_escape(name) +
       "</a>" + (t.tracked ? "" : " <small>(untracked)</small>") + "</td>";
  h += "<td>" +
       (t.port > 0 ? html_escape(t.host + ":" + std::to_string(t.port))
                   : html_escape(t.host)) +
       "</td>";
  h += "<td><span class=\"state state-" + html_escape(t.state) + "\">" +
       html_escape(t.state) + "</span></td>";
  h += "<td class=\"num\">" + std::to_string(t.attempt) +
       (t.restarts > 0 ? " <small>+" + std::to_string(t.restarts) + "</small>" : "") +
       "</td>";
  h += "<td class=\"num\">" +
       (task_final(t.state) && !t.container_id.empty() ? std::to_string(t.exit_code)
                                                       : std::string{}) +
       "</td>";
  h += clock_cell(t.started_ms);
  h += clock_cell(t.finished_ms);
  h += memory_cell(u);
  h += "<td class=\"num\">" +
       (u.known && !task_final(t.state) ? cpu_text(u.latest.cpu_cores) : std::string{}) +
       "</td>";
  h += container_cell(t.container_id);
  h += "<td class=\"logs\">" + log_links(t) + "</td></tr>\n";
  if (!t.diagnostics.empty())
    h += "<tr class=\"diag\"><td></td><td colspan=\"10\"><pre>" +
         html_escape(t.diagnostics) + "</pre></td></tr>\n";
  return h;
}

std::string tasks_table(const std::vector<const task_status*>& tasks,
                        const history::job_record* rec) {
  std::string h =
      "<table id=\"tasks\"><thead><tr><th>Task</th><th>Host:port</th><th>State</th>"
      "<th>Attempt</th><th>Exit</th><th>Started</th><th>Finished</th>"
      "<th title=\"resident memory of the task's processes now (hover: "
      "peak)\">Memory</th>"
      "<th title=\"cores busy\">CPU</th><th>Container</th><th>Logs</th></tr></thead>\n"
      "<tbody>\n";
  for (auto* t : tasks)
    h += task_row(*t, usage_of(rec, t->task));
  return h + "</tbody></table>\n";
}

} // namespace

// -- pictures ------------------------------------------------------------------------

namespace {

std::string timeline_section(const std::vector<const task_status*>& tasks,
                             const history::job_record* rec, const span& s, int64_t now) {
  if (!rec || tasks.empty())
    return {};
  std::vector<svg::timeline_row> rows;
  for (auto* t : tasks)
    rows.push_back({to_string(t->task), task_href(t->task), rec->runs.find(t->task)});
  return "<section id=\"timeline-section\"><h2>Timeline</h2>" +
         svg::timeline_chart("timeline", rows, s.t0, s.t1, now) + svg::timeline_legend() +
         "</section>\n";
}

std::string phases_section(const job_status& st, const history::job_record* rec,
                           const span& s, int64_t now) {
  if (!rec)
    return {};
  std::vector<svg::phase_row> rows;
  std::map<std::string, size_t> index;
  for (auto& t : rec->runs.tasks()) {
    auto [pos, added] = index.emplace(t.task.type, rows.size());
    if (added)
      rows.push_back({t.task.type, "?type=" + query_value(t.task.type), {}});
    rows[pos->second].tasks.push_back(&t);
  }
  for (auto& r : rows)
    r.label += " (" + std::to_string(r.tasks.size()) + ")";
  (void)st;
  return "<section id=\"timeline-section\"><h2>Timeline <small class=\"note\">tasks per "
         "type by phase; pick a type for each task's runs</small></h2>" +
         svg::phase_chart("timeline", rows, s.t0, s.t1, now) + svg::timeline_legend() +
         "</section>\n";
}

struct metric_def {
  const char* id;
  const char* title;
  const char* unit;
  bool gpu;
};

const metric_def metric_defs[] = {
    {"memory", "Memory (resident, the task's processes)", "MiB", false},
    {"cpu", "CPU", "cores", false},
    {"gpu-util", "GPU utilisation", "%", true},
    {"gpu-memory", "GPU memory", "MiB", true},
};

std::vector<double> values_of(const metrics::task_series& s, const std::string& id) {
  std::vector<double> v;
  constexpr double mib = 1024.0 * 1024.0;
  if (id == "memory")
    for (auto x : s.rss_bytes)
      v.push_back(static_cast<double>(x) / mib);
  else if (id == "cpu")
    for (auto x : s.cpu_cores)
      v.push_back(x);
  else if (id == "gpu-util")
    for (auto x : s.gpu_util)
      v.push_back(x);
  else
    for (auto x : s.gpu_used_bytes)
      v.push_back(static_cast<double>(x) / mib);
  return v;
}

std::string figure(const svg::chart_options& o, const std::vector<svg::line>& lines) {
  std::string h = "<figure class=\"chart\"><figcaption>" + html_escape(o.title) +
                  "</figcaption>" + svg::line_chart(o, lines);
  if (lines.size() > 1) {
    h += "<ul class=\"legend\">";
    for (size_t i = 0; i < lines.size() && i < 12; ++i) {
      auto name = html_escape(lines[i].label);
      h += "<li><span class=\"swatch\" style=\"background:" +
           std::string{svg::line_color(i)} + "\"></span>" +
           (lines[i].href.empty()
                ? name
                : "<a href=\"" + html_escape(lines[i].href) + "\">" + name + "</a>") +
           "</li>";
    }
    h += "</ul>";
  }
  return h + "</figure>";
}

} // namespace

namespace {

// A series' value at `t`: its last point at or before `t`, unless that point
// ended more than two steps before (the task was not running then).
bool value_at(const metrics::task_series& s, const std::vector<double>& v, int64_t t,
              double& out) {
  auto it = std::upper_bound(s.time_ms.begin(), s.time_ms.end(), t);
  if (it == s.time_ms.begin())
    return false;
  auto i = static_cast<size_t>(it - s.time_ms.begin()) - 1;
  if (i >= v.size() || t - s.time_ms[i] > 2 * std::max<int64_t>(s.step_ms, 1000))
    return false;
  out = v[i];
  return true;
}

// One band per type: the min, median and max of its tasks at each of
// `columns` times.
std::vector<svg::line>
type_bands(const std::map<std::string, std::vector<metrics::task_series>>& by_type,
           const std::string& metric, const span& s) {
  constexpr int columns = 120;
  std::vector<svg::line> out;
  for (auto& [type, series] : by_type) {
    std::vector<std::vector<double>> values;
    for (auto& x : series)
      values.push_back(values_of(x, metric));
    svg::line l;
    l.label = type + " (min, median, max of " +
              base::plural(static_cast<int64_t>(series.size()), "task") + ")";
    l.href = "?type=" + query_value(type);
    for (int c = 0; c <= columns; ++c) {
      auto t = s.t0 + (s.t1 - s.t0) * c / columns;
      std::vector<double> at;
      for (size_t i = 0; i < series.size(); ++i) {
        double v = 0;
        if (value_at(series[i], values[i], t, v))
          at.push_back(v);
      }
      if (at.empty())
        continue;
      std::sort(at.begin(), at.end());
      l.t.push_back(t);
      l.lo.push_back(at.front());
      l.v.push_back(at[at.size() / 2]);
      l.hi.push_back(at.back());
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::string metrics_section(const std::vector<const task_status*>& tasks,
                            const history::job_record* rec, const span& s) {
  if (!rec)
    return {};
  bool per_task = tasks.size() <= 10;
  std::vector<metrics::task_series> series;
  std::map<std::string, std::vector<metrics::task_series>> by_type;
  bool any = false, gpus = false;
  for (auto* t : tasks) {
    auto x = rec->metrics.series(t->task);
    any = any || !x.time_ms.empty();
    gpus = gpus || x.has_gpus();
    if (per_task)
      series.push_back(std::move(x));
    else if (!x.time_ms.empty())
      by_type[t->task.type].push_back(std::move(x));
  }
  std::string h = "<section id=\"metrics\"><h2>Resources</h2>";
  if (!any)
    return h + "<p class=\"note\">No samples yet: executors send them with their "
               "heartbeats once their command runs.</p></section>\n";
  h += "<div class=\"charts\">";
  for (auto& m : metric_defs) {
    if (m.gpu && !gpus)
      continue;
    svg::chart_options o{
        std::string{"chart-"} + m.id, m.title, m.unit, s.t0, s.t1, -1, {}, 0};
    std::vector<svg::line> lines;
    if (per_task) {
      for (size_t i = 0; i < series.size(); ++i)
        if (!series[i].time_ms.empty())
          lines.push_back({to_string(tasks[i]->task),
                           task_href(tasks[i]->task),
                           series[i].time_ms,
                           values_of(series[i], m.id),
                           {},
                           {}});
    } else {
      lines = type_bands(by_type, m.id, s);
    }
    h += figure(o, lines);
  }
  return h + "</div></section>\n";
}

// -- the views ---------------------------------------------------------------------

std::vector<const task_status*> all_tasks(const job_status& st) {
  std::vector<const task_status*> out;
  for (auto& t : st.tasks)
    out.push_back(&t);
  return out;
}

std::string types_table(const job_status& st, const history::job_record* rec) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const task_status*>> by_type;
  for (auto& t : st.tasks) {
    if (!by_type.count(t.task.type))
      order.push_back(t.task.type);
    by_type[t.task.type].push_back(&t);
  }
  std::string h = "<table id=\"types\"><thead><tr><th>Type</th><th>Tasks</th>"
                  "<th>States</th><th>Memory now (median / max)</th><th>Peak memory</th>"
                  "</tr></thead><tbody>\n";
  for (auto& type : order) {
    auto& tasks = by_type[type];
    std::vector<int64_t> now;
    int64_t peak = 0;
    for (auto* t : tasks) {
      auto u = usage_of(rec, t->task);
      if (u.known && !task_final(t->state))
        now.push_back(u.latest.rss_bytes);
      peak = std::max(peak, u.peak);
    }
    std::sort(now.begin(), now.end());
    std::string mem = now.empty() ? ""
                                  : format_bytes(now[now.size() / 2]) + " / " +
                                        format_bytes(now.back());
    h += "<tr class=\"type\" data-type=\"" + html_escape(type) +
         "\"><td><a href=\"?type=" + html_escape(query_value(type)) + "\">" +
         html_escape(type) + "</a></td>";
    h += "<td class=\"num\">" + std::to_string(tasks.size()) + "</td>";
    h += "<td class=\"logs\">" + html_escape(state_tally(tasks)) + "</td>";
    h += "<td>" + html_escape(mem) + "</td><td>" +
         (peak > 0 ? html_escape(format_bytes(peak)) : std::string{}) + "</td></tr>\n";
  }
  return h + "</tbody></table>\n";
}

// The tasks that failed, first 20: a big job's page names them at once.
std::string attention_section(const job_status& st, const history::job_record* rec) {
  std::vector<const task_status*> bad;
  size_t total = 0;
  for (auto& t : st.tasks)
    if (t.state == "FAILED" || t.state == "LOST") {
      if (bad.size() < 20)
        bad.push_back(&t);
      ++total;
    }
  if (bad.empty())
    return {};
  return "<section id=\"failed-tasks\"><h2>Failed tasks <small class=\"note\">" +
         std::to_string(total) + (total > bad.size() ? ", the first 20" : "") +
         "</small></h2>" + tasks_table(bad, rec) + "</section>\n";
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

std::string state_filters(const std::string& type, const std::string& current,
                          const std::vector<const task_status*>& tasks) {
  std::map<std::string, int> counts;
  for (auto* t : tasks)
    ++counts[t->state];
  auto base = "?type=" + query_value(type);
  std::string h = "<nav class=\"filters\">";
  h += "<a href=\"" + html_escape(base) + "\"" +
       (current.empty() ? " class=\"on\"" : "") + ">all " + std::to_string(tasks.size()) +
       "</a>";
  for (auto& [state, n] : counts)
    h += "<a href=\"" + html_escape(base + "&state=" + query_value(state)) + "\"" +
         (current == state ? " class=\"on\"" : "") + ">" + html_escape(state) + " " +
         std::to_string(n) + "</a>";
  return h + "</nav>\n";
}

std::string type_view(const job_status& st, int64_t now, const page_options& opts,
                      const history::job_record* rec) {
  auto h = page_head(st, opts, opts.type + " tasks");
  std::vector<const task_status*> of_type, shown;
  for (auto& t : st.tasks)
    if (t.task.type == opts.type) {
      of_type.push_back(&t);
      if (opts.state.empty() || t.state == opts.state)
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

std::string task_charts(const task_status& t, const history::job_record* rec,
                        const span& s) {
  auto x = rec->metrics.series(t.task);
  if (x.time_ms.empty())
    return "<section id=\"metrics\"><h2>Resources</h2><p class=\"note\">No samples from "
           "this task (yet).</p></section>\n";
  auto limits = memory_limits(rec->config_json);
  std::string h = "<section id=\"metrics\"><h2>Resources</h2><div class=\"charts\">";
  for (auto& m : metric_defs) {
    if (m.gpu && !x.has_gpus())
      continue;
    svg::chart_options o{
        std::string{"chart-"} + m.id, m.title, m.unit, s.t0, s.t1, -1, {}, 0};
    if (std::string{m.id} == "memory")
      if (auto i = limits.find(t.task.type); i != limits.end()) {
        o.limit = static_cast<double>(i->second);
        o.limit_label = "limit " + std::to_string(i->second) + " MiB";
      }
    h += figure(o, {{to_string(t.task), "", x.time_ms, values_of(x, m.id), {}, {}}});
  }
  h += "</div>";
  if (!x.latest.gpus.empty()) {
    h += "<table id=\"gpus\"><thead><tr><th>GPU</th><th>Utilisation</th><th>Memory "
         "(the task's / the device's)</th></tr></thead><tbody>";
    for (auto& g : x.latest.gpus)
      h += "<tr><td class=\"num\">" + std::to_string(g.index) +
           "</td><td class=\"num\">" + std::to_string(static_cast<int>(g.util_pct)) +
           " %</td><td>" +
           html_escape(format_bytes(g.used_bytes) + " / " + format_bytes(g.total_bytes)) +
           "</td></tr>";
    h += "</tbody></table>";
  }
  return h + "</section>\n";
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
    if (t.state != "RUNNING" && t.state != "REGISTERED")
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

// -- tony-history's index --------------------------------------------------------------

namespace {

std::string filter_form(const index_filter& f) {
  auto input = [](const char* name, const char* label, const std::string& value) {
    return std::string{"<label>"} + label + "<input name=\"" + name + "\" value=\"" +
           html_escape(value) + "\" size=\"14\"></label>";
  };
  std::string h = "<form class=\"filter\" method=\"get\" action=\"\">";
  h += input("name", "Name contains", f.name);
  h += input("user", "User", f.user);
  h += input("queue", "Queue", f.queue);
  h += "<label>State<select name=\"state\"><option value=\"\">any</option>";
  for (auto s : {"SUCCEEDED", "FAILED", "KILLED", "RUNNING"})
    h += std::string{"<option"} + (f.state == s ? " selected" : "") + ">" + s +
         "</option>";
  h += "</select></label><button type=\"submit\">Filter</button>";
  if (!f.empty())
    h += " <a href=\"./\">clear</a>";
  return h + "</form>\n";
}

} // namespace

bool index_filter::matches(const job_summary& j) const {
  if (!user.empty() && j.user != user)
    return false;
  if (!queue.empty() && j.queue != queue)
    return false;
  if (!state.empty() && j.state != state)
    return false;
  if (!name.empty() && base::lower(j.name).find(base::lower(name)) == std::string::npos)
    return false;
  return true;
}

std::string render_index_page(const std::vector<job_summary>& jobs,
                              const index_filter& filter, size_t total,
                              const std::string& retention) {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
       "<title>tony history</title>\n<style>" +
       std::string{style} + "</style></head>\n<body>\n<h1>tony history</h1>\n";
  if (total == 0)
    total = jobs.size();
  h += "<p class=\"note\" id=\"job-count\">" +
       (filter.empty() ? base::plural(static_cast<int64_t>(jobs.size()), "job")
                       : std::to_string(jobs.size()) + " of " +
                             base::plural(static_cast<int64_t>(total), "job")) +
       (retention.empty() ? "" : " &middot; " + html_escape(retention)) + "</p>\n";
  h += filter_form(filter);
  h += "<table id=\"jobs\"><thead><tr><th>Application</th><th>Name</th><th>State</th>"
       "<th>User</th><th>Queue</th><th>Started</th><th>Duration</th><th>Event log</th>"
       "</tr></thead>\n<tbody>\n";
  for (auto& j : jobs) {
    h += "<tr class=\"job\" data-app=\"" + html_escape(j.app_id) + "\" data-state=\"" +
         html_escape(j.state) + "\">";
    h += "<td><a href=\"jobs/" + url_segment(j.app_id) + "/\">" + html_escape(j.app_id) +
         "</a></td>";
    h += "<td>" + html_escape(j.name) + "</td>";
    h += "<td><span class=\"state state-" + html_escape(j.state) + "\">" +
         html_escape(j.state) + "</span></td>";
    h += "<td>" + html_escape(j.user) + "</td><td>" + html_escape(j.queue) + "</td>";
    h += "<td>" + html_escape(format_time(j.started_ms)) + "</td>";
    h += "<td>" +
         (j.finished_ms > 0 && j.started_ms > 0
              ? html_escape(format_duration(j.finished_ms - j.started_ms))
              : std::string{}) +
         "</td>";
    // A path or URI can be long: the cell wraps anywhere.
    h += "<td class=\"source\">" + html_escape(j.source) + "</td></tr>\n";
  }
  h += "</tbody></table>\n</body></html>\n";
  return h;
}

} // namespace tony::http
