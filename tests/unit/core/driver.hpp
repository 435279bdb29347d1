#pragma once

// Drives a core::lifecycle the way the lifecycle monitor does, without
// actors: events in at a time the test sets, commands collected, timers
// fired when the test moves time. The scripted parts (containers granted,
// started, executors registering) are plain calls.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/lifecycle.hpp"
#include "tests/state_names.hpp"

namespace tony::testing {

/// worker x2 (tracked), ps x1 (untracked): the job most rules use.
inline job_spec workers_and_ps() {
  job_spec job;
  job.name = "rules";
  job.framework = "tensorflow";
  job.command = "python3 train.py";
  task_type_spec worker;
  worker.name = "worker";
  worker.instances = 2;
  worker.capability = {1024, 1, 0};
  worker.priority = 1;
  task_type_spec ps;
  ps.name = "ps";
  ps.instances = 1;
  ps.capability = {512, 1, 0};
  ps.tracked = false;
  ps.priority = 2;
  job.tasks = {worker, ps};
  return job;
}

/// The type `name` of `job` (which must have it).
inline task_type_spec& type_of(job_spec& job, const std::string& name) {
  for (auto& t : job.tasks)
    if (t.name == name)
      return t;
  throw std::logic_error("no task type " + name);
}

class driver {
public:
  explicit driver(job_spec spec = workers_and_ps())
      : job(std::move(spec))
      , lc(config_of(job)) {
    // nop
  }

  /// A later AM attempt's lifecycle: `am_attempt`, and the job as the AM
  /// before saved it.
  driver(job_spec spec, int32_t am_attempt, std::optional<job_status> resume)
      : job(std::move(spec))
      , lc(config_of(job, am_attempt, std::move(resume))) {
    // nop
  }

  /// A YARN AM's lifecycle with the nodes the RM listed at submission.
  driver(job_spec spec, std::vector<std::string> nodes)
      : job(std::move(spec))
      , lc(config_of(job, 1, {}, std::move(nodes))) {
    // nop
  }

  job_spec job;
  core::lifecycle lc;
  int64_t now = 1000000;
  /// Commands of the last call, and of every call so far.
  core::commands out;
  core::commands log;
  rm_registration rm{{8192, 8, 4}, {0, 0, 0}, "default"};
  /// Whether a launched container runs at once (no localization to wait
  /// for, as on the local backend); else the test says when (run_container).
  bool run_at_launch = true;

  // -- feeding the lifecycle ------------------------------------------------

  core::commands& send(core::event e) {
    record(lc.handle(e, now));
    return out;
  }

  /// Starts the job and lets the RM accept the AM.
  void start() {
    record(lc.start(now));
    send(core::rm_registered{rm});
  }

  /// The RM grants `n` containers at `priority`; every launch that follows
  /// succeeds. Returns the containers.
  std::vector<container> grant(int32_t priority, int n) {
    std::vector<container> cs;
    for (int i = 0; i < n; ++i) {
      container c;
      c.id = "container_" + std::to_string(next_container_++);
      c.host = "node" + std::to_string(next_container_ % 3);
      c.priority = priority;
      cs.push_back(c);
    }
    send(core::granted{cs});
    auto launches = of<core::launch>();
    for (auto& l : launches) {
      send(core::launched{l.target.id});
      if (run_at_launch)
        send(core::container_running{l.target.id});
    }
    return cs;
  }

  /// Grants what every requested task asks for.
  void grant_all() {
    std::map<int32_t, int> wanted;
    for (auto& t : lc.status().tasks)
      if (t.state == "REQUESTED")
        ++wanted[job.find(t.task.type)->priority];
    for (auto& [prio, n] : wanted)
      grant(prio, n);
  }

  /// The executor of `t` registers from its current container.
  core::commands& register_task(const task_id& t, int32_t attempt = 0) {
    executor_hello hello;
    hello.task = t;
    hello.attempt = attempt == 0 ? lc.attempt() : attempt;
    hello.container_id = task(t).container_id;
    hello.host = "host-" + t.type;
    hello.port = 2000 + t.index;
    return send(core::registered{hello});
  }

  /// Every task registers and the registry releases the barrier.
  void register_all() {
    for (auto& t : lc.status().tasks)
      if (t.state == "ALLOCATED" || t.state == "LAUNCHED")
        register_task(t.task);
    send(core::barrier_released{lc.attempt()});
  }

  /// start, grant_all, register_all.
  void run_job() {
    start();
    grant_all();
    register_all();
  }

  core::commands& exit(const task_id& t, int32_t code, std::string tail = "",
                       int32_t signal = 0) {
    task_exit x{t, lc.attempt(), code, signal, std::move(tail), task(t).container_id};
    return send(core::exited{x});
  }

  /// `t`'s container runs: its NodeManager localized it and runs its
  /// launch script.
  core::commands& run_container(const task_id& t) {
    return send(core::container_running{task(t).container_id});
  }

  core::commands& complete(const task_id& t, int32_t status, std::string diag = "") {
    return send(
        core::completed{{container_completion{task(t).container_id, status, diag}}});
  }

  /// Moves time by `ms`, firing due timers in order; `beat` executors send a
  /// heartbeat every 500 ms on the way.
  void advance(int64_t ms, std::vector<task_id> beat = {}) {
    auto until = now + ms;
    auto next_beat = now + 500;
    for (;;) {
      auto due = next_due();
      auto step = std::min({due, until, beat.empty() ? until : next_beat});
      now = step;
      if (!beat.empty() && now == next_beat) {
        for (auto& t : beat)
          send(core::heartbeat{t, lc.attempt()});
        next_beat += 500;
      }
      if (due == now)
        fire_due();
      if (now >= until && next_due() > until)
        return;
    }
  }

  // -- what came out --------------------------------------------------------

  /// The commands of type T in the last call.
  template <class T>
  std::vector<T> of() const {
    return filter<T>(out);
  }

  /// The commands of type T in every call so far.
  template <class T>
  std::vector<T> ever() const {
    return filter<T>(log);
  }

  task_status task(const task_id& t) const {
    for (auto& ts : lc.status().tasks)
      if (ts.task == t)
        return ts;
    return {};
  }

  std::string state(const task_id& t) const {
    for (auto& ts : lc.status().tasks)
      if (ts.task == t)
        return to_string(ts.state);
    return "<none>";
  }

  std::string job_state() const { return to_string(lc.status().state); }

  std::string diagnostics() const { return lc.status().diagnostics; }

  /// The containers a stop_executor named, over every call.
  std::vector<std::string> stopped_executors() const {
    std::vector<std::string> result;
    for (auto& s : ever<core::stop_executor>())
      result.push_back(s.container_id);
    return result;
  }

  /// Times timers were armed at, by their delay (armed, not yet fired).
  std::vector<int64_t> pending_delays() const {
    std::vector<int64_t> result;
    for (auto& [id, t] : timers_)
      result.push_back(t.second);
    return result;
  }

private:
  static core::lifecycle_config config_of(const job_spec& job, int32_t am_attempt = 1,
                                          std::optional<job_status> resume = {},
                                          std::vector<std::string> nodes = {}) {
    core::lifecycle_config cfg;
    cfg.nodes = std::move(nodes);
    cfg.job = job;
    cfg.app_id = "application_1_0001";
    cfg.tracking_url = "http://am:8080/";
    cfg.am_attempt = am_attempt;
    cfg.resume = std::move(resume);
    return cfg;
  }

  template <class T>
  static std::vector<T> filter(const core::commands& cs) {
    std::vector<T> result;
    for (auto& c : cs)
      if (auto x = std::get_if<T>(&c))
        result.push_back(*x);
    return result;
  }

  void record(core::commands cs) {
    out = std::move(cs);
    for (auto& c : out) {
      if (auto t = std::get_if<core::arm_timer>(&c))
        timers_[t->id] = {now + t->delay_ms, t->delay_ms};
      log.push_back(c);
    }
  }

  int64_t next_due() const {
    int64_t due = INT64_MAX;
    for (auto& [id, t] : timers_)
      due = std::min(due, t.first);
    return due;
  }

  void fire_due() {
    std::vector<core::timer_id> due;
    for (auto& [id, t] : timers_)
      if (t.first <= now)
        due.push_back(id);
    for (auto id : due) {
      timers_.erase(id);
      send(core::timer_fired{id});
    }
  }

  int next_container_ = 2;
  std::map<core::timer_id, std::pair<int64_t, int64_t>> timers_; // due, delay
};

} // namespace tony::testing
