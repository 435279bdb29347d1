#pragma once

#include <caf/actor_system_config.hpp>

namespace tony {

/// Registers every tony message type and the error category with `cfg`.
/// Call once per actor system, before it is constructed.
void add_message_types(caf::actor_system_config& cfg);

} // namespace tony
