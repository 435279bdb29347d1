#include "am/registry_door.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace tony {

registry_door_plan plan_registry_door(registry_config& registry, int64_t tasks,
                                      bool spec_channel) {
  registry_door_plan plan;
  if (spec_channel) {
    auto specs = std::make_shared<gate::spec_channel>();
    if (specs->start()) {
      registry.spec_channel = [specs](std::shared_ptr<const std::string> spec) {
        specs->publish(std::move(spec));
      };
      plan.specs = std::move(specs);
    } else {
      spdlog::warn("tony-am: no spec channel ({}); executors get the cluster spec over "
                   "their registry connection",
                   std::strerror(errno));
    }
  }
  plan.gate.specs = plan.specs;
  // Every executor may be between its connect and its proof at once (the
  // job's start, each executor's channel after its ack): a waiting slot
  // costs a few hundred bytes, so the cap follows the job's size.
  auto room = static_cast<size_t>(std::max<int64_t>(tasks, 0)) + 64;
  plan.gate.max_pending = std::max(plan.gate.max_pending, room);
  plan.gate.backlog = static_cast<int>(std::min<size_t>(
      std::max<size_t>(static_cast<size_t>(plan.gate.backlog), room), 65535));
  return plan;
}

} // namespace tony
