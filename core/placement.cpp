#include "core/placement.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "config/setting_names.hpp"

namespace tony::core {

namespace {

// A capability as a refusal names it: with its GPUs whenever the request has
// any, so a cluster without GPUs says "0 GPUs" instead of nothing.
std::string capability_text(const resource& x, bool with_gpus) {
  auto text = to_string(x);
  if (with_gpus && x.gpus == 0)
    text += ", 0 GPUs";
  return text;
}

// What to do when GPUs are what does not fit.
std::string gpu_hint(const resource& asked, const resource& available) {
  if (asked.gpus <= available.gpus)
    return {};
  return " (GPUs: the local backend's pool is [cluster.local] gpus, by default the "
         "GPUs this machine has; on YARN the NodeManagers' yarn.io/gpu resource)";
}

} // namespace

std::string placement_line(const task_type_spec& type, size_t nodes, bool constraints,
                           bool processor) {
  auto k = static_cast<int64_t>(nodes);
  if (k == 0 && !type.pack && type.max_per_node == 0)
    return {}; // the local backend, or a cluster too large to name its nodes
  auto share = [&] { return std::to_string((type.instances + k - 1) / k); };
  std::string how;
  if (constraints && type.max_per_node > 0 && type.node_label.empty())
    how = std::to_string(type.instances) + " × " + to_string(type.capability) +
          ", anti-affinity by SchedulingRequest (at most " +
          std::to_string(type.max_per_node) +
          " per node, on any node: the ResourceManager enforces it)";
  else if (!type.node_label.empty())
    how = "anywhere with node label " + type.node_label +
          " (placement applies to unlabelled asks only)";
  else if (k == 0)
    how = std::string{"anywhere: the ResourceManager listed no nodes"} +
          (type.max_per_node > 0 ? ", so max_per_node is not enforced" : "");
  else if (type.pack)
    how = "packed: each of " + base::plural(k, "node") + " asked for all " +
          std::to_string(type.instances);
  else if (processor && type.max_per_node == 0)
    how = "spread: at most its share (" + share() + ") on each of " +
          base::plural(k, "node") +
          " by SchedulingRequest (the ResourceManager's placement processor places it "
          "without waiting for node heartbeats) at first, then anywhere";
  else
    how = "spread: each of " + base::plural(k, "node") + " asked for its share (" +
          share() + "), node-local only at first, then anywhere";
  if (type.max_per_node > 0 && k > 0 && type.node_label.empty() && !constraints)
    how += "; at most " + std::to_string(type.max_per_node) +
           " per node, node-local only, by node lists (the ResourceManager's "
           "placement constraints are disabled)";
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

std::string capacity_refusal(const job_spec& job, const resource& largest,
                             const resource& cluster) {
  resource total;
  for (auto& type : job.tasks)
    for (int32_t i = 0; i < type.instances; ++i) {
      // A task may have a capability of its own ([tasks.<type>.index.<i>]).
      auto& capability = type.capability_of(i);
      if (!fits(capability, largest)) {
        auto who = type.index_capability.count(i) != 0
                       ? "task " + type.name + ":" + std::to_string(i)
                       : "each " + type.name + " task";
        bool gpus = capability.gpus > 0;
        return who + " asks for " + capability_text(capability, gpus) +
               ", but the largest container this cluster grants is " +
               capability_text(largest, gpus) + "; " +
               what_to_lower(job, &type, capability, largest) +
               " or use a larger queue/cluster" + gpu_hint(capability, largest);
      }
      total.memory_mb += capability.memory_mb;
      total.vcores += capability.vcores;
      total.gpus += capability.gpus;
    }
  if (cluster.memory_mb > 0 && !fits(total, cluster)) {
    bool gpus = total.gpus > 0;
    return "the job needs " + capability_text(total, gpus) +
           " in all, but the cluster has only " + capability_text(cluster, gpus) +
           "; it can never be scheduled: " + what_to_lower(job, nullptr, total, cluster) +
           gpu_hint(total, cluster);
  }
  return {};
}

} // namespace tony::core
