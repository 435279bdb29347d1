#pragma once

// The contract between the AM and every executor it starts: the TONY_*
// variables of the executor's container, as one typed struct. The AM writes
// it (executor_env, for every backend) and tony-executor reads it
// (executor/executor_host.cpp); both go through to_env / from_env, so the
// names and their formats live here only. Backends add the command line and
// the resources (am/local_backend.cpp, yarn_backend.cpp).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/job_spec.hpp"
#include "messages/error.hpp"
#include "messages/types.hpp"

namespace tony {

/// The files and archives a task of `type` gets: the job's, then its type's.
std::vector<shipped_file> shipped_files_of(const job_spec& job, const std::string& type);

/// TONY_SHIPPED_FILES' value ('/'-separated names; a name holds no '/') as
/// names.
std::vector<std::string> split_shipped_names(const std::string& value);

/// The task's Hadoop token file, in its working directory: the container's
/// tokens without the job secret, rewritten whole when the AM gets newer
/// ones; the task's HADOOP_TOKEN_FILE_LOCATION names it (YARN only).
constexpr const char* task_token_file = ".tony-tokens";

struct am_endpoint {
  std::string app_id;
  std::string host; // where executors reach the registry
  int32_t port = 0;
  std::string secret;
  /// The port of the AM's Horovod rendezvous (horovod jobs; 0: none).
  int32_t horovod_port = 0;
  /// Where executors whose AM died find the next AM attempt (the staging
  /// dir holding am.json, runtime/am_restart.hpp) and its WebHDFS address; empty:
  /// the AM is not restarted, and executors do not wait for another.
  std::string restart_dir = {};
  std::string restart_webhdfs = {};
};

/// How the executor runs its command in a container on the local backend
/// (`docker run` or `podman run`; doc/docker.md). On YARN the NodeManager's
/// Docker runtime runs the whole container in the image instead.
struct docker_contract {
  std::string image;                    // TONY_DOCKER_IMAGE; empty: no container
  std::vector<std::string> mounts;      // TONY_DOCKER_MOUNTS, ','-separated
  std::string network = "host";         // TONY_DOCKER_NETWORK
  std::vector<std::string> run_options; // TONY_DOCKER_RUN_OPTIONS, '\n'-separated
  /// TONY_DOCKER_GPUS=1: the machine has GPUs, so a task's GPUs of the local
  /// pool go into its container (the local backend only; YARN's Docker
  /// runtime has its own GPU plugin).
  bool gpus = false;

  /// The variables, by name (none without an image).
  std::map<std::string, std::string> to_env() const;
};

/// The launch environment of YARN's Docker runtime for `docker` (doc/docker.md):
/// YARN_CONTAINER_RUNTIME_TYPE=docker, _DOCKER_IMAGE, _DOCKER_MOUNTS
/// ("src:dst:mode,..."), _DOCKER_CONTAINER_NETWORK. Empty without an image;
/// run options have no YARN counterpart (tony-submit refuses them there).
std::map<std::string, std::string> yarn_docker_env(const docker_contract& docker);

/// The container the tasks of `type` run in: the type's image (its own or
/// [docker] image; empty: none), [docker] mounts after the ones tony adds
/// (the [data] paths that are local paths, read-write, and
/// `hadoop_mounts`: HADOOP_CONF_DIR, JAVA_HOME, HADOOP_HOME, read-only),
/// the network and the run options.
docker_contract docker_of(const job_spec& job, const std::string& type,
                          const std::vector<std::string>& hadoop_mounts);

/// The TONY_* variables of an executor's container.
struct executor_contract {
  std::string app_id;  // TONY_APP_ID
  std::string am_host; // TONY_AM_ADDRESS, host:port of the registry
  int32_t am_port = 0;
  std::string secret;                   // TONY_JOB_SECRET
  task_id task;                         // TONY_TASK_TYPE, TONY_TASK_INDEX
  int32_t attempt = 1;                  // TONY_ATTEMPT
  int32_t restart = 0;                  // TONY_RESTART: the task's run in the attempt
  std::string framework = "tensorflow"; // TONY_FRAMEWORK
  std::string command;                  // TONY_TASK_COMMAND
  int64_t stop_grace_ms = 3000;         // TONY_STOP_GRACE_MS
  int32_t spec_signal = 0; // TONY_SPEC_SIGNAL: sent when the cluster spec changes
  /// TONY_ELASTIC "min:max:restarts" for an elastic PyTorch task.
  int32_t elastic_min = 0;
  int32_t elastic_max = 0;
  int32_t elastic_restarts = 0;
  /// TONY_PYTHON_BINARY_PATH: [code] python_binary_path, when set.
  std::string python_binary_path;
  /// TONY_SHIPPED_FILES: the names of the files and archives shipped to
  /// this task ('/'-separated).
  std::vector<std::string> shipped_files;
  /// TONY_HOROVOD_RENDEZVOUS: host:port of the AM's Horovod rendezvous.
  std::string horovod_rendezvous;
  /// TONY_TENSORBOARD=reserve: this task starts the job's TensorBoard
  /// (`[tensorboard] on = "chief"`): reserve TB_PORT for it.
  bool tensorboard = false;
  /// The local backend's container for the command (image empty: none).
  docker_contract docker;
  /// TONY_AM_RECONNECT "<ms> <dir URI>" (and TONY_AM_WEBHDFS): when the AM
  /// dies, keep the task running up to `reconnect_ms` while reading the
  /// dir's am.json for the next AM attempt, and register again with it
  /// (doc/operations.md "AM restart"). 0: the task dies with its AM.
  int64_t reconnect_ms = 0;
  std::string restart_dir;
  std::string restart_webhdfs;

  /// The variables, by name.
  std::map<std::string, std::string> to_env() const;

  /// The contract read back from a container environment, or
  /// errc::invalid_config naming the missing or malformed variable.
  static expected<executor_contract>
  from_env(const std::map<std::string, std::string>& env);

  /// Variables the executor consumes and does not pass on to the task.
  static bool is_private(const std::string& name);
};

/// The container environment of the executor of `task` (its `restart`-th
/// run in `attempt`): [env], the type's env, the [data] paths and the
/// contract.
std::map<std::string, std::string> executor_env(const job_spec& job, const task_id& task,
                                                int32_t attempt, int32_t restart,
                                                const am_endpoint& am);

/// The same for a task's first run.
inline std::map<std::string, std::string> executor_env(const job_spec& job,
                                                       const task_id& task,
                                                       int32_t attempt,
                                                       const am_endpoint& am) {
  return executor_env(job, task, attempt, 0, am);
}

/// Variables the executor consumes; it does not pass these to the task.
inline bool is_executor_private(const std::string& name) {
  return executor_contract::is_private(name);
}

} // namespace tony
