#include "submit/queue_check.hpp"

#include <cmath>

namespace tony {

namespace {

bool find_path(const yarn::queue_info& q, const std::string& leaf, double above,
               double& out) {
  auto here = above * q.max_capacity;
  if (q.name == leaf) {
    out = here;
    return true;
  }
  for (auto& child : q.children)
    if (find_path(child, leaf, here, out))
      return true;
  return false;
}

} // namespace

std::optional<double> absolute_max_capacity(const yarn::queue_info& root,
                                            const std::string& name) {
  auto dot = name.rfind('.');
  auto leaf = dot == std::string::npos ? name : name.substr(dot + 1);
  double out = 0;
  if (!find_path(root, leaf, 1.0, out))
    return std::nullopt;
  return out;
}

std::string queue_warning(const job_spec& job,
                          const std::vector<yarn::node_report>& nodes,
                          const yarn::queue_info& root) {
  int64_t cluster_mb = 0;
  for (auto& n : nodes)
    if (n.state == "RUNNING")
      cluster_mb += n.capability.memory_mb;
  auto fraction = absolute_max_capacity(root, job.queue);
  if (!fraction || cluster_mb <= 0)
    return {};
  int64_t needed_mb = job.am.capability.memory_mb;
  for (auto& t : job.tasks)
    for (int32_t i = 0; i < t.instances; ++i)
      needed_mb += t.capability_of(i).memory_mb;
  auto most_mb = static_cast<int64_t>(std::floor(*fraction * cluster_mb));
  if (needed_mb <= most_mb)
    return {};
  auto percent = static_cast<int>(std::lround(*fraction * 100));
  return "warning: the job needs " + std::to_string(needed_mb) +
         " MiB in all (its AM included), more than queue '" + job.queue +
         "' may ever use on today's cluster: " + std::to_string(percent) + "% of " +
         std::to_string(cluster_mb) + " MiB = " + std::to_string(most_mb) +
         " MiB (its maximum capacity). It is submitted and waits until the cluster "
         "grows (an autoscaler adds nodes when YARN shows pending resources); use a "
         "larger queue, or fewer or smaller tasks, for it to start now";
}

} // namespace tony
