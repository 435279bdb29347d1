// The job's end (core/lifecycle.hpp, "ending"): success once every tracked
// task is done, a kill, and the way out once the outcome is decided:
// executors stop, then containers; a failed job waits for the RM's reasons
// of containers a signal ended (added to what the job says), then the RM
// hears the outcome.

#include <algorithm>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "core/lifecycle.hpp"

namespace tony::core {

void lifecycle::check_success() {
  if (end_ != end_phase::none)
    return;
  size_t tracked = 0;
  size_t succeeded = 0;
  std::vector<std::string> tolerated;
  for (auto& t : tasks_) {
    if (!t.type->tracked)
      continue;
    ++tracked;
    if (t.state == task_state::succeeded)
      ++succeeded;
    else if (is_final(t.state) && t.tolerated)
      tolerated.push_back(to_string(t.id));
    else
      return;
  }
  for (auto& t : tasks_)
    if (!t.type->tracked && t.tolerated)
      tolerated.push_back(to_string(t.id));
  if (tracked == 0)
    return; // a job of untracked tasks only ends by timeout or kill
  if (succeeded == 0) {
    finish(job_state::failed,
           "no tracked task succeeded; every one failed: " + base::join(tolerated, ", "));
    return;
  }
  finish(job_state::succeeded,
         tolerated.empty() ? std::string{}
                           : "succeeded with " +
                                 base::plural(static_cast<int64_t>(tolerated.size()),
                                              "tolerated failure") +
                                 ": " + base::join(tolerated, ", "));
}

void lifecycle::finish(job_state outcome, std::string diag) {
  if (end_ != end_phase::none)
    return;
  end_ = end_phase::stopping_tasks;
  state_ = outcome;
  diagnostics_ = std::move(diag);
  say(note::info, std::string{"finishing as "} + to_string(outcome) +
                      (diagnostics_.empty() ? "" : ": ") + diagnostics_);
  emit(cancel_asks{});
  auto reason = "the job is " + std::string{to_string(outcome)};
  for (auto& t : tasks_) {
    if (t.has_executor())
      emit(stop_executor{t.executor, reason});
    else if (!is_final(t.state))
      mark_finished(t, task_state::killed, ending_reason());
  }
  arm(timer_kind::stop_grace, cfg_.job.policy.stop_grace_ms + 500);
  maybe_stop_containers();
}

// Finishing waits for stopped executors to report, at most the stop grace.
void lifecycle::maybe_stop_containers() {
  for (auto& t : tasks_)
    if (t.has_executor())
      return;
  stop_containers_now();
}

void lifecycle::stop_containers_now() {
  if (end_ != end_phase::stopping_tasks)
    return;
  end_ = end_phase::stopping_containers;
  auto cs = live_containers();
  if (cs.empty()) {
    on(containers_stopped{});
    return;
  }
  emit(stop_containers{std::move(cs)});
}

void lifecycle::on(const kill_job& e) {
  finish(job_state::killed, e.reason.empty() ? "killed on request" : e.reason);
}

// A container the NodeManager kills (over its memory limit, preempted, its
// node lost) ends its task by a signal first: the executor reports that, or
// dies before it can, and the RM's reason comes with the container's
// completion an allocate or two later. A failed job waits for those
// reasons, at most container_reason_wait_ms, so its final status says why.
void lifecycle::on(const containers_stopped&) {
  if (end_ != end_phase::stopping_containers)
    return;
  if (state_ == job_state::failed && reasons_pending() &&
      cfg_.container_reason_wait_ms > 0) {
    end_ = end_phase::awaiting_reasons;
    arm(timer_kind::container_reasons, cfg_.container_reason_wait_ms);
    return;
  }
  unregister_now();
}

// Adds the RM's reason for a container's end to the task a signal ended (or
// whose executor vanished), and to the job's diagnostics that name it:
// "worker:1 was killed by signal 15 (Terminated): its container was killed
// for exceeding its memory limit (exit status -104); ... (Container [pid=..."
// Statuses above -100 are the command's own exit; -105 is the AM's own stop.
void lifecycle::add_container_reason(task_record& t, const container_completion& cc) {
  if (!t.awaiting_reason)
    return;
  t.awaiting_reason = false;
  if (cc.exit_status > -100 || cc.exit_status == -105)
    return;
  auto head = t.diagnostics.substr(0, t.diagnostics.find('\n'));
  auto told = head + ": " + describe_container_exit(cc.exit_status);
  auto nm_said = cc.diagnostics.substr(0, cc.diagnostics.find('\n'));
  if (!nm_said.empty())
    told += " (" + nm_said + ")";
  t.diagnostics.replace(0, head.size(), told);
  t.exit_code = cc.exit_status;
  if (auto at = diagnostics_.find(head); !head.empty() && at != std::string::npos)
    diagnostics_.replace(at, head.size(), told);
}

bool lifecycle::reasons_pending() const {
  return std::any_of(tasks_.begin(), tasks_.end(),
                     [](auto& t) { return t.awaiting_reason && !t.container_done; });
}

// The job ends when the AM tells the RM, not when the RM answers: the
// records made before the RM hears of it (the event log kept in the history
// dir, monitor_config::before_unregister) carry the end already.
void lifecycle::unregister_now() {
  end_ = end_phase::unregistering;
  finished_ms_ = now_;
  emit(unregister{final_report{to_string(state_), diagnostics_, cfg_.tracking_url}});
}

void lifecycle::on(const unregistered&) {
  if (end_ != end_phase::unregistering)
    return;
  end_ = end_phase::done;
  say(note::info, "job " + cfg_.app_id + " " + to_string(state_));
  emit(job_done{});
}

} // namespace tony::core
