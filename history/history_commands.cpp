#include "history/history_commands.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "messages/error.hpp"
#include "runtime/history/history_store.hpp"
#include "runtime/history/job_record.hpp"
#include "runtime/status_json.hpp"
#include "runtime/status_printer.hpp"
#include "web/http_server.hpp"
#include "web/job_page.hpp"
#include "web/tracking_routes.hpp"

namespace fs = std::filesystem;

namespace tony::history {

namespace {

std::string home_dir() {
  auto home = std::getenv("HOME");
  return home ? home : "/tmp";
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width)
    s.append(width - s.size(), ' ');
  return s;
}

} // namespace

std::vector<opened_dir> open_dirs(const history_options& opts, std::ostream& err) {
  std::vector<opened_dir> result;
  auto add = [&](const std::string& uri, bool optional) {
    webhdfs::namenode_http nn;
    nn.base = opts.webhdfs;
    nn.auth.user = opts.user;
    nn.auth.kerberos = opts.kerberos;
    nn.auth.ca_file = opts.ca_file;
    auto d = open_history(uri, std::move(nn));
    if (!d) {
      err << "tony-history: " << describe(d.error()) << "\n";
      return;
    }
    result.push_back({std::move(*d), optional});
  };
  for (auto& d : opts.dirs)
    add(d, false);
  if (opts.default_dirs || opts.dirs.empty()) {
    add(home_dir() + "/.tony/jobs", true);
    add(home_dir() + "/.tony/history", true);
  }
  return result;
}

std::vector<std::pair<stored_log, history_dir*>> all_logs(std::vector<opened_dir>& dirs,
                                                          std::ostream& err) {
  std::vector<std::pair<stored_log, history_dir*>> result;
  for (auto& d : dirs) {
    auto logs = d.dir->list();
    if (!logs) {
      if (!d.optional)
        err << "tony-history: " << describe(logs.error()) << "\n";
      continue;
    }
    for (auto& l : *logs) {
      bool seen = false;
      for (auto& [x, _] : result)
        seen = seen || x.app_id == l.app_id;
      if (!seen)
        result.emplace_back(l, d.dir.get());
    }
  }
  std::stable_sort(result.begin(), result.end(), [](auto& x, auto& y) {
    return newer_app(x.first.app_id, y.first.app_id);
  });
  return result;
}

expected<std::vector<job_event>> load_events(history_dir& dir, const stored_log& log) {
  auto text = dir.read(log);
  if (!text)
    return text.error();
  auto events = parse_event_log(*text);
  if (!events)
    return make_error(errc::protocol, "the event log " + log.location +
                                          " is damaged: " + describe(events.error()));
  return events;
}

expected<found_job> find_job(const history_options& opts, const std::string& app_id) {
  std::ostringstream quiet;
  auto dirs = open_dirs(opts, quiet);
  std::string searched;
  for (auto& d : dirs) {
    searched += (searched.empty() ? "" : ", ") + d.dir->uri();
    auto logs = d.dir->list();
    if (!logs)
      continue;
    for (auto& l : *logs) {
      if (l.app_id != app_id)
        continue;
      auto events = load_events(*d.dir, l);
      if (!events)
        return events.error();
      return found_job{l.app_id, l.location, std::move(*events)};
    }
  }
  return make_error(errc::invalid_config,
                    "no event log of " + app_id + " in " +
                        (searched.empty() ? std::string{"any history dir"} : searched) +
                        "; pass the dir it is in with --dir");
}

std::string timeline_line(const job_event& e, int64_t t0_ms) {
  char when[32];
  std::snprintf(when, sizeof(when), "+%.1f s",
                static_cast<double>(e.time_ms - t0_ms) / 1000.0);
  std::string line = pad(when, 10) + pad(e.kind, 17);
  if (e.kind.rfind("task_", 0) == 0) {
    auto& t = e.task;
    line += to_string(t.task) + " " + to_string(t.state);
    if (t.port > 0)
      line += " at " + t.host + ":" + std::to_string(t.port);
    else if (!t.host.empty())
      line += " on " + t.host;
    if (e.kind == "task_allocated" && !t.container_id.empty())
      line += " [" + t.container_id + "]";
    if (e.kind == "task_finished")
      line += " (exit " + std::to_string(t.exit_code) + ")";
    if (e.kind == "task_finished" && !t.diagnostics.empty()) {
      auto first = t.diagnostics.substr(0, t.diagnostics.find('\n'));
      line += ": " + first;
    }
    return line;
  }
  auto& j = e.job;
  if (e.kind == "job_submitted") {
    line += j.app_id + " (" + j.name + ")";
    for (auto key : {"backend", "user"})
      if (auto i = e.info.find(key); i != e.info.end() && !i->second.empty())
        line += " " + std::string{key} + "=" + i->second;
    std::string tasks;
    for (auto& [type, n] : e.task_counts)
      tasks += (tasks.empty() ? "" : ",") + type + "x" + std::to_string(n);
    if (!tasks.empty())
      line += " tasks=" + tasks;
    return line;
  }
  line += to_string(j.state);
  if (j.attempt > 1)
    line += " (attempt " + std::to_string(j.attempt) + ")";
  if (!j.diagnostics.empty() && (e.kind == "job_finished" || is_final(j)))
    line += ": " + j.diagnostics.substr(0, j.diagnostics.find('\n'));
  return line;
}

int list_jobs(const history_options& opts, std::ostream& out, std::ostream& err) {
  auto dirs = open_dirs(opts, err);
  auto logs = all_logs(dirs, err);
  if (logs.empty()) {
    err << "tony-history: no jobs found";
    for (auto& d : dirs)
      err << (&d == &dirs.front() ? " in " : ", ") << d.dir->uri();
    err << "\n";
    return 1;
  }
  out << pad("APPLICATION", 32) << pad("NAME", 20) << pad("STATE", 11)
      << pad("STARTED", 25) << "DURATION\n";
  for (auto& [log, dir] : logs) {
    auto events = load_events(*dir, log);
    if (!events) {
      out << pad(log.app_id, 32) << "(" << describe(events.error()) << ")\n";
      continue;
    }
    auto st = replay(*events);
    std::string duration;
    if (st.finished_ms > 0 && st.started_ms > 0)
      duration = http::format_duration(st.finished_ms - st.started_ms);
    out << pad(log.app_id, 32) << pad(st.name, 20) << pad(to_string(st.state), 11)
        << pad(http::format_time(st.started_ms), 25) << duration << "\n";
  }
  return 0;
}

int show_job(const history_options& opts, const std::string& app_id, bool as_json,
             std::ostream& out, std::ostream& err) {
  auto job = find_job(opts, app_id);
  if (!job) {
    err << "tony-history: " << describe(job.error()) << "\n";
    return 2;
  }
  auto st = replay(job->events);
  if (as_json) {
    out << to_json(st, 2) << "\n";
    return 0;
  }
  out << "event log: " << job->location << "\n";
  int64_t t0 = job->events.empty() ? 0 : job->events.front().time_ms;
  out << "timeline (from " << http::format_time(t0) << "):\n";
  for (auto& e : job->events)
    if (e.kind != "metrics") // resource use: summed up below the table
      out << "  " << timeline_line(e, t0) << "\n";
  out << "\n";
  int64_t end = st.finished_ms > 0
                    ? st.finished_ms
                    : (job->events.empty() ? 0 : job->events.back().time_ms);
  for (auto& line : status_printer::table(st, end, 1000))
    out << line << "\n";
  if (!st.diagnostics.empty())
    out << "diagnostics: " << st.diagnostics << "\n";
  auto rec = build_record(job->events);
  std::string peaks;
  for (auto& id : rec.metrics.tasks()) {
    task_sample latest;
    int64_t peak = 0;
    int32_t gpus = 0;
    if (rec.metrics.summary(id, latest, peak, gpus) && peak > 0)
      peaks +=
          (peaks.empty() ? "" : ", ") + to_string(id) + " " + http::format_bytes(peak);
  }
  if (!peaks.empty())
    out << "peak memory: " << peaks << "\n";
  return 0;
}

} // namespace tony::history
