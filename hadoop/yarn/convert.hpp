#pragma once

// Conversions between the protobuf records and tony's structs. Internal to
// runtime/yarn (and its tests): nothing outside sees the protobuf types.

#include <string>
#include <vector>

#include "hadoop/expected.hpp"
#include "hadoop/token.hpp"
#include "hadoop/yarn/ids.hpp"
#include "hadoop/yarn/proto/yarn.pb.h"
#include "hadoop/yarn/records.hpp"
#include "messages/types.hpp"

namespace tony::yarn::convert {

using hadoop::expected;

void to_proto(const application_id& x, proto::ApplicationIdProto* out);
application_id from_proto(const proto::ApplicationIdProto& x);

void to_proto(const application_attempt_id& x, proto::ApplicationAttemptIdProto* out);
application_attempt_id from_proto(const proto::ApplicationAttemptIdProto& x);

void to_proto(const container_id& x, proto::ContainerIdProto* out);
container_id from_proto(const proto::ContainerIdProto& x);

/// Memory and vcores, plus yarn.io/gpu in resource_value_map when gpus > 0.
void to_proto(const resource& x, proto::ResourceProto* out);
resource from_proto(const proto::ResourceProto& x);

void to_proto(const hadoop::token& x, hadoop::proto::TokenProto* out);
hadoop::token from_proto(const hadoop::proto::TokenProto& x);

/// Parses `scheme://host:port/path` (or `file:///path`) into a URLProto.
expected<void> to_proto(const std::string& url, proto::URLProto* out);

expected<void> to_proto(const local_resource& x, proto::LocalResourceProto* out);

expected<void> to_proto(const container_launch& x,
                        proto::ContainerLaunchContextProto* out);

/// One ask at priority `x.priority` for resource name "*".
void to_proto(const container_ask& x, proto::ResourceRequestProto* out);

/// Appends the ResourceRequests of one ask to `out`: the ANY ("*") request,
/// and a request per node (`x.nodes`) and per rack (`x.racks`) too. A node
/// is asked for its share of the count, rounded up (spread placement: the
/// first node to heartbeat no longer takes the gang); racks and "*" for the
/// whole count. Named nodes let the CapacityScheduler place several
/// containers per node heartbeat (node-local) instead of one off-switch
/// container per heartbeat. `strict`: relaxLocality=false on the racks and
/// "*", so only node-local grants count. `x.pack`: each node is asked for
/// the whole count. `x.max_per_node`: no node is asked for more, and the
/// ask is strict whatever `how` says (relaxed then means each node up to
/// the cap). Asks with a node label stay ANY-only (YARN ignores labels
/// below ANY).
enum class locality { relaxed, strict };
void add_asks(const container_ask& x, proto::AllocateRequestProto* out,
              locality how = locality::relaxed);

/// The same with the ask placed on `places` (their hosts, then their racks).
void add_asks(container_ask x, const std::vector<node_place>& places,
              proto::AllocateRequestProto* out);

/// Whether `x` is asked with a SchedulingRequest where the ResourceManager
/// enables placement constraints: a type capped per node
/// (`x.max_per_node`) without a node label. core::placement_line says so
/// by the same rule.
bool by_scheduling_request(const container_ask& x);

/// The SchedulingRequest of a capped ask (YARN's placement constraints,
/// yarn.resourcemanager.placement-constraints.handler scheduler or
/// placement-processor): `x.count` allocations of `x.capability`, tagged
/// with the type's name, at most `x.max_per_node` of that tag on a node
/// (anti-affinity with itself, NODE scope; cardinality max_per_node - 1, a
/// NOTIN when the cap is 1). Nodes and racks are not named: the scheduler
/// places it on any node that satisfies the constraint. A count of 0
/// cancels what is outstanding (YARN allows only numAllocations to change
/// between requests of one priority).
void to_proto(const container_ask& x, proto::SchedulingRequestProto* out);

/// A granted container; token is the serialized container TokenProto.
container container_from_proto(const proto::ContainerProto& x);

container_completion completion_from_proto(const proto::ContainerStatusProto& x);

container_status status_from_proto(const proto::ContainerStatusProto& x);

node_report from_proto(const proto::NodeReportProto& x);

application_report from_proto(const proto::ApplicationReportProto& x);

expected<void> to_proto(const submission_context& x,
                        proto::ApplicationSubmissionContextProto* out);

/// "ClassName: message" of a serialized exception (first line only).
std::string describe(const proto::SerializedExceptionProto& x);

/// "host:port" of a node id: the key of NMTokens.
std::string node_key(const proto::NodeIdProto& x);

} // namespace tony::yarn::convert
