// tony-history's index page (web/job_page.hpp): every job with its state,
// user, queue and times, the filter form, and index_filter's rule.

#include "web/job_page.hpp"

#include "base/text.hpp"
#include "web/job_page_parts.hpp"

namespace tony::http {

namespace {

using page::style;
using page::url_segment;

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
