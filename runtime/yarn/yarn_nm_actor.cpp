#include "runtime/yarn/yarn_nm_actor.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/yarn/yarn_rm_actor.hpp"

namespace tony::yarn {

namespace {

// What the launcher needs of a container's state: Hadoop 3's sub-state is
// SCHEDULED while the NodeManager localizes the container's resources (or
// queues it), RUNNING once its launch script runs.
std::string phase_of(const container_status& s) {
  if (s.state == "COMPLETE" || s.sub_state == "COMPLETING" || s.sub_state == "DONE")
    return "done";
  if (s.sub_state == "RUNNING" || s.sub_state == "PAUSED")
    return "running";
  if (s.sub_state == "SCHEDULED")
    return "localizing";
  return "unknown";
}

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
      [=](status_atom,
          const std::vector<container>& cs) -> caf::result<std::vector<std::string>> {
        self->quit();
        auto res = client->get_container_statuses(cs, hadoop::deadline_after(timeout));
        if (!res)
          return to_caf_error(res.error());
        std::vector<std::string> words;
        for (auto& c : cs) {
          auto i = std::find_if(res->begin(), res->end(),
                                [&](auto& s) { return s.container_id == c.id; });
          words.push_back(i == res->end() ? "unknown" : phase_of(*i));
        }
        return words;
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
        [=](status_atom, const std::vector<container>& cs) {
          auto w = self->spawn<caf::detached>(worker, client, timeout);
          return self->delegate(w, status_atom_v, cs);
        },
    };
  };
  return sys.spawn(impl, std::move(client), call_timeout);
}

} // namespace tony::yarn
