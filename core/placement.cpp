#include "core/placement.hpp"

#include <algorithm>

#include "base/text.hpp"

namespace tony::core {

std::string placement_line(const task_type_spec& type, size_t nodes) {
  auto k = static_cast<int64_t>(nodes);
  if (k == 0 && !type.pack && type.max_per_node == 0)
    return {}; // the local backend, or a cluster too large to name its nodes
  std::string how;
  if (!type.node_label.empty())
    how = "anywhere with node label " + type.node_label +
          " (placement applies to unlabelled asks only)";
  else if (k == 0)
    how = std::string{"anywhere: the ResourceManager listed no nodes"} +
          (type.max_per_node > 0 ? ", so max_per_node is not enforced" : "");
  else if (type.pack)
    how = "packed: each of " + base::plural(k, "node") + " asked for all " +
          std::to_string(type.instances);
  else
    how = "spread: each of " + base::plural(k, "node") + " asked for its share (" +
          std::to_string((type.instances + k - 1) / k) +
          "), node-local only at first, then anywhere";
  if (type.max_per_node > 0 && k > 0 && type.node_label.empty())
    how +=
        "; at most " + std::to_string(type.max_per_node) + " per node, node-local only";
  return "placement of " + type.name + ": " + how;
}

std::string placement_refusal(const job_spec& job, size_t nodes) {
  auto k = static_cast<int64_t>(nodes);
  for (auto& type : job.tasks) {
    if (type.max_per_node <= 0 || k == 0 || !type.node_label.empty() ||
        type.instances <= k * type.max_per_node)
      continue;
    auto needed = (type.instances + type.max_per_node - 1) / type.max_per_node;
    return "tasks." + type.name + " has " + std::to_string(type.instances) +
           " tasks, at most " + std::to_string(type.max_per_node) +
           " per node (max_per_node), which needs " + base::plural(needed, "node") +
           ", but the ResourceManager listed " + std::to_string(k) +
           " running at submission; lower instances or raise max_per_node";
  }
  return {};
}

std::vector<std::string> usable_nodes(const std::vector<std::string>& nodes,
                                      const std::vector<std::string>& avoided) {
  std::vector<std::string> result;
  for (auto& node : nodes)
    if (std::find(avoided.begin(), avoided.end(), node) == avoided.end())
      result.push_back(node);
  return result;
}

} // namespace tony::core
