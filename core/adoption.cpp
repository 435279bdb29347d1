// A later AM attempt (doc/operations.md, "AM restart"): what the AM before
// saved of the job and the containers the RM kept decide whether this AM
// reports the outcome it had decided, adopts the tasks still running, or
// starts the job over; adopted executors that do not register again are
// lost.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/text.hpp"
#include "core/lifecycle.hpp"

namespace tony::core {

// The AM before died without unregistering, and YARN kept its containers
// (keep_containers_across_application_attempts). What it last saved of the
// job, and what the RM says still runs, decide what this AM does: end with
// the outcome it had decided, adopt the running tasks, or start over.
void lifecycle::take_over(const std::vector<container>& previous) {
  auto am = "AM attempt " + std::to_string(cfg_.am_attempt);
  auto release_all = [&] {
    std::vector<std::string> ids;
    for (auto& c : previous)
      ids.push_back(c.id);
    if (!ids.empty())
      emit(release_containers{std::move(ids)});
  };
  auto& saved = cfg_.resume;
  if (saved && is_final(*saved)) {
    // It had decided the outcome and died before it told the RM.
    recovery_ = am + " found the job " + to_string(saved->state) +
                " already; it reports that outcome";
    say(note::warn, recovery_);
    attempt_ = std::max(saved->attempt, 1);
    fresh_table();
    for (auto& ts : saved->tasks)
      if (auto t = find(ts.task)) {
        t->exit_code = ts.exit_code;
        t->started_ms = ts.started_ms;
        t->finished_ms = ts.finished_ms;
        t->restarts = ts.restarts;
        mark_finished(*t, task_state::killed, ts.diagnostics);
        if (is_final(ts.state))
          t->state = ts.state;
      }
    release_all();
    finish(saved->state, saved->diagnostics);
    return;
  }
  auto why = adoption_problem();
  if (why.empty()) {
    adopt(previous);
    return;
  }
  recovery_ = am + " started the job over: " + why;
  say(note::warn, recovery_);
  release_all();
  // Executors of the attempt before are stale now: they cannot register.
  if (saved)
    attempt_ = std::max(saved->attempt, 1) + 1;
  start_attempt();
}

std::string lifecycle::adoption_problem() const {
  auto& saved = cfg_.resume;
  if (!saved)
    return "the ApplicationMaster before it saved no state of the job";
  if (saved->state != job_state::running)
    return "the ApplicationMaster before it died with the job " +
           std::string{to_string(saved->state)} +
           " (not every task had the cluster spec yet)";
  return {};
}

// What adopt makes of the saved table and the containers the RM kept.
struct lifecycle::adoption {
  std::map<std::string, container> alive; // kept, and not adopted (yet)
  std::vector<adopted_task> adopted;
  std::vector<task_id> ask_again;
  std::vector<std::pair<task_id, std::string>> gone; // task, why
};

void lifecycle::adopt(const std::vector<container>& previous) {
  auto& saved = *cfg_.resume;
  attempt_ = std::max(saved.attempt, 1);
  auto ids = fresh_table();
  adoption a;
  for (auto& c : previous)
    a.alive.emplace(c.id, c);
  for (auto& ts : saved.tasks)
    adopt_task(ts, a);
  std::vector<std::string> strays;
  for (auto& [id, c] : a.alive)
    strays.push_back(id);
  if (!strays.empty())
    emit(release_containers{std::move(strays)});
  state_ = job_state::running;
  registration_armed_for_ = attempt_;
  recovery_ = "AM attempt " + std::to_string(cfg_.am_attempt) + " adopted " +
              base::plural(static_cast<int64_t>(a.adopted.size()), "running task") +
              " of attempt " + std::to_string(attempt_) + "; the training goes on";
  say(note::warn, recovery_);
  emit(resume_tasks{std::move(ids), a.adopted, attempt_});
  if (!a.adopted.empty()) {
    auto wait = cfg_.job.policy.registration_timeout_ms > 0
                    ? cfg_.job.policy.registration_timeout_ms
                    : cfg_.job.policy.heartbeat_timeout_ms;
    arm(timer_kind::adoption, wait);
  }
  for (auto& id : a.ask_again)
    if (auto t = find(id))
      request_again(*t); // the restart the AM before had begun
  // Tasks that cannot come back fail as any lost task (restart, sidecar,
  // tolerance, the next attempt); a failure may start a new attempt.
  auto attempt = attempt_;
  for (auto& [id, why] : a.gone) {
    auto t = find(id);
    if (end_ != end_phase::none || attempt_ != attempt || t == nullptr)
      break;
    task_failed(*t, task_state::lost,
                to_string(id) + " lost while the ApplicationMaster restarted: " + why);
  }
  if (attempt_ == attempt)
    check_success();
}

// One task of the saved table: back as it ended, asked for again, running
// on in the container the RM kept, or gone.
void lifecycle::adopt_task(const task_status& ts, adoption& a) {
  auto t = find(ts.task);
  if (t == nullptr)
    return;
  t->restarts = ts.restarts;
  t->exit_code = ts.exit_code;
  t->started_ms = ts.started_ms;
  t->finished_ms = ts.finished_ms;
  t->diagnostics = ts.diagnostics;
  if (is_final(ts.state)) {
    t->state = ts.state;
    // A failed task in a running job was absorbed: a sidecar's, or
    // within the tolerance (its budget counts again).
    if (is_failure(ts.state) && !t->type->sidecar) {
      t->tolerated = true;
      if (!t->type->elastic()) {
        if (t->type->tolerated_failures >= 0)
          ++tolerated_by_type_[t->type->name];
        else
          ++tolerated_in_job_;
      }
    }
    return;
  }
  if (ts.state == task_state::requested || ts.state == task_state::restarting) {
    a.ask_again.push_back(t->id);
    return;
  }
  auto c = a.alive.find(ts.container_id);
  if (ts.state == task_state::running && c != a.alive.end()) {
    t->state = task_state::running;
    t->c = c->second;
    t->has_container = true;
    t->adopting = true;
    t->host = ts.host;
    t->port = ts.port;
    by_container_[t->c.id] = static_cast<size_t>(t - tasks_.data());
    a.adopted.push_back({t->id, t->c.id});
    a.alive.erase(c);
    return;
  }
  // A restart in flight (its executor had not registered: it knows only
  // the dead AM's address), or a container that ended while no AM ran.
  if (c != a.alive.end()) {
    emit(discard_containers{{c->second}});
    a.alive.erase(c);
  }
  a.gone.emplace_back(t->id, ts.state == task_state::running
                                 ? "its container " + ts.container_id + " on " + ts.host +
                                       " ended while no ApplicationMaster ran"
                                 : "it was starting in container " + ts.container_id +
                                       " when the ApplicationMaster before died");
}

// Adopted containers whose executors did not register again: lost.
void lifecycle::on_adoption_deadline() {
  std::vector<task_id> silent;
  for (auto& t : tasks_)
    if (t.adopting)
      silent.push_back(t.id);
  auto attempt = attempt_;
  auto limit = cfg_.job.policy.registration_timeout_ms > 0
                   ? cfg_.job.policy.registration_timeout_ms
                   : cfg_.job.policy.heartbeat_timeout_ms;
  for (auto& id : silent) {
    auto t = find(id);
    if (end_ != end_phase::none || attempt_ != attempt || t == nullptr)
      break;
    t->awaiting_reason = true;
    task_failed(*t, task_state::lost,
                to_string(t->id) +
                    " lost: its executor did not register with the new "
                    "ApplicationMaster within " +
                    std::to_string(limit / 1000) + " s (container " + t->c.id + " on " +
                    t->c.host + ")");
  }
}

} // namespace tony::core
