#include "runtime/http/job_page.hpp"

#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>

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

const char* style = R"(
body{font-family:-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px 0;display:inline-block}
h2{font-size:16px;margin:24px 0 8px 0}
.note{color:#59636e;margin:4px 0 12px 0}
.state{display:inline-block;padding:2px 8px;border-radius:10px;font-size:12px;font-weight:600;
  background:#eaeef2;color:#1f2328;vertical-align:middle}
.state-RUNNING,.state-REGISTERING,.state-REGISTERED,.state-LAUNCHED{background:#ddf4ff;color:#0550ae}
.state-ALLOCATING,.state-REQUESTED,.state-ALLOCATED,.state-NEW{background:#fff8c5;color:#7d4e00}
.state-SUCCEEDED{background:#dafbe1;color:#116329}
.state-FAILED,.state-LOST{background:#ffebe9;color:#a40e26}
.state-KILLED{background:#eaeef2;color:#59636e}
dl.summary{display:grid;grid-template-columns:max-content auto;gap:4px 16px;margin:12px 0}
dl.summary dt{color:#59636e}
dl.summary dd{margin:0}
table{border-collapse:collapse;font-size:14px}
th,td{text-align:left;padding:6px 12px;border-bottom:1px solid #d1d9e0;vertical-align:top}
td{white-space:nowrap}
tr.diag td{white-space:normal}
th{background:#f6f8fa;font-weight:600}
td.num{text-align:right}
tr.diag td{border-bottom:1px solid #d1d9e0;padding-top:0}
pre{background:#f6f8fa;padding:8px 12px;border-radius:6px;white-space:pre-wrap;font-size:12px;margin:0}
#diagnostics pre{background:#ffebe9}
footer{margin-top:24px;color:#59636e;font-size:12px}
a{color:#0969da}
)";

} // namespace

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

std::string render_job_page(const job_status& st, int64_t now_ms,
                            const page_options& opts) {
  bool final = is_final(st);
  std::string title = st.name.empty() ? st.app_id : st.name;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<title>" + html_escape(title) + " (" + html_escape(st.state) +
       ") - tony</title>\n";
  if (opts.live && !final)
    h += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(opts.refresh_s) +
         "\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<style>" + std::string{style} + "</style></head>\n<body>\n";
  h += "<header><h1 id=\"job-name\">" + html_escape(title) +
       "</h1> <span id=\"job-state\" class=\"state state-" + html_escape(st.state) +
       "\">" + html_escape(st.state) + "</span></header>\n";
  if (!opts.note.empty())
    h += "<p class=\"note\">" + html_escape(opts.note) + "</p>\n";

  // -- summary ----------------------------------------------------------------
  h += "<dl class=\"summary\">\n";
  auto row = [&](const std::string& k, const std::string& v_html, const char* id = "") {
    h += "<dt>" + k + "</dt><dd" +
         (*id ? std::string{" id=\""} + id + "\"" : std::string{}) + ">" + v_html +
         "</dd>\n";
  };
  row("Application", html_escape(st.app_id), "app-id");
  if (st.attempt > 1)
    row("Attempt", std::to_string(st.attempt), "attempt");
  if (st.started_ms > 0) {
    row("Started", html_escape(format_time(st.started_ms)));
    if (st.finished_ms > 0)
      row("Finished", html_escape(format_time(st.finished_ms)));
    auto end = st.finished_ms > 0 ? st.finished_ms : now_ms;
    row("Elapsed", html_escape(format_duration(end - st.started_ms)), "elapsed");
  }
  if (has_tensorboard(st)) {
    if (opts.live && !final)
      row("TensorBoard",
          "<a id=\"tensorboard-link\" href=\"tensorboard/\">tensorboard/</a>");
    else
      row("TensorBoard", "not running (the job ended)");
  }
  row("JSON", "<a href=\"api/job\">api/job</a>");
  h += "</dl>\n";

  if (!st.diagnostics.empty())
    h += "<section id=\"diagnostics\"><h2>Diagnostics</h2><pre>" +
         html_escape(st.diagnostics) + "</pre></section>\n";

  // -- tasks --------------------------------------------------------------------
  std::map<std::string, int> counts;
  for (auto& t : st.tasks)
    ++counts[t.state];
  std::string tally;
  for (auto& [state, n] : counts)
    tally += (tally.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  h += "<h2>Tasks <small class=\"note\">" + html_escape(tally) + "</small></h2>\n";
  h += "<table id=\"tasks\"><thead><tr><th>Task</th><th>Host:port</th><th>State</th>"
       "<th>Attempt</th><th>Exit</th><th>Started</th><th>Finished</th><th>Container</th>"
       "<th>Logs</th></tr></thead>\n<tbody>\n";
  for (auto& t : st.tasks) {
    auto name = to_string(t.task);
    auto id = "task-" + t.task.type + "-" + std::to_string(t.task.index);
    h += "<tr class=\"task\" id=\"" + html_escape(id) + "\" data-task=\"" +
         html_escape(name) + "\" data-state=\"" + html_escape(t.state) + "\">";
    h += "<td>" + html_escape(name) + (t.tracked ? "" : " <small>(untracked)</small>") +
         "</td>";
    h += "<td>" +
         (t.port > 0 ? html_escape(t.host + ":" + std::to_string(t.port))
                     : html_escape(t.host)) +
         "</td>";
    h += "<td><span class=\"state state-" + html_escape(t.state) + "\">" +
         html_escape(t.state) + "</span></td>";
    h += "<td class=\"num\">" + std::to_string(t.attempt) + "</td>";
    h += "<td class=\"num\">" +
         (task_final(t.state) && !t.container_id.empty() ? std::to_string(t.exit_code)
                                                         : std::string{}) +
         "</td>";
    h += clock_cell(t.started_ms);
    h += clock_cell(t.finished_ms);
    h += "<td>" + html_escape(t.container_id) + "</td>";
    h += "<td>" + log_links(t) + "</td></tr>\n";
    if (!t.diagnostics.empty())
      h += "<tr class=\"diag\"><td></td><td colspan=\"8\"><pre>" +
           html_escape(t.diagnostics) + "</pre></td></tr>\n";
  }
  h += "</tbody></table>\n";
  h += "<footer>tony &middot; " +
       html_escape(opts.live ? (final ? "final status"
                                      : "refreshes every " +
                                            std::to_string(opts.refresh_s) + " s")
                             : "from the event log") +
       " &middot; " + html_escape(format_time(now_ms)) + "</footer>\n";
  h += "</body></html>\n";
  return h;
}

std::string render_index_page(const std::vector<job_summary>& jobs) {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
       "<title>tony history</title>\n<style>" +
       std::string{style} + "</style></head>\n<body>\n<h1>tony history</h1>\n";
  h += "<p class=\"note\">" + std::to_string(jobs.size()) + " job" +
       (jobs.size() == 1 ? "" : "s") + "</p>\n";
  h += "<table id=\"jobs\"><thead><tr><th>Application</th><th>Name</th><th>State</th>"
       "<th>Started</th><th>Duration</th><th>Event log</th></tr></thead>\n<tbody>\n";
  for (auto& j : jobs) {
    h += "<tr class=\"job\" data-app=\"" + html_escape(j.app_id) + "\">";
    h += "<td><a href=\"jobs/" + url_segment(j.app_id) + "/\">" + html_escape(j.app_id) +
         "</a></td>";
    h += "<td>" + html_escape(j.name) + "</td>";
    h += "<td><span class=\"state state-" + html_escape(j.state) + "\">" +
         html_escape(j.state) + "</span></td>";
    h += "<td>" + html_escape(format_time(j.started_ms)) + "</td>";
    h += "<td>" +
         (j.finished_ms > 0 && j.started_ms > 0
              ? html_escape(format_duration(j.finished_ms - j.started_ms))
              : std::string{}) +
         "</td>";
    h += "<td>" + html_escape(j.source) + "</td></tr>\n";
  }
  h += "</tbody></table>\n</body></html>\n";
  return h;
}

} // namespace tony::http
