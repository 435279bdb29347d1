#include "runtime/history/event_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <tuple>

#include <nlohmann/json.hpp>

#include "messages/error.hpp"
#include "runtime/status_json.hpp"

namespace tony::history {

namespace {

using nlohmann::json;

// The task and job objects are those of /api/job (runtime/status_json), so
// the event log, status.json and the API share one format.
json task_json(const task_status& t) {
  job_status wrap;
  wrap.tasks.push_back(t);
  auto j = json::parse(to_json(wrap));
  return j["tasks"][0];
}

json job_json(const job_status& st) {
  job_status copy = st;
  copy.tasks.clear();
  auto j = json::parse(to_json(copy));
  j.erase("tasks");
  return j;
}

expected<task_status> task_from(const json& j) {
  json wrap = {{"state", to_string(job_state::fresh)}, {"tasks", json::array({j})}};
  auto st = job_status_from_json(wrap.dump());
  if (!st)
    return st.error();
  if (st->tasks.size() != 1)
    return make_error(errc::protocol, "a task event has no task object");
  return std::move(st->tasks[0]);
}

expected<job_status> job_from(const json& j) {
  auto copy = j;
  copy["tasks"] = json::array();
  // A job_submitted event may carry no state: the job is NEW then.
  if (!copy.contains("state") || !copy["state"].is_string() ||
      copy["state"].get<std::string>().empty())
    copy["state"] = to_string(job_state::fresh);
  return job_status_from_json(copy.dump());
}

// Every field of the task and job objects of /api/job (runtime/status_json
// writes each of them): equal fields, equal objects. Compared as they are,
// not as JSON text written and read back at every change of the job, which
// made the AM's CPU at a launch grow with the square of the job's tasks
// (bench/notes.md, the 128-task profile).
auto task_fields(const task_status& t) {
  return std::tie(t.task.type, t.task.index, t.attempt, t.state, t.host, t.port,
                  t.container_id, t.exit_code, t.tracked, t.diagnostics, t.started_ms,
                  t.finished_ms, t.log_dir, t.restarts);
}

auto job_fields(const job_status& x) {
  return std::tie(x.app_id, x.name, x.state, x.diagnostics, x.attempt, x.started_ms,
                  x.finished_ms, x.tracking_url, x.tensorboard_task,
                  x.tensorboard_address, x.tensorboard_log_dir, x.recovery);
}

bool same_task(const task_status& x, const task_status& y) {
  return task_fields(x) == task_fields(y);
}

bool same_job(const job_status& x, const job_status& y) {
  return job_fields(x) == job_fields(y);
}

// `t`'s status in `before`: most often at the same place in the list.
const task_status* previous(const job_status& before, size_t at, const task_status& t) {
  auto same = [&](const task_status& p) {
    return p.task == t.task && p.attempt == t.attempt;
  };
  if (at < before.tasks.size() && same(before.tasks[at]))
    return &before.tasks[at];
  const task_status* found = nullptr;
  for (auto& p : before.tasks)
    if (same(p))
      found = &p;
  return found;
}

job_event job_event_of(const char* kind, const job_status& st, int64_t now) {
  job_event e;
  e.time_ms = now;
  e.kind = kind;
  e.job = st;
  e.job.tasks.clear();
  return e;
}

} // namespace

const std::vector<std::string>& metric_fields() {
  static const std::vector<std::string> fields{"rss_bytes", "cpu_cores", "gpu_util_pct",
                                               "gpu_used_bytes"};
  return fields;
}

std::string task_event_kind(task_state state) {
  switch (state) {
  case task_state::requested:
    return "task_requested";
  case task_state::allocated:
    return "task_allocated";
  case task_state::launched:
    return "task_launched";
  case task_state::registered:
    return "task_registered";
  case task_state::running:
    return "task_started";
  case task_state::succeeded:
  case task_state::failed:
  case task_state::killed:
  case task_state::lost:
    return "task_finished";
  case task_state::restarting:
    break;
  }
  return "task_updated";
}

std::vector<job_event> diff(const job_status* before, const job_status& after,
                            int64_t now_ms) {
  std::vector<job_event> result;
  bool new_attempt = before == nullptr || before->attempt != after.attempt;
  bool job_changed = before == nullptr || !same_job(*before, after);
  bool finished_now =
      after.finished_ms > 0 && (before == nullptr || before->finished_ms == 0);
  // A new attempt (or the first sight of the job) comes before its tasks;
  // any other change after them: a job SUCCEEDS because its last task did.
  if (job_changed && new_attempt && !finished_now)
    result.push_back(job_event_of("job_state", after, now_ms));
  for (size_t i = 0; i < after.tasks.size(); ++i) {
    auto& t = after.tasks[i];
    const task_status* prev = before == nullptr ? nullptr : previous(*before, i, t);
    if (prev != nullptr && same_task(*prev, t))
      continue;
    job_event e;
    e.time_ms = now_ms;
    e.kind = prev == nullptr || prev->state != t.state ? task_event_kind(t.state)
                                                       : "task_updated";
    e.task = t;
    result.push_back(std::move(e));
  }
  if (finished_now)
    result.push_back(job_event_of("job_finished", after, now_ms));
  else if (job_changed && !new_attempt)
    result.push_back(job_event_of("job_state", after, now_ms));
  return result;
}

std::string to_json_line(const job_event& e) {
  json j = {{"time_ms", e.time_ms}, {"event", e.kind}};
  if (e.kind == "metrics") {
    j["step_ms"] = e.step_ms;
    j["fields"] = metric_fields();
    json tasks = json::object();
    for (auto& [name, values] : e.metrics) {
      json row = json::array();
      for (auto v : values) // whole bytes as integers, the rest rounded
        row.push_back(
            v == static_cast<double>(static_cast<int64_t>(v))
                ? json(static_cast<int64_t>(v))
                : json(static_cast<double>(static_cast<int64_t>(v * 100)) / 100));
      tasks[name] = std::move(row);
    }
    j["tasks"] = std::move(tasks);
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (e.kind.rfind("task_", 0) == 0) {
    j["task"] = task_json(e.task);
  } else {
    j["job"] = job_json(e.job);
  }
  if (!e.info.empty() || !e.task_counts.empty()) {
    json s = json::object();
    for (auto& [k, v] : e.info)
      s[k] = v;
    if (!e.task_counts.empty())
      s["tasks"] = e.task_counts;
    j["submitted"] = s;
  }
  if (!e.config_json.empty()) {
    auto config = json::parse(e.config_json, nullptr, false);
    if (config.is_object())
      j["config"] = std::move(config);
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

expected<job_event> event_from_json(const std::string& line) {
  auto j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(errc::protocol, "not a JSON object");
  job_event e;
  auto kind = j.find("event");
  if (kind == j.end() || !kind->is_string())
    return make_error(errc::protocol, "no \"event\" name");
  e.kind = kind->get<std::string>();
  if (auto t = j.find("time_ms"); t != j.end())
    e.time_ms = json_int64(*t);
  if (e.kind == "metrics") {
    if (auto s = j.find("step_ms"); s != j.end())
      e.step_ms = json_int64(*s);
    if (auto t = j.find("tasks"); t != j.end() && t->is_object())
      for (auto& [name, row] : t->items()) {
        if (!row.is_array())
          continue;
        auto& values = e.metrics[name];
        for (auto& v : row)
          values.push_back(v.is_number() ? v.get<double>() : 0.0);
      }
    return e;
  }
  if (auto c = j.find("config"); c != j.end() && c->is_object())
    e.config_json = c->dump();
  if (auto t = j.find("task"); t != j.end() && t->is_object()) {
    auto task = task_from(*t);
    if (!task)
      return task.error();
    e.task = std::move(*task);
  } else if (e.kind.rfind("task_", 0) == 0) {
    return make_error(errc::protocol, "event " + e.kind + " has no \"task\"");
  }
  if (auto o = j.find("job"); o != j.end() && o->is_object()) {
    auto job = job_from(*o);
    if (!job)
      return job.error();
    e.job = std::move(*job);
  }
  if (auto s = j.find("submitted"); s != j.end() && s->is_object()) {
    for (auto& [k, v] : s->items()) {
      if (v.is_string())
        e.info[k] = v.get<std::string>();
      else if (k == "tasks" && v.is_object())
        for (auto& [type, n] : v.items())
          if (n.is_number_integer())
            e.task_counts[type] = n.get<int32_t>();
    }
  }
  return e;
}

expected<std::vector<job_event>> parse_event_log(const std::string& text) {
  std::vector<job_event> result;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    bool last = nl == std::string::npos;
    auto line = text.substr(pos, last ? std::string::npos : nl - pos);
    pos = last ? text.size() : nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto e = event_from_json(line);
    if (!e) {
      if (last) // torn by a crash mid-write
        break;
      return make_error(errc::protocol,
                        "line " + std::to_string(line_no) + ": " + describe(e.error()));
    }
    result.push_back(std::move(*e));
  }
  return result;
}

void apply(job_status& st, const job_event& e) {
  if (e.kind == "metrics")
    return; // resource use: the status does not change
  if (e.kind.rfind("task_", 0) == 0) {
    auto& t = e.task;
    // A task of a newer attempt replaces the older attempt's table.
    bool newer = false;
    for (auto& x : st.tasks)
      newer = newer || x.attempt < t.attempt;
    if (newer) {
      std::vector<task_status> kept;
      for (auto& x : st.tasks)
        if (x.attempt >= t.attempt)
          kept.push_back(x);
      st.tasks = std::move(kept);
    }
    for (auto& x : st.tasks) {
      if (x.task == t.task) {
        if (x.attempt <= t.attempt)
          x = t;
        return;
      }
    }
    st.tasks.push_back(t);
    return;
  }
  auto tasks = std::move(st.tasks);
  auto& j = e.job;
  if (e.kind == "job_submitted") {
    // Only identity: the state comes with job_state events.
    if (!j.app_id.empty())
      st.app_id = j.app_id;
    if (!j.name.empty())
      st.name = j.name;
    if (!j.tracking_url.empty())
      st.tracking_url = j.tracking_url;
    if (st.state == job_state::fresh)
      st.state = j.state;
    if (st.started_ms == 0)
      st.started_ms = j.started_ms;
  } else {
    st = j;
  }
  st.tasks = std::move(tasks);
}

job_status replay(const std::vector<job_event>& events) {
  job_status st;
  for (auto& e : events)
    apply(st, e);
  return st;
}

// -- writer ------------------------------------------------------------------------

event_log_writer::event_log_writer(std::string path, std::FILE* file)
    : path_(std::move(path))
    , file_(file) {
  // nop
}

event_log_writer::~event_log_writer() {
  if (file_)
    std::fclose(file_);
}

expected<std::unique_ptr<event_log_writer>>
event_log_writer::open(const std::string& path) {
  // Readable by the owner and the history service's group (0640), as
  // MapReduce's job history files; never written through a link.
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0640);
  auto f = fd < 0 ? nullptr : ::fdopen(fd, "a");
  if (fd >= 0 && !f)
    ::close(fd);
  if (!f)
    return make_error(errc::infrastructure,
                      "cannot open the event log " + path + " for appending");
  return std::unique_ptr<event_log_writer>(new event_log_writer(path, f));
}

void event_log_writer::observe(const job_status& st) {
  std::lock_guard<std::mutex> guard{mtx_};
  using namespace std::chrono;
  auto now = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  append(diff(last_ ? &*last_ : nullptr, st, now));
  last_ = st;
}

void event_log_writer::write(const job_event& e) {
  std::lock_guard<std::mutex> guard{mtx_};
  append({e});
}

void event_log_writer::append(const std::vector<job_event>& events) {
  if (events.empty() || !file_)
    return;
  for (auto& e : events) {
    auto line = to_json_line(e);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), file_);
  }
  std::fflush(file_);
}

} // namespace tony::history
