// The job page's task tables (web/job_page.hpp): one row per task with its
// state, times, memory, container and logs; the table of task types a big
// job shows instead, its failed tasks, and a type's state filters. Also the
// links the page's parts share (a task's, a URL segment, a query value).

#include "web/job_page_parts.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "runtime/history/job_record.hpp"

namespace tony::http::page {

namespace {

bool is_url(const std::string& s) {
  return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0;
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
                  html_escape(name) + "\" data-state=\"" + to_string(t.state) + "\">";
  h += "<td><a href=\"" + html_escape(task_href(t.task)) + "\">" + html_escape(name) +
       "</a>" + (t.tracked ? "" : " <small>(untracked)</small>") + "</td>";
  h += "<td>" +
       (t.port > 0 ? html_escape(t.host + ":" + std::to_string(t.port))
                   : html_escape(t.host)) +
       "</td>";
  h += "<td><span class=\"state state-" + std::string{to_string(t.state)} + "\">" +
       to_string(t.state) + "</span></td>";
  h += "<td class=\"num\">" + std::to_string(t.attempt) +
       (t.restarts > 0 ? " <small>+" + std::to_string(t.restarts) + "</small>" : "") +
       "</td>";
  h += "<td class=\"num\">" +
       (is_final(t.state) && !t.container_id.empty() ? std::to_string(t.exit_code)
                                                     : std::string{}) +
       "</td>";
  h += clock_cell(t.started_ms);
  h += clock_cell(t.finished_ms);
  h += memory_cell(u);
  h += "<td class=\"num\">" +
       (u.known && !is_final(t.state) ? cpu_text(u.latest.cpu_cores) : std::string{}) +
       "</td>";
  h += container_cell(t.container_id);
  h += "<td class=\"logs\">" + log_links(t) + "</td></tr>\n";
  if (!t.diagnostics.empty())
    h += "<tr class=\"diag\"><td></td><td colspan=\"10\"><pre>" +
         html_escape(t.diagnostics) + "</pre></td></tr>\n";
  return h;
}

} // namespace

// -- links -------------------------------------------------------------------------

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

// -- the task tables ---------------------------------------------------------------

std::string state_tally(const std::vector<const task_status*>& tasks) {
  std::map<std::string, int> counts;
  for (auto* t : tasks)
    ++counts[to_string(t->state)];
  std::string tally;
  for (auto& [state, n] : counts)
    tally += (tally.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  return tally;
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
      if (u.known && !is_final(t->state))
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
    if (is_failure(t.state)) {
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

std::string state_filters(const std::string& type, const std::string& current,
                          const std::vector<const task_status*>& tasks) {
  std::map<std::string, int> counts;
  for (auto* t : tasks)
    ++counts[to_string(t->state)];
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

} // namespace tony::http::page
