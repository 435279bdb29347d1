#include "runtime/history/job_record.hpp"

#include <algorithm>
#include <chrono>

namespace tony::history {

namespace {

int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// "worker:3" -> {worker, 3}; false when it is not a task name.
bool parse_task(const std::string& name, task_id& out) {
  auto colon = name.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= name.size())
    return false;
  auto digits = name.substr(colon + 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
    return false;
  out.type = name.substr(0, colon);
  out.index = std::stoi(digits);
  return true;
}

size_t task_count(const std::map<std::string, int32_t>& counts) {
  size_t n = 0;
  for (auto& [_, k] : counts)
    n += static_cast<size_t>(std::max(k, 0));
  return n;
}

// A metrics line's row as a sample: what the series keeps of it.
task_sample sample_of(int64_t time_ms, const std::vector<double>& v) {
  task_sample s;
  s.time_ms = time_ms;
  s.rss_bytes = v.size() > 0 ? static_cast<int64_t>(v[0]) : 0;
  s.cpu_cores = v.size() > 1 ? static_cast<float>(v[1]) : 0.0f;
  if (v.size() > 3 && (v[2] > 0 || v[3] > 0))
    s.gpus.push_back(
        gpu_sample{-1, static_cast<float>(v[2]), static_cast<int64_t>(v[3]), 0});
  return s;
}

} // namespace

job_record build_record(const std::vector<job_event>& events) {
  job_record r;
  for (auto& e : events) {
    apply(r.status, e);
    r.runs.apply(e);
    if (e.kind == "job_submitted") {
      r.info = e.info;
      r.config_json = e.config_json;
      r.metrics.expect_tasks(task_count(e.task_counts));
    } else if (e.kind == "metrics") {
      r.metrics_step_ms = e.step_ms;
      for (auto& [name, values] : e.metrics) {
        task_id id;
        if (parse_task(name, id))
          r.metrics.add(id, sample_of(e.time_ms, values));
      }
    }
  }
  return r;
}

// -- the live recorder ---------------------------------------------------------------

job_recorder::job_recorder(std::shared_ptr<event_log_writer> log, size_t tasks)
    : log_(std::move(log))
    , log_step_ms_(metrics::log_step_ms(tasks)) {
  record_.metrics.expect_tasks(tasks);
}

void job_recorder::write(const job_event& e) {
  record_.runs.apply(e);
  if (log_)
    log_->write(e);
}

void job_recorder::submitted(const job_event& e) {
  std::lock_guard<std::mutex> guard{mtx_};
  record_.info = e.info;
  record_.config_json = e.config_json;
  apply(record_.status, e);
  if (log_)
    log_->write(e);
}

void job_recorder::observe(const job_status& st) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto now = wall_ms();
  for (auto& e : diff(last_ ? &*last_ : nullptr, st, now)) {
    // The job's last line stays last: the use since the last metrics line
    // goes before it.
    if (e.kind == "job_finished")
      flush_metrics(now);
    write(e);
  }
  last_ = st;
  record_.status = st;
}

void job_recorder::sample(const task_id& task, int32_t, const task_sample& s) {
  std::lock_guard<std::mutex> guard{mtx_};
  record_.metrics.add(task, s);
  auto& acc = pending_[task];
  acc.rss_peak = std::max(acc.rss_peak, static_cast<double>(s.rss_bytes));
  acc.cpu_sum += s.cpu_cores;
  double util = 0, used = 0;
  for (auto& g : s.gpus) {
    util += g.util_pct;
    used += static_cast<double>(g.used_bytes);
  }
  if (!s.gpus.empty())
    acc.gpu_util_sum += util / static_cast<double>(s.gpus.size());
  acc.gpu_used_peak = std::max(acc.gpu_used_peak, used);
  ++acc.samples;
  auto now = s.time_ms > 0 ? s.time_ms : wall_ms();
  if (last_flush_ms_ == 0)
    last_flush_ms_ = now;
  if (now - last_flush_ms_ >= log_step_ms_ && !(last_ && is_final(*last_)))
    flush_metrics(now);
}

void job_recorder::flush_metrics(int64_t now_ms) {
  if (pending_.empty())
    return;
  job_event e;
  e.time_ms = now_ms;
  e.kind = "metrics";
  e.step_ms = last_flush_ms_ > 0 ? now_ms - last_flush_ms_ : log_step_ms_;
  for (auto& [task, acc] : pending_) {
    auto n = std::max(acc.samples, 1);
    e.metrics[to_string(task)] = {acc.rss_peak, acc.cpu_sum / n, acc.gpu_util_sum / n,
                                  acc.gpu_used_peak};
  }
  pending_.clear();
  last_flush_ms_ = now_ms;
  if (log_)
    log_->write(e);
}

void job_recorder::read(const std::function<void(const job_record&)>& f) const {
  std::lock_guard<std::mutex> guard{mtx_};
  f(record_);
}

} // namespace tony::history
