#include "actors/container_launcher.hpp"

#include <chrono>
#include <memory>

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

  static inline const char* name = "container_launcher";
};

using launcher_pointer = container_launcher_actor::stateful_pointer<launcher_state>;

} // namespace

container_launcher_actor spawn_container_launcher(caf::actor_system& sys,
                                                  nm_client_actor nm,
                                                  launch_listener_actor listener,
                                                  launch_factory make_launch,
                                                  int64_t rpc_timeout_ms) {
  auto impl = [](launcher_pointer self, nm_client_actor nm,
                 launch_listener_actor listener, launch_factory make_launch,
                 int64_t rpc_timeout_ms) -> container_launcher_actor::behavior_type {
    auto& st = self->state;
    st.nm = std::move(nm);
    st.listener = std::move(listener);
    st.make_launch = std::move(make_launch);
    st.timeout = std::chrono::milliseconds(rpc_timeout_ms);
    return {
        [=](launch_atom, const task_id& task, int32_t attempt, int32_t restart,
            const container& c) {
          auto& st = self->state;
          auto spec = st.make_launch(task, attempt, restart, c);
          self->request(st.nm, st.timeout, start_atom_v, std::move(spec))
              .then(
                  [=](const std::string&) {
                    self->send(self->state.listener, launched_atom_v, task, attempt, c);
                  },
                  [=](caf::error& err) {
                    spdlog::error("launcher: cannot start {} in {} on {}: {}",
                                  to_string(task), c.id, c.host, describe(err));
                    self->send(self->state.listener, launch_failed_atom_v, task, attempt,
                               c, describe(err));
                  });
        },
        [=](stop_atom, const container& c) {
          self->request(self->state.nm, self->state.timeout, stop_atom_v, c)
              .then([](bool) {},
                    [=](caf::error& err) {
                      spdlog::warn("launcher: cannot stop {}: {}", c.id, describe(err));
                    });
        },
        [=](stop_all_atom, const std::vector<container>& cs) -> caf::result<bool> {
          if (cs.empty())
            return true;
          auto rp = self->make_response_promise<bool>();
          auto pending = std::make_shared<size_t>(cs.size());
          auto all_ok = std::make_shared<bool>(true);
          for (auto& c : cs) {
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
        },
    };
  };
  return sys.spawn(impl, std::move(nm), std::move(listener), std::move(make_launch),
                   rpc_timeout_ms);
}

} // namespace tony
