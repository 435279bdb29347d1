#include "actors/lifecycle_monitor.hpp"

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "core/lifecycle.hpp"
#include "core/progress.hpp"
#include "messages/error.hpp"
#include "messages/type_ids.hpp"

namespace tony {

namespace {

using std::chrono::milliseconds;

struct monitor_state {
  monitor_config cfg;
  std::unique_ptr<core::lifecycle> core;
  registry_actor registry;
  rm_heartbeater_actor hb;
  container_launcher_actor launcher;
  /// Executors by the container they registered from, and back.
  std::map<std::string, executor_actor> executors;
  std::map<caf::actor_addr, std::string> container_of;
  std::vector<caf::response_promise> waiters;
  /// Clients that asked to wait for the end and owe a bye: each leaves the
  /// set with its bye or when it is gone (its connection dropped), so a
  /// client that leaves early does not hold the linger to its limit.
  std::set<caf::actor_addr> owing;
  std::vector<caf::response_promise> lingering;
  /// The core's clock: wall-clock milliseconds read through the actor clock
  /// (which the test coordinator drives), anchored at spawn.
  int64_t wall_at_spawn_ms = 0;
  caf::actor_clock::time_point clock_at_spawn;
  /// The tasks' own progress (core/progress.hpp), and the job's as last
  /// told to the heartbeater, worked out at most once a second.
  core::reported_progress progress;
  float progress_sent = -1;
  int64_t progress_at_ms = 0;

  static inline const char* name = "lifecycle_monitor";
};

using monitor_pointer = lifecycle_monitor_actor::stateful_pointer<monitor_state>;

int64_t now_ms(monitor_pointer self) {
  auto& st = self->state;
  auto since = self->clock().now() - st.clock_at_spawn;
  return st.wall_at_spawn_ms + std::chrono::duration_cast<milliseconds>(since).count();
}

void feed(monitor_pointer self, const core::event& e);

// The job's progress goes to the RM with the heartbeater's allocate calls:
// worked out again at most once a second (10,000 tasks heartbeat every
// 0.1 ms), and sent when it moved.
void report_progress(monitor_pointer self) {
  auto& st = self->state;
  auto now = now_ms(self);
  if (!st.hb || now - st.progress_at_ms < 1000)
    return;
  st.progress_at_ms = now;
  auto p = core::job_progress(st.core->status(), st.progress);
  if (std::abs(p - st.progress_sent) < 0.001f)
    return;
  st.progress_sent = p;
  self->send(st.hb, progress_atom_v, p);
}

// -- carrying out the core's commands -------------------------------------------------

// Requests to the launcher and the RM are bounded; their answers are events.
void stop_all(monitor_pointer self, std::vector<container> cs, bool report) {
  auto& st = self->state;
  auto limit =
      milliseconds(st.cfg.job.policy.stop_grace_ms + st.cfg.timing.rpc_timeout_ms);
  self->request(st.launcher, limit, stop_all_atom_v, std::move(cs))
      .then(
          [=](bool) {
            if (report)
              feed(self, core::containers_stopped{});
          },
          [=](caf::error& err) {
            spdlog::error("monitor: stopping containers failed: {}", describe(err));
            if (report)
              feed(self, core::containers_stopped{});
          });
}

void unregister(monitor_pointer self, final_report report) {
  if (auto& before = self->state.cfg.before_unregister)
    before(self->state.core->status());
  // The heartbeater tries for up to rm_failure_limit, its last call up to
  // an rpc timeout more.
  auto& timing = self->state.cfg.timing;
  auto limit = milliseconds(timing.rm_failure_limit_ms + timing.rpc_timeout_ms * 3);
  self->request(self->state.hb, limit, finish_atom_v, std::move(report))
      .then([=](bool) { feed(self, core::unregistered{}); },
            [=](caf::error& err) {
              spdlog::error("monitor: unregistering failed: {}", describe(err));
              feed(self, core::unregistered{});
            });
}

// Lingering ends once every waiter said bye or is gone.
void check_lingering(monitor_pointer self) {
  auto& st = self->state;
  if (!st.core->done() || !st.owing.empty())
    return;
  for (auto& rp : st.lingering)
    rp.deliver(true);
  st.lingering.clear();
}

void finish_job(monitor_pointer self) {
  auto& st = self->state;
  auto status = st.core->status();
  if (st.core->attempt_gone() && st.cfg.on_attempt_gone)
    st.cfg.on_attempt_gone();
  for (auto& rp : st.waiters)
    rp.deliver(status);
  st.waiters.clear();
  check_lingering(self);
}

// Every waiter is answered at the end and owes a bye (the registry
// delegates a client's wait and bye, so the sender is the client).
caf::result<job_status> on_wait(monitor_pointer self) {
  auto& st = self->state;
  if (auto who = self->current_sender(); who && st.owing.insert(who->address()).second)
    self->monitor(caf::actor_cast<caf::actor>(who));
  if (st.core->done())
    return st.core->status();
  auto rp = self->make_response_promise<job_status>();
  st.waiters.push_back(rp);
  return rp;
}

// The event sink sees the job, unless this attempt is gone and another
// takes the job over (its end is not the job's).
void publish(monitor_pointer self, const job_status& status) {
  auto& st = self->state;
  if (st.cfg.on_change && !st.core->leaves_job_to_next_attempt())
    st.cfg.on_change(status);
}

// Carries out one command; consecutive asks travel as one message.
void carry_out(monitor_pointer self, core::command& c, std::vector<container_ask>& asks) {
  auto& st = self->state;
  if (auto ask = std::get_if<core::ask_containers>(&c)) {
    asks.push_back(std::move(ask->ask));
    return;
  }
  if (!asks.empty())
    self->send(st.hb, ask_atom_v, std::exchange(asks, {}));
  std::visit(
      [&](auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, core::register_am>) {
          self->send(st.hb, start_atom_v);
        } else if constexpr (std::is_same_v<T, core::cancel_asks>) {
          self->send(st.hb, cancel_atom_v);
        } else if constexpr (std::is_same_v<T, core::release_containers>) {
          self->send(st.hb, release_atom_v, std::move(x.container_ids));
        } else if constexpr (std::is_same_v<T, core::avoid_nodes>) {
          self->send(st.hb, avoid_atom_v, std::move(x.hosts));
        } else if constexpr (std::is_same_v<T, core::launch>) {
          self->send(st.launcher, launch_atom_v, x.task, x.attempt, x.restart, x.target);
        } else if constexpr (std::is_same_v<T, core::expect_tasks>) {
          self->send(st.registry, expect_atom_v, std::move(x.tasks), x.attempt);
        } else if constexpr (std::is_same_v<T, core::reopen_task>) {
          self->send(st.registry, reopen_atom_v, x.task, x.attempt);
        } else if constexpr (std::is_same_v<T, core::resume_tasks>) {
          std::vector<executor_hello> adopted;
          for (auto& a : x.adopted) {
            executor_hello hello;
            hello.task = a.task;
            hello.attempt = x.attempt;
            hello.container_id = a.container_id;
            adopted.push_back(std::move(hello));
          }
          self->send(st.registry, resume_atom_v, std::move(x.tasks), std::move(adopted),
                     x.attempt);
        } else if constexpr (std::is_same_v<T, core::watch_executor>) {
          if (auto i = st.executors.find(x.container_id); i != st.executors.end()) {
            self->monitor(i->second);
            st.container_of[i->second.address()] = x.container_id;
          }
        } else if constexpr (std::is_same_v<T, core::stop_executor>) {
          if (auto i = st.executors.find(x.container_id); i != st.executors.end())
            self->send(i->second, stop_atom_v, std::move(x.reason));
        } else if constexpr (std::is_same_v<T, core::discard_containers>) {
          stop_all(self, std::move(x.containers), false);
        } else if constexpr (std::is_same_v<T, core::stop_containers>) {
          stop_all(self, std::move(x.containers), true);
        } else if constexpr (std::is_same_v<T, core::arm_timer>) {
          self->delayed_send(self, milliseconds(x.delay_ms), timer_atom_v,
                             static_cast<uint64_t>(x.id));
        } else if constexpr (std::is_same_v<T, core::unregister>) {
          unregister(self, std::move(x.report));
        } else if constexpr (std::is_same_v<T, core::job_done>) {
          finish_job(self);
        } else if constexpr (std::is_same_v<T, core::publish_status>) {
          publish(self, x.status);
        } else if constexpr (std::is_same_v<T, core::note>) {
          if (x.level == core::note::warn)
            spdlog::warn("monitor: {}", x.text);
          else
            spdlog::info("monitor: {}", x.text);
        }
      },
      c);
}

void run(monitor_pointer self, core::commands cs) {
  std::vector<container_ask> asks;
  for (auto& c : cs)
    carry_out(self, c, asks);
  if (!asks.empty())
    self->send(self->state.hb, ask_atom_v, std::move(asks));
}

// One event: the core decides, the commands go out, the event sink sees the
// job as it is now.
void feed(monitor_pointer self, const core::event& e) {
  auto& st = self->state;
  run(self, st.core->handle(e, now_ms(self)));
  publish(self, st.core->status());
}

core::lifecycle_config core_config(const monitor_config& cfg) {
  core::lifecycle_config result;
  result.job = cfg.job;
  result.app_id = cfg.app_id;
  result.tracking_url = cfg.tracking_url;
  result.nodes = cfg.nodes;
  result.placement_constraints = cfg.placement_constraints;
  result.placement_processor = cfg.placement_processor;
  result.racks = cfg.racks;
  result.log_dir_of = cfg.log_dir_of;
  result.am_attempt = cfg.am_attempt;
  result.resume = cfg.resume;
  return result;
}

// A supervised executor's connection dropped, or an actor the monitor
// drives died (a bug): the job cannot go on without it.
void on_down(monitor_pointer self, const caf::down_msg& msg) {
  auto& st = self->state;
  if (st.owing.erase(msg.source) > 0) {
    // A client that waited for the end is gone: it owes no bye.
    check_lingering(self);
    return;
  }
  auto i = st.container_of.find(msg.source);
  if (i == st.container_of.end()) {
    if (msg.source == st.registry.address() || msg.source == st.hb.address() ||
        msg.source == st.launcher.address())
      feed(self, core::rm_failed{"an actor of the ApplicationMaster ended: " +
                                 caf::to_string(msg.reason)});
    return;
  }
  auto container_id = i->second;
  st.container_of.erase(i);
  feed(self, core::executor_lost{container_id, caf::to_string(msg.reason)});
}

void on_start(monitor_pointer self, registry_actor registry, rm_heartbeater_actor hb,
              container_launcher_actor launcher) {
  auto& st = self->state;
  if (st.registry)
    return; // wired once
  st.registry = std::move(registry);
  st.hb = std::move(hb);
  st.launcher = std::move(launcher);
  self->monitor(st.registry);
  self->monitor(st.hb);
  self->monitor(st.launcher);
  run(self, st.core->start(now_ms(self)));
}

} // namespace

std::string describe_container_exit(int32_t status) {
  return core::lifecycle::describe_container_exit(status);
}

// Heartbeats change nothing of the status: no event sink call; their
// samples go to the metrics.
void on_heartbeat(monitor_pointer self, const task_id& task, int32_t attempt,
                  const task_sample& sample) {
  run(self, self->state.core->handle(core::heartbeat{task, attempt}, now_ms(self)));
  // Stamped with the AM's clock when it arrives, not the node's: a node
  // whose clock is off would put its task's points in the future or the
  // past of every other task's (doc/operations.md, "Node clocks"). A
  // heartbeat comes every second.
  if (sample.time_ms > 0 && self->state.cfg.on_sample) {
    auto received = sample;
    received.time_ms = now_ms(self);
    self->state.cfg.on_sample(task, attempt, received);
  }
  if (sample.progress >= 0)
    self->state.progress[task] = {attempt, sample.progress};
  report_progress(self);
}

lifecycle_monitor_actor spawn_lifecycle_monitor(caf::actor_system& sys,
                                                monitor_config cfg) {
  auto impl = [](monitor_pointer self,
                 monitor_config cfg) -> lifecycle_monitor_actor::behavior_type {
    auto& st = self->state;
    st.core = std::make_unique<core::lifecycle>(core_config(cfg));
    st.cfg = std::move(cfg);
    st.wall_at_spawn_ms = std::chrono::duration_cast<milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
    st.clock_at_spawn = self->clock().now();
    self->set_down_handler([=](const caf::down_msg& msg) { on_down(self, msg); });
    return {
        [=](start_atom, registry_actor& registry, rm_heartbeater_actor& hb,
            container_launcher_actor& launcher) {
          on_start(self, std::move(registry), std::move(hb), std::move(launcher));
        },
        [=](rm_ready_atom, const rm_registration& reg) {
          feed(self, core::rm_registered{reg});
        },
        [=](rm_error_atom, const std::string& what, bool attempt_gone) {
          feed(self, core::rm_failed{what, attempt_gone});
        },
        [=](allocated_atom, const std::vector<container>& cs) {
          feed(self, core::granted{cs});
        },
        [=](completed_atom, const std::vector<container_completion>& done) {
          feed(self, core::completed{done});
        },
        [=](cluster_atom, const resource& headroom, int32_t nodes) {
          feed(self, core::cluster_seen{headroom, nodes});
        },
        [=](launched_atom, const task_id&, int32_t, const container& c) {
          feed(self, core::launched{c.id});
        },
        [=](running_atom, const container& c) {
          feed(self, core::container_running{c.id});
        },
        [=](launch_failed_atom, const task_id&, int32_t, const container& c,
            const std::string& why) {
          feed(self, core::launch_failed{c.id, why});
        },
        [=](registered_atom, const executor_hello& hello, const executor_actor& exec) {
          self->state.executors[hello.container_id] = exec;
          if (self->state.launcher && !hello.resumed)
            self->send(self->state.launcher, registered_atom_v, hello.container_id);
          feed(self, core::registered{hello});
        },
        [=](barrier_atom, int32_t attempt) {
          feed(self, core::barrier_released{attempt});
        },
        [=](heartbeat_atom, const task_id& task, int32_t attempt,
            const task_sample& sample) { on_heartbeat(self, task, attempt, sample); },
        [=](exit_atom, const task_exit& x) {
          feed(self, core::exited{x});
          return true;
        },
        [=](status_atom) { return self->state.core->status(); },
        [=](wait_atom) { return on_wait(self); },
        [=](bye_atom) {
          if (auto who = self->current_sender())
            self->state.owing.erase(who->address());
          check_lingering(self);
        },
        [=](linger_atom) -> caf::result<bool> {
          auto rp = self->make_response_promise<bool>();
          self->state.lingering.push_back(rp);
          check_lingering(self);
          return rp;
        },
        [=](kill_atom, const std::string& reason) { feed(self, core::kill_job{reason}); },
        [=](timer_atom, uint64_t id) { feed(self, core::timer_fired{id}); },
    };
  };
  return sys.spawn(impl, std::move(cfg));
}

} // namespace tony
