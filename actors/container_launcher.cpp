#include "actors/container_launcher.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"

namespace tony {

namespace {

struct launcher_state {
  nm_client_actor nm;
  launch_listener_actor listener;
  launch_factory make_launch;
  std::chrono::milliseconds timeout{10000};
  std::chrono::milliseconds poll_period{1000};
  /// Started containers not known to run yet, by id, and when they started.
  struct pending {
    container c;
    caf::actor_clock::time_point since;
  };
  std::map<std::string, pending> starting;
  /// Node managers ("host:port") with a status call in flight.
  std::set<std::string> asking;
  bool tick_armed = false;
  bool fallback_said = false;

  static inline const char* name = "container_launcher";
};

using launcher_pointer = container_launcher_actor::stateful_pointer<launcher_state>;

std::string node_of(const container& c) {
  return c.host + ":" + std::to_string(c.port);
}

void poll(launcher_pointer self, const std::string& node);

void arm_tick(launcher_pointer self) {
  auto& st = self->state;
  if (st.tick_armed || st.starting.empty())
    return;
  st.tick_armed = true;
  self->delayed_send(self, st.poll_period, tick_atom_v);
}

// The container runs (or the launcher cannot tell, and takes it for running).
void report_running(launcher_pointer self, const std::string& id) {
  auto& st = self->state;
  auto i = st.starting.find(id);
  if (i == st.starting.end())
    return;
  auto c = i->second.c;
  auto took = std::chrono::duration<double>(self->clock().now() - i->second.since);
  st.starting.erase(i);
  spdlog::info("launcher: {} on {} runs, {:.1f} s after its start", id, c.host,
               took.count());
  self->send(st.listener, running_atom_v, c);
}

void fall_back(launcher_pointer self, const std::string& node, const std::string& why) {
  auto& st = self->state;
  if (st.fallback_said)
    return;
  st.fallback_said = true;
  spdlog::warn("launcher: cannot tell when containers on {} run ({}): their "
               "registration deadlines count from their launch, localization "
               "included",
               node, why);
}

void on_phases(launcher_pointer self, const std::string& node,
               const std::vector<container>& asked,
               const std::vector<std::string>& words) {
  auto& st = self->state;
  for (size_t i = 0; i < asked.size(); ++i) {
    auto& id = asked[i].id;
    auto word = i < words.size() ? words[i] : std::string{"unknown"};
    if (word == "localizing")
      continue;
    if (word == "done") {
      st.starting.erase(id); // its completion comes from the RM
      continue;
    }
    if (word != "running")
      fall_back(self, node, "the NodeManager reports no container sub-state");
    report_running(self, id);
  }
}

void poll(launcher_pointer self, const std::string& node) {
  auto& st = self->state;
  if (st.asking.count(node) > 0)
    return;
  std::vector<container> asked;
  for (auto& [id, p] : st.starting)
    if (node_of(p.c) == node)
      asked.push_back(p.c);
  if (asked.empty())
    return;
  st.asking.insert(node);
  self->request(st.nm, st.timeout, status_atom_v, asked)
      .then(
          [=](const std::vector<std::string>& words) {
            self->state.asking.erase(node);
            on_phases(self, node, asked, words);
            arm_tick(self);
          },
          [=](caf::error& err) {
            self->state.asking.erase(node);
            fall_back(self, node, describe(err));
            for (auto& c : asked)
              report_running(self, c.id);
            arm_tick(self);
          });
}

void on_tick(launcher_pointer self) {
  auto& st = self->state;
  st.tick_armed = false;
  std::set<std::string> nodes;
  for (auto& [id, p] : st.starting)
    nodes.insert(node_of(p.c));
  for (auto& node : nodes)
    poll(self, node);
  arm_tick(self);
}

void on_launch(launcher_pointer self, const task_id& task, int32_t attempt,
               int32_t restart, const container& c) {
  auto& st = self->state;
  auto spec = st.make_launch(task, attempt, restart, c);
  self->request(st.nm, st.timeout, start_atom_v, std::move(spec))
      .then(
          [=](const std::string&) {
            self->send(self->state.listener, launched_atom_v, task, attempt, c);
            self->state.starting[c.id] = {c, self->clock().now()};
            poll(self, node_of(c)); // at once: a local container runs already
          },
          [=](caf::error& err) {
            spdlog::error("launcher: cannot start {} in {} on {}: {}", to_string(task),
                          c.id, c.host, describe(err));
            self->send(self->state.listener, launch_failed_atom_v, task, attempt, c,
                       describe(err));
          });
}

caf::result<bool> on_stop_all(launcher_pointer self, const std::vector<container>& cs) {
  if (cs.empty())
    return true;
  auto rp = self->make_response_promise<bool>();
  auto pending = std::make_shared<size_t>(cs.size());
  auto all_ok = std::make_shared<bool>(true);
  for (auto& c : cs) {
    self->state.starting.erase(c.id);
    self->request(self->state.nm, self->state.timeout, stop_atom_v, c)
        .then(
            [=](bool) mutable {
              if (--*pending == 0)
                rp.deliver(*all_ok);
            },
            [=](caf::error& err) mutable {
              spdlog::warn("launcher: cannot stop {}: {}", c.id, describe(err));
              *all_ok = false;
              if (--*pending == 0)
                rp.deliver(*all_ok);
            });
  }
  return rp;
}

} // namespace

container_launcher_actor
spawn_container_launcher(caf::actor_system& sys, nm_client_actor nm,
                         launch_listener_actor listener, launch_factory make_launch,
                         int64_t rpc_timeout_ms, int64_t poll_period_ms) {
  auto impl = [](launcher_pointer self, nm_client_actor nm,
                 launch_listener_actor listener, launch_factory make_launch,
                 int64_t rpc_timeout_ms,
                 int64_t poll_period_ms) -> container_launcher_actor::behavior_type {
    auto& st = self->state;
    st.nm = std::move(nm);
    st.listener = std::move(listener);
    st.make_launch = std::move(make_launch);
    st.timeout = std::chrono::milliseconds(rpc_timeout_ms);
    st.poll_period = std::chrono::milliseconds(poll_period_ms);
    return {
        [=](launch_atom, const task_id& task, int32_t attempt, int32_t restart,
            const container& c) { on_launch(self, task, attempt, restart, c); },
        [=](stop_atom, const container& c) {
          self->state.starting.erase(c.id);
          self->request(self->state.nm, self->state.timeout, stop_atom_v, c)
              .then([](bool) {},
                    [=](caf::error& err) {
                      spdlog::warn("launcher: cannot stop {}: {}", c.id, describe(err));
                    });
        },
        [=](registered_atom, const std::string& container_id) {
          self->state.starting.erase(container_id); // it runs: its executor is up
        },
        [=](tick_atom) { on_tick(self); },
        [=](stop_all_atom, const std::vector<container>& cs) {
          return on_stop_all(self, cs);
        },
    };
  };
  return sys.spawn(impl, std::move(nm), std::move(listener), std::move(make_launch),
                   rpc_timeout_ms, poll_period_ms);
}

} // namespace tony
