// Registration deadlines (doc/lifecycle.md, rule 9): an attempt's executors
// register within [policy] registration_timeout of their containers running,
// and so does a restarted task's. A container runs once its NodeManager has
// localized its resources and runs its launch script (container_running):
// a large environment localizing on a cold node does not count.

#include <string>
#include <vector>

#include "base/text.hpp"
#include "core/lifecycle.hpp"

namespace tony::core {

void lifecycle::on(const launched& e) {
  auto t = by_container(e.container_id);
  if (t == nullptr || end_ != end_phase::none)
    return;
  if (t->state == task_state::allocated && t->c.id == e.container_id)
    t->state = task_state::launched;
}

void lifecycle::on(const container_running& e) {
  auto t = by_container(e.container_id);
  if (t == nullptr || end_ != end_phase::none || t->c.id != e.container_id ||
      t->running_in == e.container_id)
    return;
  if (t->state != task_state::allocated && t->state != task_state::launched)
    return; // registered already, or over
  t->running_in = e.container_id;
  if (t->restarts > 0) {
    if (cfg_.job.policy.registration_timeout_ms > 0)
      arm(timer_kind::task_registration, cfg_.job.policy.registration_timeout_ms,
          static_cast<size_t>(t - tasks_.data()));
    return;
  }
  maybe_arm_registration();
}

void lifecycle::maybe_arm_registration() {
  if (registration_armed_for_ == attempt_ || state_ == job_state::running ||
      end_ != end_phase::none || cfg_.job.policy.registration_timeout_ms <= 0)
    return;
  // A task waits for its container, or its container is still localizing.
  for (auto& x : tasks_)
    if (x.state == task_state::requested || x.state == task_state::allocated ||
        (x.state == task_state::launched && x.running_in != x.c.id))
      return;
  registration_armed_for_ = attempt_;
  arm(timer_kind::registration, cfg_.job.policy.registration_timeout_ms);
}

void lifecycle::on_registration_deadline() {
  if (state_ == job_state::running)
    return;
  std::vector<std::string> missing;
  for (auto& t : tasks_)
    if (!t.has_executor() && !is_final(t.state))
      missing.push_back(to_string(t.id));
  if (missing.empty())
    return;
  job_failure("registration timeout: " +
              std::to_string(cfg_.job.policy.registration_timeout_ms / 1000) +
              " s after their containers were running, these tasks had not "
              "registered: " +
              base::join(missing, ", "));
}

void lifecycle::on_task_registration_deadline(task_record& t) {
  if (t.state != task_state::allocated && t.state != task_state::launched)
    return;
  task_failed(t, task_state::failed,
              to_string(t.id) + " did not register within " +
                  std::to_string(cfg_.job.policy.registration_timeout_ms / 1000) +
                  " s after its restarted container was running (container " + t.c.id +
                  " on " + t.c.host + ")");
}

} // namespace tony::core
