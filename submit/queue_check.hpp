#pragma once

// A job larger than its queue may ever use (the queue's maximum capacity
// of today's cluster) is warned about at submission, not refused: clusters
// grow (an autoscaler adds nodes when YARN shows pending resources), and
// the gang waits, saying why (doc/operations.md "Waiting for the gang").

#include <optional>
#include <string>
#include <vector>

#include "config/job_spec.hpp"
#include "hadoop/yarn/records.hpp"

namespace tony {

/// The fraction (0..1) of the cluster queue `name` may use at most: the
/// product of the maximum capacities from the root down to it. `name` is
/// the leaf's name or its dotted path (root.a.b); nullopt when the tree
/// has no such queue.
std::optional<double> absolute_max_capacity(const yarn::queue_info& root,
                                            const std::string& name);

/// The warning for `job` (its tasks and its AM) on a cluster of `nodes`
/// (RUNNING ones count) whose queue tree is `root`, or empty when the job
/// fits. Memory only: YARN's default resource calculator counts no vcores.
std::string queue_warning(const job_spec& job,
                          const std::vector<yarn::node_report>& nodes,
                          const yarn::queue_info& root);

} // namespace tony
