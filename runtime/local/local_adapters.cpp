#include "runtime/local/local_adapters.hpp"

#include <caf/all.hpp>

#include "messages/type_ids.hpp"

namespace tony::local {

namespace {

using stopper_actor = caf::typed_actor<caf::replies_to<stop_atom, container>::with<bool>>;

// One blocking stop on a thread of its own: stopping waits out a grace period.
stopper_actor::behavior_type stopper(stopper_actor::pointer self,
                                     std::shared_ptr<local_cluster> cluster) {
  return {
      [=](stop_atom, const container& c) {
        cluster->stop(c.id);
        self->quit();
        return true;
      },
  };
}

rm_client_actor::behavior_type rm_impl(rm_client_actor::pointer,
                                       std::shared_ptr<local_cluster> cluster) {
  return {
      [=](register_atom, const am_registration& am) { return cluster->register_am(am); },
      [=](allocate_atom, const allocate_request& req) { return cluster->allocate(req); },
      [=](finish_atom, const final_report&) { return true; },
  };
}

nm_client_actor::behavior_type nm_impl(nm_client_actor::pointer self,
                                       std::shared_ptr<local_cluster> cluster) {
  return {
      [=](start_atom, const launch_spec& spec) -> caf::result<std::string> {
        auto id = cluster->start(spec);
        if (!id)
          return to_caf(id.error());
        return std::move(*id);
      },
      [=](stop_atom, const container& c) {
        auto worker = self->spawn<caf::detached>(stopper, cluster);
        return self->delegate(worker, stop_atom_v, c);
      },
      // A local container has nothing to localize: it runs once started.
      [=](status_atom, const std::vector<container>& cs) {
        return std::vector<std::string>(cs.size(), "running");
      },
  };
}

} // namespace

rm_client_actor spawn_local_rm(caf::actor_system& sys,
                               std::shared_ptr<local_cluster> cluster) {
  return sys.spawn(rm_impl, std::move(cluster));
}

nm_client_actor spawn_local_nm(caf::actor_system& sys,
                               std::shared_ptr<local_cluster> cluster) {
  return sys.spawn(nm_impl, std::move(cluster));
}

} // namespace tony::local
