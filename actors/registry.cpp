#include "actors/registry.hpp"

#include <map>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/lifecycle_monitor.hpp"
#include "messages/error.hpp"
#include "messages/type_ids.hpp"

namespace tony {

namespace {

// Compares secrets in time independent of where they differ.
bool same_secret(const std::string& x, const std::string& y) {
  if (x.size() != y.size())
    return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < x.size(); ++i)
    diff |= static_cast<unsigned char>(x[i] ^ y[i]);
  return diff == 0;
}

struct registry_state {
  registry_config cfg;
  lifecycle_monitor_actor monitor;
  int32_t attempt = -1;
  std::set<task_id> expected;
  std::map<task_id, std::pair<executor_hello, executor_actor>> registered;
  bool barrier_done = false;

  static inline const char* name = "registry";
};

using registry_pointer = registry_actor::stateful_pointer<registry_state>;

caf::error reject(registry_pointer self, errc code, std::string text) {
  spdlog::warn("registry: rejected registration: {}", text);
  (void)self;
  return make_error(code, std::move(text));
}

void release_barrier(registry_pointer self) {
  auto& st = self->state;
  std::vector<executor_hello> hellos;
  hellos.reserve(st.registered.size());
  for (auto& [task, entry] : st.registered)
    hellos.push_back(entry.first);
  st.barrier_done = true;
  spdlog::info(
      "registry: all {} tasks registered for attempt {}, sending the cluster spec",
      st.registered.size(), st.attempt);
  // The monitor first: the job is RUNNING before thousands of specs queue up.
  self->send(st.monitor, barrier_atom_v, st.attempt);
  // One message for everyone: CAF messages are copy-on-write, so every
  // executor's mailbox element shares this one encoded spec.
  auto msg = caf::make_message(
      spec_atom_v, cluster_spec{st.attempt, encode_cluster(make_cluster_map(hellos))});
  for (auto& [task, entry] : st.registered)
    caf::actor_cast<caf::actor>(entry.second)
        ->eq_impl(caf::make_message_id(), self->ctrl(), self->context(), msg);
}

} // namespace

cluster_map make_cluster_map(const std::vector<executor_hello>& registered) {
  cluster_map result;
  for (auto& hello : registered) {
    auto& slots = result[hello.task.type];
    auto index = static_cast<size_t>(hello.task.index);
    if (slots.size() <= index)
      slots.resize(index + 1);
    slots[index] = hello.host + ":" + std::to_string(hello.port);
  }
  return result;
}

registry_actor spawn_registry(caf::actor_system& sys, registry_config cfg) {
  auto impl = [](registry_pointer self,
                 registry_config cfg) -> registry_actor::behavior_type {
    self->state.cfg = std::move(cfg);
    return {
        [=](register_atom, executor_hello& hello,
            executor_actor& exec) -> caf::result<registration_ack> {
          auto& st = self->state;
          auto who = to_string(hello.task) + " (container " + hello.container_id + ")";
          if (!same_secret(hello.secret, st.cfg.secret))
            return reject(self, errc::bad_secret, "wrong job secret from " + who);
          if (!st.monitor || hello.attempt != st.attempt)
            return reject(
                self, errc::stale_attempt,
                who + " registered for attempt " + std::to_string(hello.attempt) +
                    " but the current attempt is " + std::to_string(st.attempt));
          if (st.expected.count(hello.task) == 0)
            return reject(self, errc::unknown_task, "the job has no task " + who);
          if (st.registered.count(hello.task) > 0)
            return reject(self, errc::duplicate_registration,
                          who + " is already registered from container " +
                              st.registered[hello.task].first.container_id);
          if (!exec)
            return reject(self, errc::protocol, who + " sent no executor handle");
          hello.secret.clear();
          spdlog::info("registry: {} registered at {}:{}", to_string(hello.task),
                       hello.host, hello.port);
          st.registered.emplace(hello.task, std::make_pair(hello, exec));
          self->send(st.monitor, registered_atom_v, hello, exec);
          // Answer first, so the executor sees its acknowledgement before the spec.
          auto rp = self->make_response_promise<registration_ack>();
          rp.deliver(registration_ack{st.cfg.app_id, st.cfg.heartbeat_interval_ms});
          if (!st.barrier_done && st.registered.size() == st.expected.size())
            release_barrier(self);
          return rp;
        },
        [=](heartbeat_atom, const task_id& task, int32_t attempt) {
          if (self->state.monitor)
            self->send(self->state.monitor, heartbeat_atom_v, task, attempt);
        },
        [=](exit_atom, const task_exit& x) -> caf::result<bool> {
          if (!self->state.monitor)
            return make_error(errc::stale_attempt, "no job is running");
          return self->delegate(self->state.monitor, exit_atom_v, x);
        },
        [=](status_atom) -> caf::result<job_status> {
          if (!self->state.monitor)
            return make_error(errc::stopped, "the job has not started");
          return self->delegate(self->state.monitor, status_atom_v);
        },
        [=](wait_atom) -> caf::result<job_status> {
          if (!self->state.monitor)
            return make_error(errc::stopped, "the job has not started");
          return self->delegate(self->state.monitor, wait_atom_v);
        },
        [=](expect_atom, std::vector<task_id>& tasks, int32_t attempt) {
          auto& st = self->state;
          auto sender = caf::actor_cast<lifecycle_monitor_actor>(self->current_sender());
          if (st.monitor && sender != st.monitor) {
            spdlog::warn("registry: ignored expectations from a stranger");
            return;
          }
          st.monitor = sender;
          st.attempt = attempt;
          st.expected = std::set<task_id>(tasks.begin(), tasks.end());
          st.registered.clear();
          st.barrier_done = false;
        },
    };
  };
  return sys.spawn(impl, std::move(cfg));
}

} // namespace tony
