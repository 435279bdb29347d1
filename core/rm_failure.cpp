// How the job ends when the resource manager cannot be reached or no longer
// knows this AM attempt (core/lifecycle.hpp: rm_failed).

#include "core/lifecycle.hpp"

#include <string>

namespace tony::core {

void lifecycle::on(const rm_failed& e) {
  if (e.attempt_gone) {
    end_attempt_gone(e.what);
    return;
  }
  if (end_ == end_phase::none)
    finish(job_state::failed, e.what);
}

// The RM no longer knows this attempt (its NodeManager was lost, the RM
// failed the attempt): nothing can be unregistered, asked or released
// through it. The AM ends now, as MapReduce's does. On the last attempt its
// executors are stopped (their tasks end with the job); with another
// attempt to come they keep running for it to adopt, as when an AM dies
// (doc/operations.md, "AM restart").
void lifecycle::end_attempt_gone(const std::string& what) {
  if (end_ == end_phase::done)
    return;
  bool next_attempt = cfg_.am_attempt < cfg_.job.am.max_app_attempts;
  attempt_gone_ = true;
  if (end_ == end_phase::none) {
    // With an attempt to come the job is not over: its state stays (a
    // client polling this AM must not read a failure), only this AM ends.
    if (!next_attempt)
      state_ = job_state::failed;
    diagnostics_ = what;
  }
  diagnostics_ += "; AM attempt " + std::to_string(cfg_.am_attempt) +
                  (next_attempt ? " exits and leaves its tasks to the next attempt"
                                : " stops its tasks and exits");
  say(note::warn, diagnostics_);
  for (auto& t : tasks_) {
    if (next_attempt)
      break;
    if (t.has_executor())
      emit(stop_executor{t.executor, "the AM's attempt is gone"});
    if (!is_final(t.state))
      mark_finished(t, task_state::killed, "the AM's attempt is gone");
  }
  timers_.clear();
  end_ = end_phase::done;
  finished_ms_ = now_;
  emit(job_done{});
}

} // namespace tony::core
