#pragma once

#include <caf/actor_system_config.hpp>

namespace tony {

/// Registers every message type (messages/) and the actor handle types that
/// travel in messages (executor_actor). Every tony process calls this once
/// on its config; typed remote handles require both sides to agree.
void add_all_types(caf::actor_system_config& cfg);

} // namespace tony
