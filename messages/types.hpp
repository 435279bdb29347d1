#pragma once

// The plain data that crosses actor boundaries in tony. Every struct has a
// CAF 0.17 inspect() overload and a type ID in messages/type_ids.hpp; nothing
// here depends on actors or runtime code, so both sides of every protocol
// (AM and executor, actors and adapters) agree on one definition.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/states.hpp"

namespace tony {

// -- identity -----------------------------------------------------------------

/// One task of the job: its type ("worker") and index within the type.
struct task_id {
  std::string type;
  int32_t index = 0;
};

inline bool operator==(const task_id& x, const task_id& y) {
  return x.index == y.index && x.type == y.type;
}
inline bool operator!=(const task_id& x, const task_id& y) {
  return !(x == y);
}
inline bool operator<(const task_id& x, const task_id& y) {
  return x.type != y.type ? x.type < y.type : x.index < y.index;
}

/// "worker:1".
std::string to_string(const task_id& x);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_id& x) {
  return f(caf::meta::type_name("task_id"), x.type, x.index);
}

// -- resources and containers -------------------------------------------------

/// A container's capability. gpus map to YARN's `yarn.io/gpu` resource.
struct resource {
  int64_t memory_mb = 0;
  int32_t vcores = 0;
  int32_t gpus = 0;
};

inline bool operator==(const resource& x, const resource& y) {
  return x.memory_mb == y.memory_mb && x.vcores == y.vcores && x.gpus == y.gpus;
}

/// True if `x` fits into `limit` in every dimension.
inline bool fits(const resource& x, const resource& limit) {
  return x.memory_mb <= limit.memory_mb && x.vcores <= limit.vcores &&
         x.gpus <= limit.gpus;
}

std::string to_string(const resource& x);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, resource& x) {
  return f(caf::meta::type_name("resource"), x.memory_mb, x.vcores, x.gpus);
}

/// A request for `count` containers of one task type. Each task type has its
/// own priority, so grants map back to task types by priority. `nodes` and
/// `racks` name where the containers may go besides anywhere (YARN asks them
/// node-local; a labelled ask names none). `pack`: each node is asked for
/// the whole count instead of its share; `max_per_node` > 0: no node gets
/// more than that many, and the ask never relaxes to any node.
struct container_ask {
  int32_t priority = 0;
  std::string task_type;
  resource capability;
  std::string node_label;
  int32_t count = 0;
  std::vector<std::string> nodes = {};
  std::vector<std::string> racks = {};
  bool pack = false;
  int32_t max_per_node = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, container_ask& x) {
  return f(caf::meta::type_name("container_ask"), x.priority, x.task_type, x.capability,
           x.node_label, x.count, x.nodes, x.racks, x.pack, x.max_per_node);
}

/// A container granted by the resource manager.
struct container {
  std::string id;
  std::string host;         // NodeManager host
  int32_t port = 0;         // NodeManager RPC port (0 on the local backend)
  std::string http_address; // NodeManager web address, for log links
  resource capability;
  int32_t priority = 0;
  std::string token; // serialized container token (opaque; YARN only)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, container& x) {
  return f(caf::meta::type_name("container"), x.id, x.host, x.port, x.http_address,
           x.capability, x.priority, x.token);
}

/// A container that ended, as the resource manager reports it. exit_status
/// carries YARN's codes (-100 lost node, -102 preempted, -104 memory, ...).
struct container_completion {
  std::string container_id;
  int32_t exit_status = 0;
  std::string diagnostics;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, container_completion& x) {
  return f(caf::meta::type_name("container_completion"), x.container_id, x.exit_status,
           x.diagnostics);
}

// -- resource manager protocol ------------------------------------------------

/// What the AM tells the resource manager about itself.
struct am_registration {
  std::string host;
  int32_t rpc_port = 0;
  std::string tracking_url;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, am_registration& x) {
  return f(caf::meta::type_name("am_registration"), x.host, x.rpc_port, x.tracking_url);
}

/// What the resource manager answers to the registration.
struct rm_registration {
  resource max_capability;   // largest single container
  resource cluster_capacity; // total, or all zero when unknown
  std::string queue;
  /// The containers of earlier AM attempts that still run (an application
  /// that keeps its containers across attempts): a later AM adopts them.
  std::vector<container> previous_containers = {};
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rm_registration& x) {
  return f(caf::meta::type_name("rm_registration"), x.max_capability, x.cluster_capacity,
           x.queue, x.previous_containers);
}

/// One allocate call. `asks` carry absolute outstanding counts per priority
/// (YARN semantics: an ask replaces the previous count for its key).
struct allocate_request {
  int32_t response_id = 0;
  float progress = 0;
  std::vector<container_ask> asks;
  std::vector<std::string> releases;
  /// Node hosts the scheduler must not place this application's containers
  /// on from now on (YARN's blacklist additions).
  std::vector<std::string> blacklist_additions;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, allocate_request& x) {
  return f(caf::meta::type_name("allocate_request"), x.response_id, x.progress, x.asks,
           x.releases, x.blacklist_additions);
}

struct allocate_response {
  int32_t response_id = 0;
  std::vector<container> allocated;
  std::vector<container_completion> completed;
  int32_t num_cluster_nodes = 0;
  /// What the AM's queue can still give it (AllocateResponse.limit): when
  /// it is less than a pending container, that is why the gang waits.
  resource headroom = {};
  /// The RM ordered the AM to resync or shut down (AMCommand).
  bool shutdown = false;
  /// The RM had lost the AM's registration (an RM restart or failover) and
  /// the AM registered again: nothing else is in this response; the next
  /// call starts over at response id 0 with every outstanding ask.
  bool resync = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, allocate_response& x) {
  return f(caf::meta::type_name("allocate_response"), x.response_id, x.allocated,
           x.completed, x.num_cluster_nodes, x.headroom, x.shutdown, x.resync);
}

/// The job's end as reported to the resource manager.
struct final_report {
  std::string final_status; // SUCCEEDED | FAILED | KILLED
  std::string diagnostics;
  std::string tracking_url;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, final_report& x) {
  return f(caf::meta::type_name("final_report"), x.final_status, x.diagnostics,
           x.tracking_url);
}

// -- node manager protocol ----------------------------------------------------

/// A file or archive the node manager makes available in the container's
/// work dir under `name`.
struct local_resource {
  std::string name;
  std::string url; // scheme://host:port/path
  int64_t size = 0;
  int64_t timestamp = 0; // source mtime in ms
  bool archive = false;
  std::string visibility = "APPLICATION";
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, local_resource& x) {
  return f(caf::meta::type_name("local_resource"), x.name, x.url, x.size, x.timestamp,
           x.archive, x.visibility);
}

/// Everything needed to start one container.
struct launch_spec {
  container target;
  std::map<std::string, std::string> env;
  std::vector<std::string> command;
  std::vector<local_resource> resources;
  std::string tokens; // credentials (HDTS) for the container, may be empty
  /// YARN: the application's ACLs ("VIEW_APP", "MODIFY_APP" -> Hadoop ACL).
  std::map<std::string, std::string> acls;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, launch_spec& x) {
  return f(caf::meta::type_name("launch_spec"), x.target, x.env, x.command, x.resources,
           x.tokens, x.acls);
}

// -- executor protocol --------------------------------------------------------

/// An executor's registration: who it is, where its task listens, and the
/// job secret it received through its container environment.
struct executor_hello {
  task_id task;
  int32_t attempt = 0;
  std::string container_id;
  std::string host;
  int32_t port = 0;
  std::string secret;
  int32_t pid = 0;
  /// The port the executor reserved for the TensorBoard its task starts
  /// (`[tensorboard] on = "chief"`: TB_PORT); 0 when it reserved none.
  int32_t tensorboard_port = 0;
  /// The executor registered with an earlier ApplicationMaster, which died;
  /// it registers again with the next AM attempt, its task still running
  /// (or ended, with the exit not yet reported): doc/operations.md "AM
  /// restart".
  bool resumed = false;
  /// The executor can take its cluster specs from the AM's spec channel
  /// (runtime/gate/spec_channel.hpp) instead of over BASP.
  bool reads_spec_channel = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, executor_hello& x) {
  return f(caf::meta::type_name("executor_hello"), x.task, x.attempt, x.container_id,
           x.host, x.port, x.secret, x.pid, x.tensorboard_port, x.resumed,
           x.reads_spec_channel);
}

/// The job's Hadoop delegation tokens as the AM hands them to executors
/// after it got new ones (a keytab's owner, doc/operations.md "Secure
/// clusters"): Hadoop credentials sealed with the job secret
/// (runtime/gate/token_seal.hpp), since BASP travels in the clear.
/// Generation 0: none since the containers started.
struct job_tokens {
  int32_t generation = 0;
  std::string sealed;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_tokens& x) {
  return f(caf::meta::type_name("job_tokens"), x.generation, x.sealed);
}

/// The registry's answer to an accepted registration, with the newest
/// tokens when the AM got any after the executor's container was made.
/// spec_channel: the executor's cluster specs come only through the AM's
/// spec channel (a second connection to the registry's host and port,
/// through the gate, opened after this ack); false: they come over BASP.
struct registration_ack {
  std::string app_id;
  int32_t heartbeat_interval_ms = 1000;
  job_tokens tokens;
  bool spec_channel = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, registration_ack& x) {
  return f(caf::meta::type_name("registration_ack"), x.app_id, x.heartbeat_interval_ms,
           x.tokens, x.spec_channel);
}

/// Task type -> "host:port" per index, in index order.
using cluster_map = std::map<std::string, std::vector<std::string>>;

/// Sent to every executor once the barrier is reached. The map travels
/// encoded (encode_cluster): the registry builds one message for all
/// executors, each host name appears once, and the whole spec serializes as
/// one string copy per executor.
struct cluster_spec {
  int32_t attempt = 0;
  std::string encoded;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_spec& x) {
  return f(caf::meta::type_name("cluster_spec"), x.attempt, x.encoded);
}

/// The compact text form of a cluster map:
///
///   <host 0> <host 1> ...\n
///   <type> <host index>:<port> <host index>:<port> ...\n    (one line per type)
///
/// Addresses are split at their last ':'; an empty slot is "-".
std::string encode_cluster(const cluster_map& x);

/// The map encode_cluster encoded; nothing if `text` is not such an encoding.
std::optional<cluster_map> decode_cluster(const std::string& text);

/// A cluster spec as one frame of the spec channel carries it: the attempt
/// in decimal, '\n', then `encoded` as it is.
std::string to_channel_frame(const cluster_spec& x);

/// The spec of a spec channel frame; nothing if `frame` is not one (the map
/// itself is checked when decode_cluster reads it).
std::optional<cluster_spec> from_channel_frame(const std::string& frame);

/// How a task's command ended. exit_code is the command's exit status, or
/// 128 + signal when it was killed by `signal` (non-zero). container_id
/// tells a restarted task's runs apart.
struct task_exit {
  task_id task;
  int32_t attempt = 0;
  int32_t exit_code = 0;
  int32_t signal = 0;
  std::string stderr_tail;
  std::string container_id = {};
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_exit& x) {
  return f(caf::meta::type_name("task_exit"), x.task, x.attempt, x.exit_code, x.signal,
           x.stderr_tail, x.container_id);
}

/// One GPU as a task's sample sees it (NVML): the device's utilisation and
/// the memory the task's processes hold on it.
struct gpu_sample {
  int32_t index = 0;       // NVML's device index on the node
  float util_pct = 0;      // the device's busy time over NVML's last period
  int64_t used_bytes = 0;  // held by the task's processes (the device's use
                           // when the driver cannot say per process)
  int64_t total_bytes = 0; // the device's memory
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gpu_sample& x) {
  return f(caf::meta::type_name("gpu_sample"), x.index, x.util_pct, x.used_bytes,
           x.total_bytes);
}

/// What an executor measured of its task's process tree, sent with every
/// heartbeat while the command runs (time_ms 0: no sample, e.g. before the
/// command started). rss_bytes is the tree's resident memory as YARN's
/// physical-memory check counts it; cpu_cores the CPU time the tree used
/// per wall-clock time since the previous sample (1.0: one core busy).
struct task_sample {
  int64_t time_ms = 0;
  int64_t rss_bytes = 0;
  float cpu_cores = 0;
  int32_t processes = 0;
  std::vector<gpu_sample> gpus = {};
  /// The task's own progress, 0..1, from its TONY_PROGRESS_FILE
  /// (doc/task-environment.md); -1 while it wrote none. Also sent in a
  /// heartbeat whose usage is empty (time_ms 0).
  float progress = -1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_sample& x) {
  return f(caf::meta::type_name("task_sample"), x.time_ms, x.rss_bytes, x.cpu_cores,
           x.processes, x.gpus, x.progress);
}

// -- job status (clients, tracking page) --------------------------------------

// A field added to task_status or job_status goes into their JSON
// (runtime/status_json.cpp) and into the event log's comparison
// (runtime/history/event_log.cpp, task_fields and job_fields) too.
struct task_status {
  task_id task;
  int32_t attempt = 0;
  task_state state = task_state::requested; // see doc/lifecycle.md
  std::string host;
  int32_t port = 0;
  std::string container_id;
  int32_t exit_code = 0;
  bool tracked = true;
  std::string diagnostics;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::string log_dir;  // where stdout/stderr of the task live
  int32_t restarts = 0; // times the task was restarted in this attempt
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_status& x) {
  return f(caf::meta::type_name("task_status"), x.task, x.attempt, x.state, x.host,
           x.port, x.container_id, x.exit_code, x.tracked, x.diagnostics, x.started_ms,
           x.finished_ms, x.log_dir, x.restarts);
}

struct job_status {
  std::string app_id;
  std::string name;
  job_state state = job_state::fresh;
  std::string diagnostics;
  int32_t attempt = 0;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::string tracking_url;
  std::vector<task_status> tasks;
  /// The job's TensorBoard, the same for the sidecar and the chief
  /// (doc/tracking.md): the task that serves it ("tensorboard:0",
  /// "chief:0"; empty when the job has none), its address while that task
  /// runs ("host:port", else empty), and the log directory it shows (empty
  /// when the job did not say).
  std::string tensorboard_task = {};
  std::string tensorboard_address = {};
  std::string tensorboard_log_dir = {};
  /// How this ApplicationMaster took the job over from an earlier AM
  /// attempt that died ("adopted 3 running tasks ...", "started over ...");
  /// empty for the first AM.
  std::string recovery = {};
};

/// True once the job reached SUCCEEDED, FAILED or KILLED.
inline bool is_final(const job_status& x) {
  return is_final(x.state);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_status& x) {
  return f(caf::meta::type_name("job_status"), x.app_id, x.name, x.state, x.diagnostics,
           x.attempt, x.started_ms, x.finished_ms, x.tracking_url, x.tasks,
           x.tensorboard_task, x.tensorboard_address, x.tensorboard_log_dir, x.recovery);
}

} // namespace tony
