// The job page's pictures (web/job_page.hpp): the timeline of the tasks'
// runs (per task, or per type for a big job) and the resource charts (per
// task, per type's band, or one task's with its memory limit and GPUs),
// drawn by web/charts.hpp from the job's record.

#include "web/job_page_parts.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "runtime/history/job_record.hpp"
#include "web/charts.hpp"

namespace tony::http::page {

namespace {

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

} // namespace

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

} // namespace tony::http::page
