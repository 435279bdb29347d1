#include "actors/actor_types.hpp"

#include <caf/all.hpp>

#include "actors/executor.hpp"
#include "messages/registration.hpp"
#include "messages/type_ids.hpp"

namespace tony {

void add_all_types(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  cfg.add_message_type<executor_actor>("tony::executor_actor");
}

} // namespace tony
