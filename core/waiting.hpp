#pragma once

// Why a gang waits, in words: what is still pending and what the resource
// manager last said of the AM's queue (its headroom) and of the cluster
// (its node count). tony waits for a gang without a time limit by default,
// as TonY does (an autoscaling cluster grows when YARN shows pending asks);
// the job's diagnostics carry this sentence while it is ALLOCATING, so
// tony-submit, --status, the tracking page and the Python API say the same.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony::core {

/// Containers of one task type and capability that are not granted yet.
struct pending_containers {
  std::string type;
  resource capability;
  std::string node_label;
  int32_t count = 0;
};

/// The resource manager's last word on room: the queue's headroom and the
/// number of NodeManagers (AllocateResponse.limit, num_cluster_nodes).
struct cluster_view {
  resource headroom;
  int32_t nodes = 0;
};

/// Adds one container to `pending`, grouped with its type and capability.
void add_pending(std::vector<pending_containers>& pending, const std::string& type,
                 const resource& capability, const std::string& node_label);

/// "waiting for 3 of 4 containers (3 worker of 1024 MiB, 1 vcores): the
/// queue's headroom is ..., less than one worker container; ..." -- empty
/// when nothing is pending.
std::string waiting_reason(const std::vector<pending_containers>& pending, size_t total,
                           const std::optional<cluster_view>& cluster);

} // namespace tony::core
