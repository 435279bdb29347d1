// What the executors tell the AM: an executor registers (a new one, or the
// executor of an adopted container back from the AM before), the registry
// releases the barrier, heartbeats come, and executors that fall silent
// are lost.

#include <algorithm>
#include <string>
#include <vector>

#include "config/validate.hpp"
#include "core/lifecycle.hpp"

namespace tony::core {

void lifecycle::on(const registered& e) {
  auto& hello = e.hello;
  if (hello.attempt != attempt_)
    return;
  auto t = find(hello.task);
  if (hello.resumed) {
    // The executor of an adopted container, back: its command runs (or
    // ended, and its exit report follows).
    if (t == nullptr || !t->adopting || hello.container_id != t->c.id ||
        end_ != end_phase::none) {
      emit(stop_executor{hello.container_id,
                         "this ApplicationMaster did not adopt its container"});
      return;
    }
    t->adopting = false;
    t->executor = hello.container_id;
    t->host = hello.host;
    t->port = hello.port;
    t->tensorboard_port = hello.tensorboard_port;
    t->last_heartbeat_ms = now_;
    arm_execution(*t, now_ - t->started_ms); // its command started under the AM before
    say(note::info, to_string(t->id) + " is back: its executor registered again from " +
                        t->c.id + " on " + t->c.host);
    emit(watch_executor{hello.container_id});
    if (!armed(timer_kind::heartbeat_check))
      arm(timer_kind::heartbeat_check, heartbeat_check_period_ms(cfg_.job.policy));
    if (std::none_of(tasks_.begin(), tasks_.end(), [](auto& x) { return x.adopting; }))
      disarm(timer_kind::adoption);
    return;
  }
  if (t == nullptr ||
      (t->state != task_state::allocated && t->state != task_state::launched))
    return;
  if (!hello.container_id.empty() && hello.container_id != t->c.id)
    return; // an earlier incarnation of a restarted task
  if (end_ != end_phase::none) {
    emit(stop_executor{hello.container_id,
                       "the job is " + std::string{to_string(state_)}});
    return;
  }
  t->state = task_state::registered;
  t->executor = hello.container_id;
  t->host = hello.host;
  t->port = hello.port;
  t->tensorboard_port = hello.tensorboard_port;
  t->last_heartbeat_ms = now_;
  // After the barrier the registry hands a newcomer (a restarted task) the
  // spec at once: its command starts now.
  if (state_ == job_state::running)
    start_running(*t);
  emit(watch_executor{hello.container_id});
  if (!armed(timer_kind::heartbeat_check))
    arm(timer_kind::heartbeat_check, heartbeat_check_period_ms(cfg_.job.policy));
  maybe_arm_registration(); // a registered task's container runs
}

void lifecycle::on(const barrier_released& e) {
  if (e.attempt != attempt_ || end_ != end_phase::none)
    return;
  state_ = job_state::running;
  for (auto& t : tasks_)
    if (t.state == task_state::registered)
      start_running(t);
}

void lifecycle::on(const heartbeat& e) {
  if (e.attempt != attempt_)
    return;
  if (auto t = find(e.task))
    t->last_heartbeat_ms = now_;
}

void lifecycle::check_heartbeats() {
  auto limit = cfg_.job.policy.heartbeat_timeout_ms;
  std::vector<task_id> silent;
  for (auto& t : tasks_)
    if (t.has_executor() && now_ - t.last_heartbeat_ms >= limit)
      silent.push_back(t.id);
  // A failure may start a new attempt, which rebuilds the task list.
  auto attempt = attempt_;
  for (auto& id : silent) {
    auto t = find(id);
    if (end_ != end_phase::none || attempt_ != attempt || t == nullptr)
      break;
    t->awaiting_reason = true;
    avoid_node(t->c.host, *t);
    task_failed(*t, task_state::lost,
                to_string(t->id) + " lost: no heartbeat from its executor for " +
                    std::to_string(limit / 1000) + " s (container " + t->c.id + " on " +
                    t->c.host + ")");
  }
}

} // namespace tony::core
