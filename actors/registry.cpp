#include "actors/registry.hpp"

#include <map>
#include <optional>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/gate/token_seal.hpp"

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
  registry_supervisor_actor supervisor;
  int32_t attempt = -1;
  std::set<task_id> expected;
  std::map<task_id, std::pair<executor_hello, executor_actor>> registered;
  bool barrier_done = false;
  job_tokens tokens; // the newest, sealed
  /// The supervisor said how the attempt begins (expect or resume).
  bool decided = false;
  /// Adopted tasks whose executors have not registered again: the
  /// container each registers from.
  std::map<task_id, std::string> adopted;

  static inline const char* name = "registry";
};

using registry_pointer = registry_actor::stateful_pointer<registry_state>;

caf::error reject(std::string text, errc code) {
  spdlog::warn("registry: rejected registration: {}", text);
  return caf_error(code, std::move(text));
}

// The spec of every registration, encoded once per change.
cluster_spec current_spec(registry_pointer self) {
  auto& st = self->state;
  std::vector<executor_hello> hellos;
  hellos.reserve(st.registered.size());
  for (auto& [task, entry] : st.registered)
    hellos.push_back(entry.first);
  return cluster_spec{st.attempt, encode_cluster(make_cluster_map(hellos))};
}

// Hands the spec to the AM's spec channel, which writes it to every reader
// from this one buffer (runtime/gate/spec_channel.hpp); nothing without one.
void publish_spec(registry_pointer self, const cluster_spec& spec) {
  if (self->state.cfg.spec_channel)
    self->state.cfg.spec_channel(
        std::make_shared<const std::string>(to_channel_frame(spec)));
}

// Sends the spec over BASP to every registered executor that does not read
// the spec channel. One message for everyone: CAF messages are
// copy-on-write, so every executor's mailbox element shares this one
// encoded spec.
void send_spec(registry_pointer self, const cluster_spec& spec) {
  auto& st = self->state;
  auto msg = caf::make_message(spec_atom_v, spec);
  for (auto& [task, entry] : st.registered)
    if (!entry.first.reads_spec_channel)
      caf::actor_cast<caf::actor>(entry.second)
          ->eq_impl(caf::make_message_id(), self->ctrl(), self->context(), msg);
}

void release_barrier(registry_pointer self) {
  auto& st = self->state;
  st.barrier_done = true;
  spdlog::info(
      "registry: all {} tasks registered for attempt {}, sending the cluster spec",
      st.registered.size(), st.attempt);
  // The supervisor first: the job is RUNNING before thousands of specs queue up.
  self->send(st.supervisor, barrier_atom_v, st.attempt);
}

// An executor of the AM before registers again with this one.
caf::result<registration_ack> on_resumed(registry_pointer self, executor_hello& hello,
                                         executor_actor& exec, const std::string& who) {
  auto& st = self->state;
  if (!st.decided && st.cfg.takes_over) {
    spdlog::info("registry: {} registers again; not decided yet, asked to retry", who);
    return caf_error(errc::not_ready,
                     "the ApplicationMaster is still taking the job over; try again");
  }
  auto i = st.adopted.find(hello.task);
  if (hello.attempt != st.attempt || i == st.adopted.end() ||
      i->second != hello.container_id)
    return reject(who +
                      " registered again, but this ApplicationMaster did not adopt "
                      "its container (attempt " +
                      std::to_string(hello.attempt) + ")",
                  errc::stale_attempt);
  if (!exec)
    return reject(who + " sent no executor handle", errc::protocol);
  st.adopted.erase(i);
  hello.secret.clear();
  // This AM's spec channel, not the dead AM's: the executor opens it after
  // the ack. No spec is due now (the task has its own from the AM before);
  // a later one (a restarted task's address) comes through it.
  hello.reads_spec_channel = hello.reads_spec_channel && st.cfg.spec_channel != nullptr;
  spdlog::info("registry: {} registered again at {}:{}", to_string(hello.task),
               hello.host, hello.port);
  st.registered[hello.task] = std::make_pair(hello, exec);
  self->send(st.supervisor, registered_atom_v, hello, exec);
  return registration_ack{st.cfg.app_id, st.cfg.heartbeat_interval_ms, st.tokens,
                          hello.reads_spec_channel};
}

caf::result<registration_ack> on_register(registry_pointer self, executor_hello& hello,
                                          executor_actor& exec) {
  auto& st = self->state;
  auto who = to_string(hello.task) + " (container " + hello.container_id + ")";
  if (!same_secret(hello.secret, st.cfg.secret))
    return reject("wrong job secret from " + who, errc::bad_secret);
  if (hello.resumed)
    return on_resumed(self, hello, exec, who);
  if (hello.attempt != st.attempt)
    return reject(who + " registered for attempt " + std::to_string(hello.attempt) +
                      " but the current attempt is " + std::to_string(st.attempt),
                  errc::stale_attempt);
  if (st.expected.count(hello.task) == 0)
    return reject("the job has no task " + who, errc::unknown_task);
  if (st.registered.count(hello.task) > 0)
    return reject(who + " is already registered from container " +
                      st.registered[hello.task].first.container_id,
                  errc::duplicate_registration);
  if (!exec)
    return reject(who + " sent no executor handle", errc::protocol);
  hello.secret.clear();
  hello.reads_spec_channel = hello.reads_spec_channel && st.cfg.spec_channel != nullptr;
  spdlog::info("registry: {} registered at {}:{}", to_string(hello.task), hello.host,
               hello.port);
  st.registered.emplace(hello.task, std::make_pair(hello, exec));
  self->send(st.supervisor, registered_atom_v, hello, exec);
  // A spec is due at the barrier, and after it for a restarted task (everyone
  // learns its new address). The channel gets it before the ack (a reader
  // opens its channel after the ack and must find itself in the spec), BASP
  // after (an executor takes no spec before its ack).
  std::optional<cluster_spec> spec;
  if (st.barrier_done || st.registered.size() == st.expected.size()) {
    spec = current_spec(self);
    publish_spec(self, *spec);
  }
  auto rp = self->make_response_promise<registration_ack>();
  rp.deliver(registration_ack{st.cfg.app_id, st.cfg.heartbeat_interval_ms, st.tokens,
                              hello.reads_spec_channel});
  if (!spec)
    return rp;
  if (!st.barrier_done)
    release_barrier(self);
  send_spec(self, *spec);
  return rp;
}

// New tokens from the AM's token renewer: sealed once, sent to every
// registered executor; later registrations get them with their ack.
void hand_out_tokens(registry_pointer self, const std::string& credentials) {
  auto& st = self->state;
  auto generation = st.tokens.generation + 1;
  auto sealed = gate::seal_tokens(st.cfg.secret, st.cfg.app_id, generation, credentials);
  if (sealed.empty()) {
    spdlog::error("registry: cannot seal the tokens of generation {} (OpenSSL failed)",
                  generation);
    return;
  }
  st.tokens = job_tokens{generation, std::move(sealed)};
  spdlog::info("registry: tokens of generation {} to {} executors", generation,
               st.registered.size());
  auto msg = caf::make_message(tokens_atom_v, st.tokens);
  for (auto& [task, entry] : st.registered)
    caf::actor_cast<caf::actor>(entry.second)
        ->eq_impl(caf::make_message_id(), self->ctrl(), self->context(), msg);
}

// Remote peers (executors, clients) have other node ids; the AM's own
// threads send from this node.
bool from_this_process(registry_pointer self) {
  auto sender = self->current_sender();
  if (sender && sender->node() == self->node())
    return true;
  spdlog::warn("registry: ignored tokens from outside the AM");
  return false;
}

bool from_supervisor(registry_pointer self) {
  if (self->current_sender() == self->state.supervisor.address())
    return true;
  spdlog::warn("registry: ignored orders from a stranger");
  return false;
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

registry_actor spawn_registry(caf::actor_system& sys, registry_config cfg,
                              registry_supervisor_actor supervisor) {
  auto impl = [](registry_pointer self, registry_config cfg,
                 registry_supervisor_actor supervisor) -> registry_actor::behavior_type {
    self->state.cfg = std::move(cfg);
    self->state.supervisor = std::move(supervisor);
    return {
        [=](register_atom, executor_hello& hello, executor_actor& exec) {
          return on_register(self, hello, exec);
        },
        [=](heartbeat_atom, const task_id& task, int32_t attempt,
            const task_sample& sample) {
          self->send(self->state.supervisor, heartbeat_atom_v, task, attempt, sample);
        },
        [=](exit_atom, const task_exit& x) -> caf::result<bool> {
          return self->delegate(self->state.supervisor, exit_atom_v, x);
        },
        [=](status_atom) -> caf::result<job_status> {
          return self->delegate(self->state.supervisor, status_atom_v);
        },
        [=](wait_atom) -> caf::result<job_status> {
          return self->delegate(self->state.supervisor, wait_atom_v);
        },
        [=](bye_atom) -> caf::delegated<void> {
          // Delegated, as the wait was: the monitor matches a bye to its client.
          return self->delegate(self->state.supervisor, bye_atom_v);
        },
        [=](expect_atom, std::vector<task_id>& tasks, int32_t attempt) {
          if (!from_supervisor(self))
            return;
          auto& st = self->state;
          st.attempt = attempt;
          st.expected = std::set<task_id>(tasks.begin(), tasks.end());
          st.registered.clear();
          st.adopted.clear();
          st.barrier_done = false;
          st.decided = true;
        },
        [=](resume_atom, std::vector<task_id>& tasks,
            std::vector<executor_hello>& adopted, int32_t attempt) {
          if (!from_supervisor(self))
            return;
          auto& st = self->state;
          st.attempt = attempt;
          st.expected = std::set<task_id>(tasks.begin(), tasks.end());
          st.registered.clear();
          st.adopted.clear();
          for (auto& hello : adopted)
            st.adopted[hello.task] = hello.container_id;
          st.barrier_done = true; // the spec went out under the AM before
          st.decided = true;
        },
        [=](reopen_atom, const task_id& task, int32_t attempt) {
          if (!from_supervisor(self) || attempt != self->state.attempt)
            return;
          self->state.registered.erase(task);
        },
        [=](tokens_atom, const std::string& credentials) {
          if (from_this_process(self))
            hand_out_tokens(self, credentials);
        },
    };
  };
  return sys.spawn(impl, std::move(cfg), std::move(supervisor));
}

} // namespace tony
