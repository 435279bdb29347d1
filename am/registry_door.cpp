#include "am/registry_door.hpp"

#include "base/files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace tony {

size_t am_reserved_files(int64_t tasks) {
  return 2 * static_cast<size_t>(std::max<int64_t>(tasks, 0)) + 128;
}

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
  // Half of the open files the AM has beyond its own: the executors'
  // established connections (two each), RPC to the RM and NMs, HDFS.
  plan.gate.max_pending =
      base::pending_cap(std::max(plan.gate.max_pending, room), base::open_files_limit(),
                        am_reserved_files(tasks), 50);
  plan.gate.backlog = static_cast<int>(std::min<size_t>(
      std::max<size_t>(static_cast<size_t>(plan.gate.backlog), room), 65535));
  return plan;
}

} // namespace tony
