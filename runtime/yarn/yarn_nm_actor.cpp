#include "runtime/yarn/yarn_nm_actor.hpp"

#include <caf/all.hpp>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/yarn/yarn_rm_actor.hpp"

namespace tony::yarn {

namespace {

// One blocking call on a thread of its own; answers and quits.
nm_client_actor::behavior_type worker(nm_client_actor::pointer self,
                                      std::shared_ptr<nm_client> client,
                                      std::chrono::milliseconds timeout) {
  return {
      [=](start_atom, const launch_spec& spec) -> caf::result<std::string> {
        self->quit();
        auto res = client->start_container(spec, hadoop::deadline_after(timeout));
        if (!res)
          return to_caf_error(res.error());
        return spec.target.id;
      },
      [=](stop_atom, const container& c) -> caf::result<bool> {
        self->quit();
        auto res = client->stop_container(c, hadoop::deadline_after(timeout));
        if (!res)
          return to_caf_error(res.error());
        return true;
      },
  };
}

} // namespace

nm_client_actor spawn_yarn_nm(caf::actor_system& sys, std::shared_ptr<nm_client> client,
                              std::chrono::milliseconds call_timeout) {
  auto impl = [](nm_client_actor::pointer self, std::shared_ptr<nm_client> client,
                 std::chrono::milliseconds timeout) -> nm_client_actor::behavior_type {
    return {
        [=](start_atom, const launch_spec& spec) {
          auto w = self->spawn<caf::detached>(worker, client, timeout);
          return self->delegate(w, start_atom_v, spec);
        },
        [=](stop_atom, const container& c) {
          auto w = self->spawn<caf::detached>(worker, client, timeout);
          return self->delegate(w, stop_atom_v, c);
        },
    };
  };
  return sys.spawn(impl, std::move(client), call_timeout);
}

} // namespace tony::yarn
