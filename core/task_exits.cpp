// How tasks end and what their failures lead to (doc/lifecycle.md): a
// container completes, a command exits, an executor's connection drops;
// the diagnostics that say why; and a failure's way through its restart
// (with its backoff and its deadlines), the sidecar rule, the tolerance,
// and a new attempt of the job.

#include <string.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "core/lifecycle.hpp"

namespace tony::core {

namespace {

// The last `max_lines` lines of `text`.
std::string tail_lines(const std::string& text, size_t max_lines) {
  if (text.empty())
    return {};
  size_t pos = text.size();
  if (text.back() == '\n')
    --pos;
  size_t lines = 0;
  while (pos > 0) {
    auto nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) {
      pos = 0;
      break;
    }
    if (++lines == max_lines) {
      pos = nl + 1;
      break;
    }
    pos = nl;
  }
  return text.substr(pos);
}

// What a NodeManager says of a container that failed ends with the tail of
// the container's error files (Hadoop 3's ContainerLaunch): "Error file:
// prelaunch.err.\nLast 4096 bytes of prelaunch.err :\n<bytes>", and the same
// for the newest file matching yarn.nodemanager.container.stderr.pattern.
// The local backend's pool says it the same way (runtime/local). Returns
// "\n--- last lines of <file> ---\n<lines>" for each one with any text, or
// empty when there is none.
std::string error_file_tails(const std::string& diagnostics, size_t max_lines) {
  struct section {
    std::string file;
    size_t begin;  // the bytes' start
    size_t header; // the "Last ..." line's start
  };
  std::vector<section> found;
  for (size_t at = diagnostics.find("Last "); at != std::string::npos;
       at = diagnostics.find("Last ", at + 5)) {
    auto digits = at + 5;
    auto after = diagnostics.find_first_not_of("0123456789", digits);
    if (after == digits || after == std::string::npos ||
        diagnostics.compare(after, 10, " bytes of ") != 0)
      continue;
    auto name_at = after + 10;
    auto end = diagnostics.find(" :\n", name_at);
    if (end == std::string::npos || diagnostics.find('\n', name_at) < end)
      continue;
    found.push_back({diagnostics.substr(name_at, end - name_at), end + 3, at});
  }
  std::string result;
  std::vector<std::string> shown; // a NodeManager may report a tail twice
  for (size_t i = 0; i < found.size(); ++i) {
    auto stop = i + 1 < found.size() ? found[i + 1].header : diagnostics.size();
    auto text = diagnostics.substr(found[i].begin, stop - found[i].begin);
    // A new diagnostic of the NodeManager ("[2024-01-01 00:00:00.000]Container
    // exited with ...") ends the file's bytes.
    for (size_t at = text.find("\n["); at != std::string::npos;
         at = text.find("\n[", at + 2)) {
      auto line_end = text.find('\n', at + 1);
      auto line = text.substr(at + 1, line_end == std::string::npos ? std::string::npos
                                                                    : line_end - at - 1);
      if (line.size() > 2 && std::isdigit(static_cast<unsigned char>(line[1])) &&
          line.find("]Container ") != std::string::npos) {
        text.resize(at);
        break;
      }
    }
    // The next section's "Error files: ..." line belongs to it.
    if (auto err = text.rfind("Error file"); err != std::string::npos) {
      auto nl = text.find('\n', err);
      if (nl == std::string::npos || nl + 1 == text.size())
        text.resize(err);
    }
    auto last = text.find_last_not_of(" \t\r\n");
    if (last == std::string::npos)
      continue;
    text.resize(last + 1);
    auto section =
        "\n--- last lines of " + found[i].file + " ---\n" + tail_lines(text, max_lines);
    if (std::find(shown.begin(), shown.end(), section) != shown.end())
      continue;
    shown.push_back(section);
    result += section;
  }
  return result;
}

std::string exit_diagnostics(const task_exit& x) {
  std::string result = to_string(x.task);
  if (x.signal != 0) {
    auto name = ::strsignal(x.signal);
    result += " was killed by signal " + std::to_string(x.signal) + " (" +
              (name ? name : "?") + ")";
  } else {
    result += " exited with code " + std::to_string(x.exit_code);
  }
  auto tail = tail_lines(x.stderr_tail, 10);
  if (!tail.empty())
    result += "\n--- last lines of its stderr ---\n" + tail;
  return result;
}

// A restart's wait: the backoff doubles with every restart, at most 10 min.
int64_t backoff_of(int64_t base_ms, int32_t restart) {
  constexpr int64_t cap = 10 * 60 * 1000;
  int64_t ms = base_ms;
  for (int32_t i = 1; i < restart && ms < cap; ++i)
    ms *= 2;
  return std::min(ms, cap);
}

} // namespace

void lifecycle::on(const completed& e) {
  for (auto& cc : e.completions) {
    auto t = by_container(cc.container_id);
    if (t == nullptr)
      continue; // released, discarded, or of an earlier attempt
    t->container_done = true;
    if (is_final(t->state)) {
      add_container_reason(*t, cc);
      continue;
    }
    if (end_ != end_phase::none) {
      mark_finished(*t, task_state::killed, ending_reason());
      continue;
    }
    // An executor that never registered could not start (a missing library,
    // a failed exec, a bad environment): what it said is in the container's
    // error files, whose tails the NodeManager reports (rule 10).
    bool unregistered =
        t->state == task_state::allocated || t->state == task_state::launched;
    auto diag = to_string(t->id) + " failed: " + describe_container_exit(cc.exit_status) +
                (unregistered ? " before its executor registered" : "") + " (container " +
                t->c.id + " on " + t->c.host + ")";
    if (auto tails = error_file_tails(cc.diagnostics, 10); unregistered && !tails.empty())
      diag += tails;
    else if (!cc.diagnostics.empty())
      diag += "\n" + tail_lines(cc.diagnostics, 10);
    t->exit_code = cc.exit_status;
    if (cc.exit_status == -100 || cc.exit_status == -101) // node lost, disks failed
      avoid_node(t->c.host, *t);
    task_failed(*t, cc.exit_status <= -100 ? task_state::lost : task_state::failed,
                std::move(diag));
  }
  if (end_ != end_phase::none)
    maybe_stop_containers();
  if (end_ == end_phase::awaiting_reasons && !reasons_pending())
    unregister_now();
}

void lifecycle::on(const exited& e) {
  auto& x = e.exit;
  if (x.attempt != attempt_)
    return;
  auto t = find(x.task);
  if (t == nullptr || is_final(t->state))
    return;
  if (!x.container_id.empty() && (!t->has_container || x.container_id != t->c.id))
    return; // an earlier incarnation of a restarted task
  t->exit_code = x.exit_code;
  t->executor.clear(); // it reported: it ends by itself, nothing to stop
  if (end_ != end_phase::none) {
    mark_finished(*t, x.exit_code == 0 ? task_state::succeeded : task_state::killed,
                  ending_reason());
    maybe_stop_containers();
    return;
  }
  if (x.exit_code == 0 && x.signal == 0) {
    say(note::info, to_string(x.task) + " succeeded");
    mark_finished(*t, task_state::succeeded, "");
    check_success();
    return;
  }
  t->awaiting_reason = x.signal != 0; // a NodeManager's kill says why later
  task_failed(*t, task_state::failed, exit_diagnostics(x));
}

void lifecycle::on(const executor_lost& e) {
  task_record* t = nullptr;
  for (auto& x : tasks_)
    if (x.has_executor() && x.executor == e.container_id)
      t = &x;
  if (t == nullptr)
    return;
  if (end_ != end_phase::none) {
    mark_finished(*t, task_state::killed, ending_reason());
    maybe_stop_containers();
    return;
  }
  t->awaiting_reason = true; // its container may have been killed under it
  avoid_node(t->c.host, *t);
  task_failed(*t, task_state::lost,
              to_string(t->id) + " lost: its executor's connection dropped (" + e.reason +
                  "; container " + t->c.id + " on " + t->c.host + ")");
}

void lifecycle::task_failed(task_record& t, task_state state, std::string diag,
                            bool may_restart) {
  if (is_final(t.state))
    return;
  say(note::warn, diag);
  if (end_ != end_phase::none) {
    mark_finished(t, state, std::move(diag));
    return;
  }
  if (may_restart && restart_allowed(t)) {
    schedule_restart(t, diag);
    return;
  }
  auto& type = *t.type;
  if (type.restart == restart_policy::on_failure && type.max_restarts > 0)
    diag =
        is_chief(t)
            ? to_string(t.id) + " is the chief, which is never restarted: " + diag
            : to_string(t.id) + " failed after " + base::plural(t.restarts, "restart") +
                  " (max_restarts = " + std::to_string(type.max_restarts) + "): " + diag;
  mark_finished(t, state, diag);
  if (type.sidecar) {
    say(note::info, to_string(t.id) + " is a sidecar; its failure does not end the job");
    return;
  }
  if (tolerate(t)) {
    check_success();
    return;
  }
  job_failure(std::move(diag));
}

bool lifecycle::restart_allowed(const task_record& t) const {
  return t.type->restart == restart_policy::on_failure &&
         t.restarts < t.type->max_restarts && !is_chief(t);
}

void lifecycle::schedule_restart(task_record& t, const std::string& diag) {
  if (t.has_executor() && !t.executor.empty())
    emit(stop_executor{t.executor, "restarting " + to_string(t.id)});
  if (t.has_container && !t.container_done)
    emit(discard_containers{{t.c}});
  if (t.has_container)
    by_container_.erase(t.c.id);
  ++t.restarts;
  auto& type = *t.type;
  t.state = task_state::restarting;
  t.diagnostics = "restart " + std::to_string(t.restarts) + " of " +
                  std::to_string(type.max_restarts) + " after: " + diag;
  t.finished_ms = now_;
  t.c = container{};
  t.has_container = false;
  t.container_done = false;
  t.adopting = false;
  t.executor.clear();
  t.host.clear();
  t.port = 0;
  t.tensorboard_port = 0;
  auto wait = backoff_of(type.restart_backoff_ms, t.restarts);
  say(note::warn, "restarting " + to_string(t.id) + " (restart " +
                      std::to_string(t.restarts) + " of " +
                      std::to_string(type.max_restarts) + ")" +
                      (wait > 0 ? " in " + std::to_string(wait) + " ms" : std::string{}));
  if (wait > 0)
    arm(timer_kind::restart_backoff, wait, static_cast<size_t>(&t - tasks_.data()));
  else
    request_again(t);
}

void lifecycle::request_again(task_record& t) {
  t.state = task_state::requested;
  emit(reopen_task{t.id, attempt_});
  emit(ask_containers{ask_for(*t.type, t.id.index, 1)});
  if (cfg_.job.policy.allocation_timeout_ms > 0)
    arm(timer_kind::task_allocation, cfg_.job.policy.allocation_timeout_ms,
        static_cast<size_t>(&t - tasks_.data()));
}

bool lifecycle::tolerate(task_record& t) {
  if (is_chief(t))
    return false;
  auto& type = *t.type;
  std::string why;
  if (type.elastic()) {
    auto alive = std::count_if(tasks_.begin(), tasks_.end(), [&](auto& x) {
      return x.type == &type && x.state != task_state::failed &&
             x.state != task_state::lost;
    });
    if (alive >= type.elastic_min)
      why = std::to_string(alive) + " " + type.name + " tasks go on (elastic min " +
            std::to_string(type.elastic_min) + ")";
  }
  if (why.empty() && type.tolerated_failures >= 0 &&
      tolerated_by_type_[type.name] < type.tolerated_failures)
    why = "tolerated failure " + std::to_string(++tolerated_by_type_[type.name]) +
          " of " + std::to_string(type.tolerated_failures) + " of tasks." + type.name;
  if (why.empty() && type.tolerated_failures < 0 &&
      tolerated_in_job_ < cfg_.job.policy.tolerated_failures)
    why = "tolerated failure " + std::to_string(++tolerated_in_job_) + " of " +
          std::to_string(cfg_.job.policy.tolerated_failures) + " of the job";
  if (why.empty())
    return false;
  t.tolerated = true;
  say(note::warn, to_string(t.id) + " failed and the job goes on: " + why);
  return true;
}

void lifecycle::job_failure(std::string diag) {
  auto max = cfg_.job.policy.max_attempts;
  if (attempt_ < max) {
    say(note::warn, "attempt " + std::to_string(attempt_) + " of " + std::to_string(max) +
                        " failed, starting over: " + diag);
    diagnostics_ = "attempt " + std::to_string(attempt_) + " failed: " + diag;
    // Nothing of the old attempt is matched to the new one: messages carry
    // attempts, and its containers are forgotten as they are stopped.
    for (auto& t : tasks_)
      if (t.has_executor())
        emit(
            stop_executor{t.executor, "attempt " + std::to_string(attempt_) + " failed"});
    auto cs = live_containers();
    if (!cs.empty())
      emit(discard_containers{std::move(cs)});
    emit(publish_status{status()}); // the failed attempt's last table
    ++attempt_;
    start_attempt();
    return;
  }
  if (max > 1)
    diag = "attempt " + std::to_string(attempt_) + " of " + std::to_string(max) +
           " failed: " + diag;
  finish(job_state::failed, std::move(diag));
}

void lifecycle::on_task_deadline(const timer_purpose& p) {
  auto& t = tasks_[p.task];
  auto& policy = cfg_.job.policy;
  switch (p.kind) {
  case timer_kind::restart_backoff:
    if (t.state == task_state::restarting)
      request_again(t);
    return;
  case timer_kind::task_allocation:
    if (t.state != task_state::requested)
      return;
    emit(ask_containers{ask_for(*t.type, t.id.index, -1)});
    task_failed(t, task_state::failed,
                to_string(t.id) +
                    " could not be restarted: the resource manager granted " +
                    "no container for it within " +
                    std::to_string(policy.allocation_timeout_ms / 1000) + " s",
                false);
    return;
  case timer_kind::task_registration:
    on_task_registration_deadline(t);
    return;
  case timer_kind::execution:
    on_execution_deadline(t);
    return;
  default:
    return;
  }
}

} // namespace tony::core
