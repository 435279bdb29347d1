#include "core/waiting.hpp"

#include <algorithm>

#include "base/text.hpp"

namespace tony::core {

void add_pending(std::vector<pending_containers>& pending, const std::string& type,
                 const resource& capability, const std::string& node_label) {
  auto same = [&](const pending_containers& p) {
    return p.type == type && p.capability == capability && p.node_label == node_label;
  };
  if (auto i = std::find_if(pending.begin(), pending.end(), same); i != pending.end())
    ++i->count;
  else
    pending.push_back(pending_containers{type, capability, node_label, 1});
}

namespace {

std::string what_is_pending(const std::vector<pending_containers>& pending) {
  std::vector<std::string> parts;
  for (auto& p : pending)
    parts.push_back(
        std::to_string(p.count) + " " + p.type + " of " + to_string(p.capability) +
        (p.node_label.empty() ? "" : " on nodes labelled '" + p.node_label + "'"));
  return base::join(parts, "; ");
}

std::string why_waiting(const std::vector<pending_containers>& pending,
                        const std::optional<cluster_view>& cluster) {
  if (!cluster)
    return "the resource manager has not answered the asks yet";
  if (cluster->nodes == 0)
    return "the cluster has no running NodeManager; the job starts when one joins";
  for (auto& p : pending)
    if (!fits(p.capability, cluster->headroom))
      return "the queue's headroom is " + to_string(cluster->headroom) +
             ", less than one " + p.type +
             " container; the job starts when the queue has room (other "
             "applications end, or nodes join the cluster's " +
             base::plural(cluster->nodes, "node") + ")";
  return "the queue has room (headroom " + to_string(cluster->headroom) + " over " +
         base::plural(cluster->nodes, "node") +
         ") but the scheduler has not placed them yet: no single node may have room for "
         "one, or the scheduler waits for locality";
}

} // namespace

std::string waiting_reason(const std::vector<pending_containers>& pending, size_t total,
                           const std::optional<cluster_view>& cluster) {
  int64_t count = 0;
  for (auto& p : pending)
    count += p.count;
  if (count == 0)
    return {};
  return "waiting for " + std::to_string(count) + " of " +
         base::plural(static_cast<int64_t>(total), "container") + " (" +
         what_is_pending(pending) + "): " + why_waiting(pending, cluster);
}

} // namespace tony::core
