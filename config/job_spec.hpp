#pragma once

// The resolved job: job.toml after defaults, overrides and validation. This is
// what tony-submit hands to the AM (as JSON, see config/job_json.hpp) and
// what every actor reads. Durations are milliseconds; 0 means "none".

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony {

/// A file or archive shipped to every task ([code] files / archives) or to
/// one task type ([tasks.<type>] files / archives). It appears in the task's
/// working directory as `name`; an archive is unpacked into a directory of
/// that name (a YARN local resource of type ARCHIVE).
struct shipped_file {
  std::string source; // absolute local path, or an hdfs:// or viewfs:// URI
  std::string name;   // link name in the working directory (no '/')
  bool archive = false;
};

inline bool operator==(const shipped_file& x, const shipped_file& y) {
  return x.source == y.source && x.name == y.name && x.archive == y.archive;
}

/// What happens to a task of a type when it fails (doc/lifecycle.md).
enum class restart_policy : int32_t {
  never = 0,      // the failure counts: it may be tolerated, else the job fails
  on_failure = 1, // a new container for the same task, up to max_restarts times
};

/// One [tasks.<name>] table.
struct task_type_spec {
  std::string name; // [a-z][a-z0-9_-]*
  int32_t instances = 1;
  resource capability{2048, 1, 0};
  std::string command;  // resolved: per-type override or [code] command
  bool tracked = true;  // default false for ps and tensorboard
  bool sidecar = false; // default true for tensorboard: failure ignored
  std::string node_label;
  /// placement = "pack": the scheduler fills nodes as it likes (each node
  /// is asked for the whole count). Default "spread": each node is asked
  /// for its share (doc/architecture.md "Spread placement").
  bool pack = false;
  int32_t max_per_node = 0; // at most this many of the type on one node; 0: no limit
  std::map<std::string, std::string> env;
  int32_t priority = 0;            // assigned by resolve order: one per type
  std::vector<shipped_file> files; // this type's own, besides the job's
  std::string docker_image;        // resolved: this type's, else [docker] image
  /// [tasks.<type>.index.<i>]: capabilities of single tasks that differ
  /// from `capability`, and the YARN priority each such task asks with
  /// (tasks with equal capabilities share one).
  std::map<int32_t, resource> index_capability;
  std::map<int32_t, int32_t> index_priority;

  /// The capability of task `index` of this type.
  const resource& capability_of(int32_t index) const {
    auto i = index_capability.find(index);
    return i == index_capability.end() ? capability : i->second;
  }

  /// The YARN priority task `index` of this type asks with.
  int32_t priority_of(int32_t index) const {
    auto i = index_priority.find(index);
    return i == index_priority.end() ? priority : i->second;
  }

  // Lifecycle policy of this type (doc/lifecycle.md).
  restart_policy restart = restart_policy::never;
  int32_t max_restarts = 0;        // restarts of one task, with restart = on_failure
  int64_t restart_backoff_ms = 0;  // before the first restart; doubles each time
  int32_t tolerated_failures = -1; // failed tasks of this type the job survives;
                                   // -1: the job's [policy] budget applies
  int32_t elastic_min = 0;         // elastic PyTorch: min and max nodes of the
  int32_t elastic_max = 0;         // rendezvous; 0: a fixed world
  int32_t spec_signal = 0;         // sent to a running task whose cluster spec
                                   // changed (0: none; the file is rewritten)

  bool elastic() const { return elastic_max > 0; }

  /// How long the command of a task of this type may run (from its start
  /// in each container) before it is killed and the task fails; 0: no limit.
  int64_t execution_timeout_ms = 0;
};

/// [tensorboard]: where the job's TensorBoard runs (doc/tracking.md).
struct tensorboard_spec {
  bool enabled = false;
  std::string log_dir;
  /// "sidecar": a task type `tensorboard` of its own (the default);
  /// "chief": the chief's executor reserves TB_PORT and the chief's command
  /// starts TensorBoard on it, TonY's way.
  std::string on = "sidecar";

  bool on_chief() const { return enabled && on == "chief"; }
};

/// [cluster.local]: the local backend's resource pool.
struct local_pool_spec {
  int64_t memory_mb = 0; // 0: this machine's physical memory
  int32_t vcores = 0;    // 0: 4 x this machine's cores (see doc/job-toml.md)
  int32_t gpus = -1;     // -1: the GPUs this machine has (NVML, /proc)
};

struct cluster_settings {
  std::string backend = "local"; // local | yarn
  std::string hadoop_conf;       // YARN config dir (yarn backend)
  std::string install_dir;       // where tony binaries live on the nodes, if any
  std::string staging_dir;       // override of the staging root
  std::string shared_cache;      // an operator's read-only cache root, if any
  std::string jobs_dir;          // local backend: root of job dirs (~/.tony/jobs)
  std::string history_dir; // yarn backend: where event logs are kept (doc/tracking.md)
  local_pool_spec local;
};

/// [security]: how tony-submit authenticates on a Kerberos cluster
/// (doc/job-toml.md). Read by tony-submit only; not sent to the AM in
/// job.json (the keytab and the CA travel as the AM's local resources).
struct security_spec {
  std::string principal; // e.g. alice@EXAMPLE.COM; empty: the ticket cache's
  std::string keytab;    // absolute path; empty: the ticket cache (kinit)
  /// Extra HDFS namenodes the job reads or writes ("hdfs://host:port"),
  /// for which delegation tokens are obtained.
  std::vector<std::string> file_systems;
  /// PEM file of the CAs the cluster's HTTPS endpoints are checked
  /// against (absolute); empty: TONY_CA_FILE, else the system's bundle.
  std::string ca_file;
  /// Who besides the owner and the cluster's admins may see the job (its
  /// page, API, logs, TensorBoard) and change it (kill it): Hadoop ACLs,
  /// "alice,bob ops" (base/access_list.hpp), set as the application's
  /// VIEW_APP and MODIFY_APP ACLs. Empty: nobody else.
  std::string view_acl;
  std::string modify_acl;
};

/// [am]: the ApplicationMaster's own container.
struct am_spec {
  resource capability{512, 1, 0};
  int32_t max_app_attempts = 1;
  /// With max_app_attempts >= 2: how long an executor whose AM died keeps
  /// its task running while it waits for the next AM attempt to adopt it
  /// (doc/operations.md "AM restart"); then it kills the task.
  int64_t reconnect_timeout_ms = 600000;
};

/// [policy]: lifecycle knobs (doc/lifecycle.md).
struct policy_spec {
  int32_t max_attempts = 1;
  int64_t allocation_timeout_ms = 0; // 0: wait for the gang as long as it takes
  int64_t registration_timeout_ms = 120000;
  int64_t heartbeat_interval_ms = 1000;
  int64_t heartbeat_timeout_ms = 10000;
  int64_t stop_grace_ms = 3000;   // SIGTERM -> SIGKILL for stopped tasks
  int32_t tolerated_failures = 0; // failed tasks the job survives (never the chief)
};

struct job_spec {
  std::string name;
  std::string framework = "tensorflow"; // tensorflow|pytorch|horovod|standalone
  std::string queue = "default";
  int64_t timeout_ms = 0;
  std::vector<std::string> tags;
  /// YARN node label expression of the application: the AM's, and the
  /// default of every task type without its own.
  std::string node_label;

  // [code]
  std::string src_dir; // absolute; empty: no directory is shipped
  std::string command; // default command of every task type
  /// An archive (.zip, .tar.gz, .tgz) unpacked as `venv`, or a .pex file
  /// linked as `venv.pex`: absolute local path or hdfs:// / viewfs:// URI.
  std::string python_venv;
  /// The interpreter: relative to the unpacked venv, or absolute on the
  /// nodes. Empty: found in the venv (bin/python3, */bin/python, ...).
  std::string python_binary_path;
  std::vector<shipped_file> files; // [code] files and archives

  /// [docker] image: the default image of every task type
  /// (doc/docker.md). A type's own is task_type_spec::docker_image.
  std::string docker_image;
  /// [docker] mounts: "host path:container path[:ro|rw]", besides the ones
  /// tony adds (HADOOP_CONF_DIR, JAVA_HOME, local [data] paths).
  std::vector<std::string> docker_mounts;
  /// [docker] network: the container's network ("host" by default: a task
  /// serves on its host's reserved port).
  std::string docker_network = "host";
  /// [docker] run_options: extra `docker run` arguments (local backend).
  std::vector<std::string> docker_run_options;

  std::map<std::string, std::string> env; // [env]

  // [data]: exported as DTF_INPUT_PATH / DTF_OUTPUT_PATH when set.
  std::string input_path;
  std::string output_path;

  /// Task types in a stable order: chief, master, worker, then the rest by
  /// name. priority equals the position + 1.
  std::vector<task_type_spec> tasks;

  tensorboard_spec tensorboard;
  cluster_settings cluster;
  security_spec security;
  am_spec am;
  policy_spec policy;

  std::string job_file; // absolute path of the job.toml it came from
  /// job.toml key -> the front end's own name for it ("tasks.worker.memory"
  /// -> "-m/--task_memory" for ytf-submit), for refusals
  /// (config/setting_names.hpp); a key without one names itself.
  std::map<std::string, std::string> setting_names;

  /// The task type called `name`, or nullptr.
  const task_type_spec* find(const std::string& name) const {
    for (auto& t : tasks)
      if (t.name == name)
        return &t;
    return nullptr;
  }

  /// The link name of python_venv in the working directory.
  std::string venv_link_name() const {
    auto n = python_venv.size();
    return n >= 4 && python_venv.compare(n - 4, 4, ".pex") == 0 ? "venv.pex" : "venv";
  }

  /// Total number of tasks over all types.
  int32_t total_tasks() const {
    int32_t n = 0;
    for (auto& t : tasks)
      n += t.instances;
    return n;
  }
};

} // namespace tony
