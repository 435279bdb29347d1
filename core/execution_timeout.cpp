// A task type's execution_timeout (doc/lifecycle.md, rule 27): a task whose
// command runs longer is killed, and its failure goes where any other goes
// (its restart, the sidecar rule, the tolerance, the job).

#include <algorithm>
#include <csignal>
#include <string>

#include "config/units.hpp"
#include "core/lifecycle.hpp"

namespace tony::core {

void lifecycle::start_running(task_record& t) {
  t.state = task_state::running;
  t.started_ms = now_;
  arm_execution(t);
}

void lifecycle::arm_execution(const task_record& t, int64_t ran_ms) {
  auto limit = t.type->execution_timeout_ms;
  if (limit <= 0)
    return;
  auto left = limit - std::max<int64_t>(ran_ms, 0);
  arm(timer_kind::execution, std::max<int64_t>(left, 0),
      static_cast<size_t>(&t - tasks_.data()));
}

void lifecycle::on_execution_deadline(task_record& t) {
  auto limit = t.type->execution_timeout_ms;
  // The timer of an earlier run of a restarted task finds the new run
  // younger than the limit.
  if (t.state != task_state::running || limit <= 0 || now_ - t.started_ms < limit)
    return;
  auto diag = to_string(t.id) + " ran longer than its execution_timeout of " +
              format_duration(limit) + " (killed in container " + t.c.id + " on " +
              t.c.host + ")";
  if (t.has_executor() && !t.executor.empty()) {
    emit(stop_executor{t.executor, to_string(t.id) + " ran past its execution_timeout"});
    t.executor.clear(); // stopped: the restart or the end need not stop it again
  }
  // Shown as a command ended by SIGTERM (128 + signal, as task_exit counts),
  // not as the exit 0 of a task that was never heard from again.
  t.exit_code = 128 + SIGTERM;
  task_failed(t, task_state::failed, std::move(diag));
}

} // namespace tony::core
