#include "actors/am_actors.hpp"

#include <caf/all.hpp>

#include "messages/type_ids.hpp"

namespace tony {

am_actors spawn_am(caf::actor_system& sys, monitor_config monitor,
                   registry_config registry) {
  am_actors am;
  am.monitor = spawn_lifecycle_monitor(sys, std::move(monitor));
  am.registry = spawn_registry(sys, std::move(registry), am.monitor);
  return am;
}

void start_am(caf::actor_system& sys, am_actors& am, am_drivers drivers,
              const am_timing& timing) {
  am.heartbeater = spawn_rm_heartbeater(sys, std::move(drivers.rm), am.monitor,
                                        std::move(drivers.registration), timing);
  am.launcher =
      spawn_container_launcher(sys, std::move(drivers.nm), am.monitor,
                               std::move(drivers.make_launch), timing.rpc_timeout_ms);
  caf::anon_send(am.monitor, start_atom_v, am.registry, am.heartbeater, am.launcher);
}

void stop_am(const am_actors& am) {
  for (auto& hdl :
       {caf::actor_cast<caf::actor>(am.monitor), caf::actor_cast<caf::actor>(am.registry),
        caf::actor_cast<caf::actor>(am.heartbeater),
        caf::actor_cast<caf::actor>(am.launcher)})
    if (hdl)
      caf::anon_send_exit(hdl, caf::exit_reason::user_shutdown);
}

} // namespace tony
