// The lifecycle's frame (core/lifecycle.hpp): the construction and the two
// entry points, the status clients see, the timers' dispatch and the helpers
// every phase shares. The phases live in
// files of their own: core/allocation.cpp (asks, grants, launches),
// core/registration.cpp (containers running, registration deadlines),
// core/executors.cpp (executors register, the barrier, heartbeats),
// core/execution_timeout.cpp, core/task_exits.cpp (exits, restarts,
// tolerance, new attempts), core/rm_failure.cpp, core/adoption.cpp (a later
// AM attempt) and core/finishing.cpp (the job's end).

#include <algorithm>
#include <string>
#include <vector>

#include "config/task_env.hpp"
#include "config/validate.hpp"
#include "core/lifecycle.hpp"

namespace tony::core {

// -- construction and the two entry points --------------------------------------------

lifecycle::lifecycle(lifecycle_config cfg)
    : cfg_(std::move(cfg)) {
  // The chief: world rank 0, unless its type is elastic (torchrun then
  // assigns ranks, and any node may go).
  std::vector<std::string> types;
  for (auto& type : cfg_.job.tasks)
    types.push_back(type.name);
  chief_ = world_chief(types);
  if (chief_)
    if (auto type = cfg_.job.find(chief_->type); type && type->elastic())
      chief_.reset();
}

commands lifecycle::start(int64_t now) {
  now_ = now;
  out_.clear();
  started_ms_ = now;
  // A later AM attempt keeps the job's start, and so its deadline.
  if (cfg_.resume && cfg_.resume->started_ms > 0 && cfg_.resume->started_ms < now)
    started_ms_ = cfg_.resume->started_ms;
  emit(register_am{});
  if (cfg_.job.timeout_ms > 0)
    arm(timer_kind::job_timeout,
        std::max<int64_t>(cfg_.job.timeout_ms - (now - started_ms_), 0));
  return std::move(out_);
}

commands lifecycle::handle(const event& e, int64_t now) {
  now_ = now;
  out_.clear();
  std::visit([this](const auto& x) { on(x); }, e);
  return std::move(out_);
}

std::string lifecycle::describe_container_exit(int32_t status) {
  switch (status) {
  case -100:
    return "its container was lost: the node running it was lost or the container "
           "was aborted (exit status -100)";
  case -101:
    return "the disks of its node failed (exit status -101)";
  case -102:
    return "its container was preempted by the scheduler (exit status -102)";
  case -103:
    return "its container was killed for exceeding its virtual memory limit "
           "(exit status -103)";
  case -104:
    return "its container was killed for exceeding its memory limit (exit status "
           "-104); ask for more memory in [tasks.<type>] memory";
  case -105:
    return "its container was killed by the ApplicationMaster (exit status -105)";
  case -106:
    return "its container was killed by the ResourceManager (exit status -106)";
  default:
    return "its container exited with status " + std::to_string(status);
  }
}

job_status lifecycle::status() const {
  job_status result;
  result.app_id = cfg_.app_id;
  result.name = cfg_.job.name;
  result.state = state_;
  result.diagnostics = diagnostics_;
  result.attempt = attempt_;
  result.started_ms = started_ms_;
  result.finished_ms = finished_ms_;
  result.tracking_url = cfg_.tracking_url;
  result.recovery = recovery_;
  std::vector<pending_containers> pending;
  for (auto& t : tasks_) {
    if (state_ == job_state::allocating && t.state == task_state::requested)
      add_pending(pending, t.type->name, t.type->capability_of(t.id.index),
                  t.type->node_label);
    task_status ts;
    ts.task = t.id;
    ts.attempt = attempt_;
    ts.state = t.state;
    ts.host = t.host.empty() ? t.c.host : t.host;
    ts.port = t.port;
    ts.container_id = t.c.id;
    ts.exit_code = t.exit_code;
    ts.tracked = t.type->tracked;
    ts.diagnostics = t.diagnostics;
    ts.started_ms = t.started_ms;
    ts.finished_ms = t.finished_ms;
    ts.restarts = t.restarts;
    if (t.has_container && cfg_.log_dir_of)
      ts.log_dir = cfg_.log_dir_of(t.c);
    result.tasks.push_back(std::move(ts));
  }
  if (result.diagnostics.empty())
    result.diagnostics = waiting_reason(pending, tasks_.size(), cluster_);
  describe_tensorboard(result);
  return result;
}

// The sidecar serves on its task's own port; a chief that starts TensorBoard
// on TB_PORT, the port its executor reserved for it. Either way the address
// is there while the serving task runs.
void lifecycle::describe_tensorboard(job_status& out) const {
  auto& tb = cfg_.job.tensorboard;
  std::optional<task_id> server;
  if (tb.on_chief()) {
    std::vector<std::string> types;
    for (auto& t : cfg_.job.tasks)
      types.push_back(t.name);
    server = world_chief(types);
  } else if (cfg_.job.find("tensorboard") != nullptr) {
    server = task_id{"tensorboard", 0};
  }
  if (!server)
    return;
  out.tensorboard_task = to_string(*server);
  out.tensorboard_log_dir = tb.log_dir;
  for (auto& t : tasks_) {
    if (t.id != *server || !t.has_executor())
      continue;
    auto port = tb.on_chief() ? t.tensorboard_port : t.port;
    if (port <= 0)
      continue;
    auto host = t.host.empty() || t.host == "0.0.0.0" ? std::string{"127.0.0.1"} : t.host;
    out.tensorboard_address = host + ":" + std::to_string(port);
  }
}

// -- timers ---------------------------------------------------------------------------

void lifecycle::on(const timer_fired& e) {
  auto i = timers_.find(e.id);
  if (i == timers_.end())
    return; // cancelled
  auto p = i->second;
  timers_.erase(i);
  switch (p.kind) {
  case timer_kind::job_timeout:
    if (end_ == end_phase::none)
      finish(job_state::killed, "the job ran past its timeout of " +
                                    std::to_string(cfg_.job.timeout_ms / 1000) + " s");
    return;
  case timer_kind::stop_grace:
    if (end_ != end_phase::stopping_tasks)
      return;
    for (auto& t : tasks_)
      if (t.has_executor())
        mark_finished(t, task_state::killed,
                      "did not stop within the grace period; killed");
    stop_containers_now();
    return;
  case timer_kind::container_reasons:
    if (end_ == end_phase::awaiting_reasons)
      unregister_now();
    return;
  case timer_kind::adoption:
    if (end_ == end_phase::none && p.attempt == attempt_)
      on_adoption_deadline();
    return;
  case timer_kind::heartbeat_check:
    check_heartbeats();
    if (end_ == end_phase::none)
      arm(timer_kind::heartbeat_check, heartbeat_check_period_ms(cfg_.job.policy));
    return;
  case timer_kind::allocation:
  case timer_kind::registration:
    if (end_ == end_phase::none && p.attempt == attempt_)
      on_attempt_deadline(p.kind);
    return;
  default:
    if (end_ == end_phase::none && p.attempt == attempt_ && p.task < tasks_.size())
      on_task_deadline(p);
    return;
  }
}

// -- helpers --------------------------------------------------------------------------

lifecycle::task_record* lifecycle::find(const task_id& id) {
  for (auto& t : tasks_)
    if (t.id == id)
      return &t;
  return nullptr;
}

lifecycle::task_record* lifecycle::by_container(const std::string& container_id) {
  auto i = by_container_.find(container_id);
  return i == by_container_.end() ? nullptr : &tasks_[i->second];
}

void lifecycle::mark_finished(task_record& t, task_state state, std::string diag) {
  t.state = state;
  t.adopting = false;
  t.diagnostics = std::move(diag);
  t.finished_ms = now_;
}

void lifecycle::arm(timer_kind kind, int64_t delay_ms, size_t task) {
  auto id = next_timer_++;
  timers_.emplace(id, timer_purpose{kind, attempt_, task});
  emit(arm_timer{id, delay_ms});
}

void lifecycle::disarm(timer_kind kind) {
  for (auto i = timers_.begin(); i != timers_.end();)
    i = i->second.kind == kind ? timers_.erase(i) : std::next(i);
}

bool lifecycle::armed(timer_kind kind) const {
  return std::any_of(timers_.begin(), timers_.end(),
                     [kind](auto& entry) { return entry.second.kind == kind; });
}

void lifecycle::say(note::level_t level, std::string text) {
  emit(note{level, std::move(text)});
}

bool lifecycle::is_chief(const task_record& t) const {
  return chief_ && t.id == *chief_;
}

std::vector<container> lifecycle::live_containers() const {
  std::vector<container> result;
  for (auto& t : tasks_)
    if (t.has_container && !t.container_done)
      result.push_back(t.c);
  return result;
}

std::string lifecycle::ending_reason() const {
  return "stopped: the job is " + std::string{to_string(state_)};
}

} // namespace tony::core
