#include "actors/lifecycle_monitor.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/container_launcher.hpp"
#include "actors/rm_heartbeater.hpp"
#include "messages/error.hpp"
#include "messages/type_ids.hpp"

namespace tony {

namespace {

using std::chrono::milliseconds;

int64_t wall_ms() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Task states (doc/lifecycle.md).
constexpr const char* s_new = "NEW";
constexpr const char* s_requested = "REQUESTED";
constexpr const char* s_allocated = "ALLOCATED";
constexpr const char* s_launched = "LAUNCHED";
constexpr const char* s_registered = "REGISTERED";
constexpr const char* s_running = "RUNNING";
constexpr const char* s_succeeded = "SUCCEEDED";
constexpr const char* s_failed = "FAILED";
constexpr const char* s_killed = "KILLED";
constexpr const char* s_lost = "LOST";

struct task_rec {
  task_id id;
  bool tracked = true;
  bool sidecar = false;
  std::string state = s_new;
  container c;
  bool has_container = false;
  bool container_done = false;
  executor_actor exec;
  std::string host;
  int32_t port = 0;
  int32_t exit_code = 0;
  std::string diagnostics;
  /// It failed by a signal its executor reported, or its executor was
  /// lost: YARN's completion of its container may still say why.
  bool awaiting_reason = false;
  caf::actor_clock::time_point last_heartbeat;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;

  bool finished() const {
    return state == s_succeeded || state == s_failed || state == s_killed ||
           state == s_lost;
  }
  bool has_executor() const { return state == s_registered || state == s_running; }
};

struct monitor_state {
  monitor_config cfg;
  registry_actor registry;
  rm_heartbeater_actor hb;
  container_launcher_actor launcher;

  std::string job_state = "NEW";
  std::string diagnostics;
  int32_t attempt = 1;
  std::vector<task_rec> tasks;
  std::map<std::string, size_t> by_container;
  std::map<caf::actor_addr, size_t> by_executor;
  /// Containers of earlier attempts still being stopped.
  std::vector<container> leftovers;
  bool registration_armed = false;
  bool ticking = false;
  bool finishing = false;
  bool stopping_containers = false;
  /// Containers are stopped; the final status waits for YARN's reasons.
  bool awaiting_reasons = false;
  bool done = false;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::vector<caf::response_promise> waiters;

  static inline const char* name = "lifecycle_monitor";
};

using monitor_pointer = lifecycle_monitor_actor::stateful_pointer<monitor_state>;

void finish(monitor_pointer self, const std::string& final_state, std::string diag);
void job_failure(monitor_pointer self, std::string diag);

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

job_status snapshot(monitor_pointer self) {
  auto& st = self->state;
  job_status result;
  result.app_id = st.cfg.app_id;
  result.name = st.cfg.job.name;
  result.state = st.job_state;
  result.diagnostics = st.diagnostics;
  result.attempt = st.attempt;
  result.started_ms = st.started_ms;
  result.finished_ms = st.finished_ms;
  result.tracking_url = st.cfg.am.tracking_url;
  for (auto& t : st.tasks) {
    task_status ts;
    ts.task = t.id;
    ts.attempt = st.attempt;
    ts.state = t.state;
    ts.host = t.host.empty() ? t.c.host : t.host;
    ts.port = t.port;
    ts.container_id = t.c.id;
    ts.exit_code = t.exit_code;
    ts.tracked = t.tracked;
    ts.diagnostics = t.diagnostics;
    ts.started_ms = t.started_ms;
    ts.finished_ms = t.finished_ms;
    if (t.has_container && st.cfg.log_dir_of)
      ts.log_dir = st.cfg.log_dir_of(t.c);
    result.tasks.push_back(std::move(ts));
  }
  return result;
}

// Hands the snapshot to the event sink, if any.
void notify(monitor_pointer self) {
  if (self->state.cfg.on_change)
    self->state.cfg.on_change(snapshot(self));
}

// Notifies the event sink when a handler returns, however it returns.
struct change_guard {
  monitor_pointer self;
  ~change_guard() { notify(self); }
};

task_rec* find_task(monitor_pointer self, const task_id& id) {
  for (auto& t : self->state.tasks)
    if (t.id == id)
      return &t;
  return nullptr;
}

void mark_finished(task_rec& t, const char* state, std::string diag) {
  t.state = state;
  t.diagnostics = std::move(diag);
  t.finished_ms = wall_ms();
}

// Builds the task list, tells the registry, asks for containers.
void start_attempt(monitor_pointer self) {
  auto& st = self->state;
  st.tasks.clear();
  st.by_container.clear();
  st.by_executor.clear();
  st.registration_armed = false;
  std::vector<task_id> ids;
  std::vector<container_ask> asks;
  for (auto& type : st.cfg.job.tasks) {
    // One ask per priority: the type's own, and one per group of its tasks
    // with a capability of their own ([tasks.<type>.index.<i>]).
    std::map<int32_t, container_ask> by_priority;
    for (int32_t i = 0; i < type.instances; ++i) {
      task_rec t;
      t.id = {type.name, i};
      t.tracked = type.tracked;
      t.sidecar = type.sidecar;
      t.state = s_requested;
      ids.push_back(t.id);
      st.tasks.push_back(std::move(t));
      auto prio = type.priority_of(i);
      auto& ask = by_priority[prio];
      ask = {prio, type.name, type.capability_of(i), type.node_label, ask.count + 1};
    }
    for (auto& [prio, ask] : by_priority)
      asks.push_back(std::move(ask));
  }
  spdlog::info("monitor: attempt {}: asking for {} containers", st.attempt, ids.size());
  st.job_state = "ALLOCATING";
  self->send(st.registry, expect_atom_v, std::move(ids), st.attempt);
  self->send(st.hb, ask_atom_v, std::move(asks));
  self->delayed_send(self, milliseconds(st.cfg.job.policy.allocation_timeout_ms),
                     deadline_atom_v, static_cast<int32_t>(deadline_kind::allocation),
                     st.attempt);
}

std::vector<container> live_containers(monitor_pointer self) {
  auto& st = self->state;
  std::vector<container> result = st.leftovers;
  for (auto& t : st.tasks)
    if (t.has_container && !t.container_done)
      result.push_back(t.c);
  return result;
}

// Applies the failure policy to a task that just failed.
void task_failed(monitor_pointer self, task_rec& t, const char* state, std::string diag) {
  auto& st = self->state;
  if (t.finished())
    return;
  spdlog::warn("monitor: {}", diag);
  mark_finished(t, state, diag);
  if (st.finishing)
    return;
  if (t.sidecar) {
    spdlog::info("monitor: {} is a sidecar; its failure does not end the job",
                 to_string(t.id));
    return;
  }
  job_failure(self, std::move(diag));
}

void check_success(monitor_pointer self) {
  auto& st = self->state;
  if (st.finishing)
    return;
  size_t tracked = 0;
  for (auto& t : st.tasks) {
    if (!t.tracked)
      continue;
    ++tracked;
    if (t.state != s_succeeded)
      return;
  }
  if (tracked == 0)
    return; // a job of untracked tasks only ends by timeout or kill
  finish(self, "SUCCEEDED", "");
}

// The end: every waiter learns the final status.
void complete(monitor_pointer self) {
  auto& st = self->state;
  st.done = true;
  st.finished_ms = wall_ms();
  spdlog::info("monitor: job {} {}", st.cfg.app_id, st.job_state);
  notify(self);
  auto status = snapshot(self);
  for (auto& rp : st.waiters)
    rp.deliver(status);
  st.waiters.clear();
}

void unregister(monitor_pointer self) {
  auto& st = self->state;
  final_report report{st.job_state, st.diagnostics, st.cfg.am.tracking_url};
  auto limit = milliseconds(st.cfg.timing.rpc_timeout_ms * 3);
  self->request(st.hb, limit, finish_atom_v, std::move(report))
      .then([=](bool) { complete(self); },
            [=](caf::error& err) {
              spdlog::error("monitor: unregistering failed: {}", describe(err));
              complete(self);
            });
}

bool reasons_pending(monitor_pointer self) {
  for (auto& t : self->state.tasks)
    if (t.awaiting_reason && !t.container_done)
      return true;
  return false;
}

// A container the NodeManager kills (over its memory limit, preempted, its
// node lost) ends its task by a signal first: the executor reports that, or
// dies before it can, and YARN's reason comes with the container's
// completion a heartbeat or two later. A failed job waits for those
// reasons, at most container_reason_wait_ms, so that its final status says
// why.
void unregister_when_explained(monitor_pointer self) {
  auto& st = self->state;
  if (st.job_state != "FAILED" || !reasons_pending(self)) {
    unregister(self);
    return;
  }
  st.awaiting_reasons = true;
  self->delayed_send(self, milliseconds(st.cfg.timing.container_reason_wait_ms),
                     deadline_atom_v,
                     static_cast<int32_t>(deadline_kind::container_reasons), st.attempt);
}

// Adds YARN's reason for the end of a container to a task that a signal
// ended or whose executor was lost, and to the job's diagnostics that name
// it. Statuses above -100 are the command's own exit code; -105 is the
// AM's own stop.
void add_container_reason(monitor_pointer self, task_rec& t,
                          const container_completion& cc) {
  if (!t.awaiting_reason)
    return;
  t.awaiting_reason = false;
  if (cc.exit_status > -100 || cc.exit_status == -105)
    return;
  auto& st = self->state;
  auto head = t.diagnostics.substr(0, t.diagnostics.find('\n'));
  auto told = head + ": " + describe_container_exit(cc.exit_status);
  auto nm_said = cc.diagnostics.substr(0, cc.diagnostics.find('\n'));
  if (!nm_said.empty())
    told += " (" + nm_said + ")";
  t.diagnostics.replace(0, head.size(), told);
  t.exit_code = cc.exit_status;
  if (auto at = st.diagnostics.find(head); at != std::string::npos)
    st.diagnostics.replace(at, head.size(), told);
}

// Stops every container still alive, then unregisters.
void stop_containers(monitor_pointer self) {
  auto& st = self->state;
  if (st.stopping_containers)
    return;
  st.stopping_containers = true;
  auto cs = live_containers(self);
  st.leftovers.clear();
  if (cs.empty()) {
    unregister_when_explained(self);
    return;
  }
  auto limit =
      milliseconds(st.cfg.job.policy.stop_grace_ms + st.cfg.timing.rpc_timeout_ms);
  self->request(st.launcher, limit, stop_all_atom_v, std::move(cs))
      .then([=](bool) { unregister_when_explained(self); },
            [=](caf::error& err) {
              spdlog::error("monitor: stopping containers failed: {}", describe(err));
              unregister_when_explained(self);
            });
}

// Finishing waits for stopped executors to report, at most the stop grace.
void maybe_stop_containers(monitor_pointer self) {
  auto& st = self->state;
  for (auto& t : st.tasks)
    if (t.has_executor())
      return;
  stop_containers(self);
}

void finish(monitor_pointer self, const std::string& final_state, std::string diag) {
  auto& st = self->state;
  if (st.finishing)
    return;
  st.finishing = true;
  st.job_state = final_state;
  st.diagnostics = std::move(diag);
  spdlog::info("monitor: finishing as {}{}{}", final_state,
               st.diagnostics.empty() ? "" : ": ", st.diagnostics);
  self->send(st.hb, cancel_atom_v);
  for (auto& t : st.tasks) {
    if (t.has_executor()) {
      self->send(t.exec, stop_atom_v, "the job is " + final_state);
    } else if (!t.finished()) {
      mark_finished(t, s_killed, "stopped: the job is " + final_state);
    }
  }
  self->delayed_send(self, milliseconds(st.cfg.job.policy.stop_grace_ms + 500),
                     deadline_atom_v, static_cast<int32_t>(deadline_kind::stop_grace),
                     st.attempt);
  maybe_stop_containers(self);
}

void job_failure(monitor_pointer self, std::string diag) {
  auto& st = self->state;
  if (st.attempt < st.cfg.job.policy.max_attempts) {
    spdlog::warn("monitor: attempt {} of {} failed, starting over: {}", st.attempt,
                 st.cfg.job.policy.max_attempts, diag);
    st.diagnostics = "attempt " + std::to_string(st.attempt) + " failed: " + diag;
    // Old executors are told to stop, old containers are stopped; nothing of
    // the old attempt is matched to the new one (messages carry attempts).
    for (auto& t : st.tasks)
      if (t.has_executor())
        self->send(t.exec, stop_atom_v,
                   std::string{"attempt "} + std::to_string(st.attempt) + " failed");
    auto cs = live_containers(self);
    st.leftovers.clear();
    if (!cs.empty())
      self->request(st.launcher,
                    milliseconds(st.cfg.job.policy.stop_grace_ms +
                                 st.cfg.timing.rpc_timeout_ms),
                    stop_all_atom_v, std::move(cs))
          .then([](bool) {}, [](caf::error&) {});
    notify(self); // the failed attempt's last table, before it is replaced
    ++st.attempt;
    start_attempt(self);
    return;
  }
  if (st.cfg.job.policy.max_attempts > 1)
    diag = "attempt " + std::to_string(st.attempt) + " of " +
           std::to_string(st.cfg.job.policy.max_attempts) + " failed: " + diag;
  finish(self, "FAILED", std::move(diag));
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

void arm_registration_deadline(monitor_pointer self) {
  auto& st = self->state;
  if (st.registration_armed)
    return;
  for (auto& t : st.tasks)
    if (t.state == s_requested || t.state == s_allocated)
      return;
  st.registration_armed = true;
  self->delayed_send(self, milliseconds(st.cfg.job.policy.registration_timeout_ms),
                     deadline_atom_v, static_cast<int32_t>(deadline_kind::registration),
                     st.attempt);
}

void on_deadline(monitor_pointer self, deadline_kind kind, int32_t attempt) {
  auto& st = self->state;
  if (kind == deadline_kind::job) {
    if (!st.finishing) {
      auto secs = st.cfg.job.timeout_ms / 1000;
      finish(self, "KILLED",
             "the job ran past its timeout of " + std::to_string(secs) + " s");
    }
    return;
  }
  if (kind == deadline_kind::container_reasons) {
    if (st.awaiting_reasons) {
      st.awaiting_reasons = false;
      unregister(self);
    }
    return;
  }
  if (kind == deadline_kind::stop_grace) {
    if (st.finishing && !st.stopping_containers) {
      for (auto& t : st.tasks)
        if (t.has_executor())
          mark_finished(t, s_killed, "did not stop within the grace period; killed");
      stop_containers(self);
    }
    return;
  }
  if (st.finishing || attempt != st.attempt)
    return;
  std::vector<std::string> missing;
  if (kind == deadline_kind::allocation) {
    for (auto& t : st.tasks)
      if (t.state == s_requested) {
        auto type = st.cfg.job.find(t.id.type);
        missing.push_back(to_string(t.id) +
                          (type ? " (" + to_string(type->capability) + ")" : ""));
      }
    if (missing.empty())
      return;
    std::string list;
    for (auto& m : missing)
      list += (list.empty() ? "" : ", ") + m;
    self->send(st.hb, cancel_atom_v);
    job_failure(self, "allocation timeout: after " +
                          std::to_string(st.cfg.job.policy.allocation_timeout_ms / 1000) +
                          " s the resource manager had not granted " +
                          std::to_string(missing.size()) + " of " +
                          std::to_string(st.tasks.size()) +
                          " containers; missing: " + list);
    return;
  }
  if (kind == deadline_kind::registration) {
    if (st.job_state == "RUNNING")
      return;
    std::string list;
    for (auto& t : st.tasks)
      if (!t.has_executor() && !t.finished())
        list += (list.empty() ? "" : ", ") + to_string(t.id);
    if (list.empty())
      return;
    job_failure(self,
                "registration timeout: after " +
                    std::to_string(st.cfg.job.policy.registration_timeout_ms / 1000) +
                    " s these tasks had not registered: " + list);
  }
}

void check_heartbeats(monitor_pointer self) {
  auto& st = self->state;
  auto now = self->clock().now();
  auto limit = milliseconds(st.cfg.job.policy.heartbeat_timeout_ms);
  std::vector<task_id> silent;
  for (auto& t : st.tasks)
    if (t.has_executor() && now - t.last_heartbeat >= limit)
      silent.push_back(t.id);
  // A failure may start a new attempt, which rebuilds the task list.
  auto attempt = st.attempt;
  for (auto& id : silent) {
    auto t = find_task(self, id);
    if (st.finishing || st.attempt != attempt || !t)
      break;
    t->awaiting_reason = true;
    task_failed(self, *t, s_lost,
                to_string(t->id) + " lost: no heartbeat from its executor for " +
                    std::to_string(limit.count() / 1000) + " s (container " + t->c.id +
                    " on " + t->c.host + ")");
  }
}

void schedule_tick(monitor_pointer self) {
  auto& st = self->state;
  if (st.finishing)
    return;
  // A tenth of the timeout, within [100 ms, 1 s]: a silent executor is
  // noticed at most that long after its timeout.
  auto period =
      std::clamp<int64_t>(st.cfg.job.policy.heartbeat_timeout_ms / 10, 100, 1000);
  self->delayed_send(self, milliseconds(period), tick_atom_v);
}

} // namespace

std::string describe_container_exit(int32_t status) {
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

lifecycle_monitor_actor spawn_lifecycle_monitor(caf::actor_system& sys,
                                                monitor_config cfg,
                                                registry_actor registry,
                                                rm_client_actor rm, nm_client_actor nm,
                                                launch_factory make_launch) {
  auto impl = [](monitor_pointer self, monitor_config cfg, registry_actor registry,
                 rm_client_actor rm, nm_client_actor nm,
                 launch_factory make_launch) -> lifecycle_monitor_actor::behavior_type {
    auto& st = self->state;
    st.cfg = std::move(cfg);
    st.registry = std::move(registry);
    st.started_ms = wall_ms();
    lifecycle_monitor_actor me = self;
    st.hb =
        spawn_rm_heartbeater(self->system(), std::move(rm), me, st.cfg.am, st.cfg.timing);
    st.launcher =
        spawn_container_launcher(self->system(), std::move(nm), me,
                                 std::move(make_launch), st.cfg.timing.rpc_timeout_ms);
    self->link_to(st.hb);
    self->link_to(st.launcher);
    if (st.cfg.job.timeout_ms > 0)
      self->delayed_send(self, milliseconds(st.cfg.job.timeout_ms), deadline_atom_v,
                         static_cast<int32_t>(deadline_kind::job), int32_t{0});
    self->set_down_handler([=](const caf::down_msg& msg) {
      change_guard guard{self};
      auto& st = self->state;
      auto i = st.by_executor.find(msg.source);
      if (i == st.by_executor.end())
        return;
      auto& t = st.tasks[i->second];
      st.by_executor.erase(i);
      if (t.finished())
        return;
      if (st.finishing) {
        mark_finished(t, s_killed, "stopped: the job is " + st.job_state);
        maybe_stop_containers(self);
        return;
      }
      t.awaiting_reason = true; // its container may have been killed
      task_failed(self, t, s_lost,
                  to_string(t.id) + " lost: its executor's connection dropped (" +
                      caf::to_string(msg.reason) + "; container " + t.c.id + " on " +
                      t.c.host + ")");
    });
    return {
        [=](rm_ready_atom, const rm_registration& reg) {
          change_guard guard{self};
          auto& st = self->state;
          if (st.finishing)
            return;
          resource total;
          for (auto& type : st.cfg.job.tasks) {
            for (int32_t i = 0; i < type.instances; ++i) {
              auto& capability = type.capability_of(i);
              if (!fits(capability, reg.max_capability)) {
                finish(
                    self, "FAILED",
                    (type.index_capability.count(i) != 0
                         ? "task " + type.name + ":" + std::to_string(i)
                         : "tasks." + type.name) +
                        " asks for " + to_string(capability) +
                        " per task, but the largest container this cluster grants is " +
                        to_string(reg.max_capability) +
                        "; lower the request in job.toml or use a larger "
                        "queue/cluster");
                return;
              }
              total.memory_mb += capability.memory_mb;
              total.vcores += capability.vcores;
              total.gpus += capability.gpus;
            }
          }
          auto cap = reg.cluster_capacity;
          if (cap.memory_mb > 0 && !fits(total, cap)) {
            finish(self, "FAILED",
                   "the job needs " + to_string(total) +
                       " in all, but the cluster has only " + to_string(cap) +
                       "; it can never be scheduled");
            return;
          }
          start_attempt(self);
        },
        [=](rm_error_atom, const std::string& what) {
          change_guard guard{self};
          if (!self->state.finishing)
            finish(self, "FAILED", what);
        },
        [=](allocated_atom, const std::vector<container>& cs) {
          change_guard guard{self};
          auto& st = self->state;
          std::vector<std::string> excess;
          for (auto& c : cs) {
            task_rec* match = nullptr;
            if (!st.finishing) {
              for (auto& t : st.tasks) {
                auto type = st.cfg.job.find(t.id.type);
                if (t.state == s_requested && type &&
                    type->priority_of(t.id.index) == c.priority) {
                  match = &t;
                  break;
                }
              }
            }
            if (!match) {
              spdlog::info("monitor: releasing excess container {}", c.id);
              excess.push_back(c.id);
              continue;
            }
            match->state = s_allocated;
            match->c = c;
            match->has_container = true;
            st.by_container[c.id] = static_cast<size_t>(match - st.tasks.data());
            spdlog::info("monitor: {} -> {} on {}", to_string(match->id), c.id, c.host);
            self->send(st.launcher, launch_atom_v, match->id, st.attempt, c);
          }
          if (!excess.empty())
            self->send(st.hb, release_atom_v, std::move(excess));
          if (!st.finishing && st.job_state == "ALLOCATING") {
            bool all = true;
            for (auto& t : st.tasks)
              all = all && t.state != s_requested;
            if (all)
              st.job_state = "REGISTERING";
          }
        },
        [=](completed_atom, const std::vector<container_completion>& done) {
          change_guard guard{self};
          auto& st = self->state;
          for (auto& cc : done) {
            auto i = st.by_container.find(cc.container_id);
            if (i == st.by_container.end())
              continue; // released, or of an earlier attempt
            auto& t = st.tasks[i->second];
            t.container_done = true;
            if (t.finished()) {
              add_container_reason(self, t, cc);
              continue;
            }
            if (st.finishing) {
              mark_finished(t, s_killed, "stopped: the job is " + st.job_state);
              continue;
            }
            auto diag = to_string(t.id) +
                        " failed: " + describe_container_exit(cc.exit_status) +
                        " (container " + t.c.id + " on " + t.c.host + ")";
            if (!cc.diagnostics.empty())
              diag += "\n" + tail_lines(cc.diagnostics, 10);
            t.exit_code = cc.exit_status;
            task_failed(self, t, cc.exit_status <= -100 ? s_lost : s_failed, diag);
          }
          if (st.finishing)
            maybe_stop_containers(self);
          if (st.awaiting_reasons && !reasons_pending(self)) {
            st.awaiting_reasons = false;
            unregister(self);
          }
        },
        [=](launched_atom, const task_id& id, int32_t attempt, const container&) {
          change_guard guard{self};
          auto& st = self->state;
          if (attempt != st.attempt || st.finishing)
            return;
          if (auto t = find_task(self, id); t && t->state == s_allocated)
            t->state = s_launched;
          arm_registration_deadline(self);
        },
        [=](launch_failed_atom, const task_id& id, int32_t attempt, const container& c,
            const std::string& why) {
          change_guard guard{self};
          auto& st = self->state;
          if (attempt != st.attempt)
            return;
          if (auto t = find_task(self, id)) {
            t->container_done = true;
            task_failed(self, *t, s_failed,
                        to_string(id) + " could not be launched in " + c.id + " on " +
                            c.host + ": " + why);
          }
        },
        [=](registered_atom, const executor_hello& hello, const executor_actor& exec) {
          change_guard guard{self};
          auto& st = self->state;
          if (hello.attempt != st.attempt)
            return;
          auto t = find_task(self, hello.task);
          if (!t || t->finished())
            return;
          if (st.finishing) {
            self->send(exec, stop_atom_v, "the job is " + st.job_state);
            return;
          }
          t->state = s_registered;
          t->exec = exec;
          t->host = hello.host;
          t->port = hello.port;
          t->last_heartbeat = self->clock().now();
          self->monitor(exec);
          st.by_executor[exec.address()] = static_cast<size_t>(t - st.tasks.data());
          if (!st.ticking) {
            st.ticking = true;
            schedule_tick(self);
          }
        },
        [=](barrier_atom, int32_t attempt) {
          change_guard guard{self};
          auto& st = self->state;
          if (attempt != st.attempt || st.finishing)
            return;
          st.job_state = "RUNNING";
          auto now = wall_ms();
          for (auto& t : st.tasks)
            if (t.state == s_registered) {
              t.state = s_running;
              t.started_ms = now;
            }
        },
        [=](heartbeat_atom, const task_id& id, int32_t attempt) {
          if (attempt != self->state.attempt)
            return;
          if (auto t = find_task(self, id))
            t->last_heartbeat = self->clock().now();
        },
        [=](exit_atom, const task_exit& x) -> bool {
          change_guard guard{self};
          auto& st = self->state;
          if (x.attempt != st.attempt)
            return true;
          auto t = find_task(self, x.task);
          if (!t || t->finished())
            return true;
          t->exit_code = x.exit_code;
          if (st.finishing) {
            mark_finished(*t, x.exit_code == 0 ? s_succeeded : s_killed,
                          "stopped: the job is " + st.job_state);
            maybe_stop_containers(self);
            return true;
          }
          if (x.exit_code == 0 && x.signal == 0) {
            spdlog::info("monitor: {} succeeded", to_string(x.task));
            mark_finished(*t, s_succeeded, "");
            check_success(self);
            return true;
          }
          t->awaiting_reason = x.signal != 0;
          task_failed(self, *t, s_failed, exit_diagnostics(x));
          return true;
        },
        [=](status_atom) { return snapshot(self); },
        [=](wait_atom) -> caf::result<job_status> {
          auto& st = self->state;
          if (st.done)
            return snapshot(self);
          auto rp = self->make_response_promise<job_status>();
          st.waiters.push_back(rp);
          return rp;
        },
        [=](kill_atom, const std::string& reason) {
          change_guard guard{self};
          finish(self, "KILLED", reason.empty() ? "killed on request" : reason);
        },
        [=](deadline_atom, int32_t kind, int32_t attempt) {
          change_guard guard{self};
          on_deadline(self, static_cast<deadline_kind>(kind), attempt);
        },
        [=](tick_atom) {
          change_guard guard{self};
          check_heartbeats(self);
          schedule_tick(self);
        },
    };
  };
  return sys.spawn(impl, std::move(cfg), std::move(registry), std::move(rm),
                   std::move(nm), std::move(make_launch));
}

} // namespace tony
