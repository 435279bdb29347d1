#pragma once

// Plain C++ forms of the YARN records tony exchanges with the
// ResourceManager and NodeManagers. The protobuf forms stay inside
// runtime/yarn; tony's own message types (messages/types.hpp) are used
// where they already say the same thing.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hadoop/expected.hpp"
#include "hadoop/token.hpp"
#include "hadoop/yarn/ids.hpp"
#include "messages/types.hpp"

namespace tony::yarn {

/// YarnApplicationStateProto.
enum class application_state : int32_t {
  unknown = 0,
  new_app = 1,
  new_saving = 2,
  submitted = 3,
  accepted = 4,
  running = 5,
  finished = 6,
  failed = 7,
  killed = 8,
};

/// "NEW", "ACCEPTED", "RUNNING", "FINISHED", ...
const char* to_string(application_state x);

/// True for FINISHED, FAILED and KILLED.
bool is_terminal(application_state x);

/// FinalApplicationStatusProto.
enum class final_status : int32_t {
  undefined = 0,
  succeeded = 1,
  failed = 2,
  killed = 3,
  ended = 4,
};

/// "UNDEFINED", "SUCCEEDED", "FAILED", "KILLED", "ENDED".
const char* to_string(final_status x);

/// Parses the names above (case-insensitive).
hadoop::expected<final_status> parse_final_status(std::string_view text);

/// LogAggregationStatusProto: where the NodeManagers are with uploading an
/// application's logs (unknown: the RM did not say).
enum class log_aggregation_state : int32_t {
  unknown = 0,
  disabled = 1,
  not_started = 2,
  running = 3,
  succeeded = 4,
  failed = 5,
  timed_out = 6,
  running_with_failure = 7,
};

/// True when no NodeManager will upload anything more: DISABLED, SUCCEEDED,
/// FAILED, TIME_OUT.
bool is_final(log_aggregation_state x);

/// What getNewApplication returns.
struct new_application {
  application_id id;
  resource max_capability;
};

/// One node as getClusterNodes reports it.
struct node_report {
  std::string host;
  int32_t port = 0;
  std::string http_address;
  std::string rack;
  resource capability;
  resource used;
  int32_t num_containers = 0;
  std::string state; // "RUNNING", "UNHEALTHY", ... (NodeStateProto without NS_)
  std::string health_report;
  std::vector<std::string> labels;
};

/// A node named in asks so the scheduler can place containers node-local:
/// its host as the RM names it (NodeId host) and its rack.
struct node_place {
  std::string host;
  std::string rack;
};

/// What getApplicationReport returns.
struct application_report {
  application_id id;
  std::string user;
  std::string queue;
  std::string name;
  std::string host; // the AM's host, once registered
  int32_t rpc_port = 0;
  application_state state = application_state::unknown;
  final_status final = final_status::undefined;
  std::string tracking_url;
  std::string original_tracking_url;
  std::string diagnostics;
  int64_t start_time = 0;
  int64_t finish_time = 0;
  float progress = 0;
  std::string application_type;
  std::optional<application_attempt_id> current_attempt;
  /// Only for unmanaged AMs, once their attempt is launched.
  std::optional<hadoop::token> am_rm_token;
  bool unmanaged = false;
  /// How far the NodeManagers are with uploading the application's logs.
  log_aggregation_state log_aggregation = log_aggregation_state::unknown;
};

/// A ContainerLaunchContext. `commands` are shell command parts: the
/// NodeManager joins them with spaces into its launch script and replaces
/// <LOG_DIR> in them, so they may carry redirections.
struct container_launch {
  std::vector<local_resource> resources;
  std::map<std::string, std::string> env;
  std::vector<std::string> commands;
  /// Credentials in token-file format (hadoop/credentials.hpp); empty means
  /// none.
  std::string tokens;
  /// The application's ACLs, "VIEW_APP" and "MODIFY_APP" -> Hadoop ACL text
  /// (base/access_list.hpp). The RM takes them from the AM's launch, each
  /// NodeManager from the first container of the application it starts.
  std::map<std::string, std::string> acls;
};

/// An ApplicationSubmissionContext.
struct submission_context {
  application_id id;
  std::string name = "tony";
  std::string queue = "default";
  std::string application_type = "TONY";
  int32_t priority = 0;
  container_launch am_launch;
  resource am_resource{1024, 1, 0};
  /// The client runs the AM itself; the RM starts no AM container.
  bool unmanaged_am = false;
  /// 0 = the cluster's default (yarn.resourcemanager.am.max-attempts).
  int32_t max_app_attempts = 0;
  bool keep_containers_across_attempts = false;
  bool cancel_tokens_when_complete = true;
  std::vector<std::string> tags;
  std::string node_label;
};

/// A scheduler queue and its children, as getQueueInfo reports them:
/// capacities are fractions (0..1) of the parent queue's.
struct queue_info {
  std::string name;
  float capacity = 0;
  float max_capacity = 0;
  std::vector<queue_info> children;
};

struct cluster_metrics {
  int32_t num_node_managers = 0;
  int32_t num_active = 0;
  int32_t num_lost = 0;
  int32_t num_unhealthy = 0;
  int32_t num_decommissioned = 0;
  int32_t num_rebooted = 0;
};

/// A container's state as a NodeManager reports it.
struct container_status {
  std::string container_id;
  std::string state; // "NEW", "RUNNING", "COMPLETE"
  /// Hadoop 3's finer state: "SCHEDULED" (localizing or queued), "RUNNING"
  /// (its launch script runs), "PAUSED", "COMPLETING", "DONE"; empty when
  /// the NodeManager does not say (before Hadoop 3).
  std::string sub_state;
  int32_t exit_status = -1000; // -1000: not exited yet
  std::string diagnostics;
};

/// The ApplicationMaster's command in an allocate response.
enum class am_command : int32_t {
  none = 0,
  resync = 1,   // the RM lost the AM's registration: register again
  shutdown = 2, // the RM wants the AM gone
};

} // namespace tony::yarn
