#include "runtime/history/timeline.hpp"

#include "runtime/history/event_log.hpp"

namespace tony::history {

timeline::timeline(size_t max_runs)
    : max_runs_(max_runs < 1 ? 1 : max_runs) {
  // nop
}

const task_runs* timeline::find(const task_id& task) const {
  auto i = index_.find(task);
  return i == index_.end() ? nullptr : &tasks_[i->second];
}

// The run an event belongs to: a new one when the event is of another
// attempt, names another container, or asks again after the last run got
// somewhere (a restart).
task_run& timeline::current(task_runs& t, const task_status& st) {
  bool fresh = t.runs.empty();
  if (!fresh) {
    auto& last = t.runs.back();
    fresh =
        st.attempt != last.attempt ||
        (!st.container_id.empty() && !last.container_id.empty() &&
         st.container_id != last.container_id && st.state != task_state::requested &&
         st.state != task_state::restarting) ||
        (st.state == task_state::requested && (last.allocated_ms > 0 || last.finished() ||
                                               last.state == task_state::restarting));
  }
  if (fresh) {
    task_run run;
    run.attempt = st.attempt;
    run.restart = st.restarts;
    t.runs.push_back(std::move(run));
    if (t.runs.size() > max_runs_) {
      t.runs.erase(t.runs.begin());
      ++t.dropped;
    }
  }
  return t.runs.back();
}

void timeline::apply(const job_event& e) {
  if (e.kind.rfind("task_", 0) != 0)
    return;
  auto& st = e.task;
  auto [pos, added] = index_.emplace(st.task, tasks_.size());
  if (added)
    tasks_.push_back(task_runs{st.task, {}, 0});
  auto& t = tasks_[pos->second];
  auto& run = current(t, st);
  auto when = e.time_ms;
  if (first_ms_ == 0 || (when > 0 && when < first_ms_))
    first_ms_ = when;
  last_ms_ = std::max(last_ms_, when);
  if (run.container_id.empty() && st.state != task_state::requested)
    run.container_id = st.container_id;
  run.exit_code = st.exit_code;
  auto stamp = [when](int64_t& field) {
    if (field == 0)
      field = when;
  };
  // A run that jumps states (one message may carry several steps) gets the
  // same time for each step it skipped.
  auto s = st.state;
  if (s == task_state::requested) {
    stamp(run.requested_ms);
  } else if (s == task_state::allocated) {
    stamp(run.allocated_ms);
  } else if (s == task_state::launched) {
    stamp(run.allocated_ms);
    stamp(run.launched_ms);
  } else if (s == task_state::registered) {
    stamp(run.allocated_ms);
    stamp(run.launched_ms);
    stamp(run.registered_ms);
  } else if (s == task_state::running) {
    stamp(run.allocated_ms);
    stamp(run.launched_ms);
    stamp(run.registered_ms);
    run.running_ms = st.started_ms > 0 ? st.started_ms : when;
  } else if (s == task_state::restarting) {
    // This run failed; the next ask is the restart's own run.
    stamp(run.finished_ms);
    run.state = task_state::failed;
    return;
  } else if (is_final(s)) {
    if (run.finished_ms == 0)
      run.finished_ms = st.finished_ms > 0 ? st.finished_ms : when;
  }
  run.state = s;
}

} // namespace tony::history
