#pragma once

// How a job's containers are placed over the nodes, in words and in
// refusals (too large for the cluster, or for its listed nodes) (doc/architecture.md
// "Spread placement"). The asks themselves are built in hadoop/yarn/convert.cpp from
// container_ask's nodes, pack and max_per_node.

#include <cstddef>
#include <string>
#include <vector>

#include "config/job_spec.hpp"

namespace tony::core {

/// The AM log's line on how `type`'s containers are asked, `nodes` being
/// the number of nodes the ResourceManager listed at submission; empty
/// when there is nothing to say (no nodes listed, no placement asked).
/// `constraints`: the ResourceManager enables placement constraints, and a
/// capped type without a node label goes as a SchedulingRequest (YARN's
/// anti-affinity; hadoop/yarn/convert.hpp by_scheduling_request) instead of
/// node lists; the line names the path taken. `processor`: the handler is
/// the placement processor, so a spread type's strict ask goes as a
/// SchedulingRequest capped at its share (hadoop/yarn/amrm_client.hpp).
std::string placement_line(const task_type_spec& type, size_t nodes,
                           bool constraints = false, bool processor = false);

/// Why a type capped per node (max_per_node) cannot be placed on the
/// `nodes` listed nodes, or empty. A capped ask never goes beyond them, so
/// such a job would wait for ever.
std::string placement_refusal(const job_spec& job, size_t nodes);

/// Why the job can never be scheduled: a task larger than the largest
/// container, or the whole job larger than the cluster (`cluster` zero:
/// unknown), naming what to lower in the job's own front-end words; or
/// empty.
std::string capacity_refusal(const job_spec& job, const resource& largest,
                             const resource& cluster);

/// The nodes a job's asks name: `nodes` less the ones the job avoids (a
/// lost node gets no share; the RM's blacklist keeps it from relaxed asks).
std::vector<std::string> usable_nodes(const std::vector<std::string>& nodes,
                                      const std::vector<std::string>& avoided);

} // namespace tony::core
