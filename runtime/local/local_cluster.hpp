#pragma once

// The local backend's "cluster": one node (this machine) with a resource pool,
// containers that are child processes in sessions of their own, and YARN's
// allocate semantics, so the AM's actors run unchanged on it.
//
//   register_am  -> the pool's capacity as both max capability and total
//   allocate     -> asks replace outstanding counts per priority; grants come
//                   from free capacity, lowest priority number first; ended
//                   containers are reported once, with their exit status
//   start        -> answers at once, as a NodeManager's startContainers does,
//                   and queues the launch on the cluster's launcher thread:
//                   the container's dir <job_dir>/<container_id>/ is its work
//                   and log dir; resources are linked (archives unpacked once
//                   per job); the command runs under /bin/sh -c. A launch
//                   that fails completes the container (exit status -1 and
//                   the reason), as YARN reports a failed localization
//   stop         -> SIGTERM to the container's session, SIGKILL after grace
//   ended        -> what the session left is killed; a task that ran in an
//                   image (doc/docker.md) also leaves its runtime's
//                   container `tony-<container id>`, which a SIGKILLed
//                   `docker run` client does not stop: `<runtime> rm -f` it,
//                   as YARN's Docker runtime removes a container it reaps
//
// As a NodeManager with GPU scheduling and its physical-memory check:
//
//   GPUs         a container asking for N GPUs gets N of the pool's that no
//                other running container has, in CUDA_VISIBLE_DEVICES and
//                NVIDIA_VISIBLE_DEVICES (and CUDA_DEVICE_ORDER=PCI_BUS_ID, so
//                CUDA numbers them as NVML does); one asking for none gets
//                none ("" and "void") when the pool has any
//   memory       every memory_check_ms each container's process tree (its
//                session and every descendant) is measured as YARN's
//                ContainersMonitor does (resident pages of /proc/<pid>/stat);
//                a tree over its container's memory — twice it at once, or
//                once it counting only processes seen the time before — is
//                killed (TERM, KILL after kill_delay_ms) and completes with
//                exit status -104 and YARN's diagnostic
//
// Thread-safe: the rm and nm adapter actors, the reaper threads and the
// memory check share it.

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "messages/error.hpp"
#include "messages/types.hpp"

namespace tony::local {

struct local_cluster_config {
  std::string app_id;  // application_<cluster_ts>_<nnnn>
  std::string job_dir; // containers live below it
  resource capacity;   // the pool
  std::string host = "127.0.0.1";
  /// Environment every container starts from (YARN's whitelist analogue).
  std::map<std::string, std::string> base_env;
  int64_t stop_grace_ms = 3000;
  /// The GPUs containers get (NVML's indices); capacity.gpus is their count.
  std::vector<int> gpus;
  /// YARN's physical-memory check (yarn.nodemanager.container-monitor
  /// .interval-ms, 3 s); 0 turns it off.
  int64_t memory_check_ms = 3000;
  /// yarn.nodemanager.vmem-pmem-ratio: the virtual limit in the diagnostic.
  double vmem_ratio = 2.1;
  /// yarn.nodemanager.sleep-delay-before-sigkill.ms: TERM, then KILL.
  int64_t kill_delay_ms = 250;
};

/// Statuses YARN uses and the local backend reproduces.
constexpr int32_t exit_killed_by_am = -105;
constexpr int32_t exit_killed_exceeded_pmem = -104;

class local_cluster {
public:
  explicit local_cluster(local_cluster_config cfg);
  ~local_cluster();

  local_cluster(const local_cluster&) = delete;
  local_cluster& operator=(const local_cluster&) = delete;

  // -- resource manager side ----------------------------------------------------

  rm_registration register_am(const am_registration& am);

  allocate_response allocate(const allocate_request& req);

  // -- node manager side ----------------------------------------------------------

  /// Starts the container: fails at once if it was not granted or was
  /// already started, else queues its launch (one launcher thread, in order)
  /// and returns its id without waiting for it. Launches never block the
  /// caller: a job of many containers on a busy machine queues them all at
  /// once, and the AM's requests never wait behind one another's fork.
  expected<std::string> start(const launch_spec& spec);

  /// Stops the container and blocks until its session is empty (at most
  /// about stop_grace_ms plus a little). Idempotent.
  void stop(const std::string& container_id);

  /// Stops every container (used on AM exit).
  void stop_all();

  /// The directory of a container.
  std::string container_dir(const std::string& container_id) const;

  const local_cluster_config& config() const { return cfg_; }

private:
  struct container_rec {
    container c;
    pid_t pid = -1;
    bool started = false;
    bool launching = false; // queued or being launched: no pid yet
    bool ended = false;
    bool stop_requested = false;
    std::thread reaper;
    std::vector<int> gpu_ids;
    /// The memory check killed it: its completion is -104 with this text.
    std::string memory_diag;
    /// Processes of its tree the previous check saw (YARN's "aged" ones).
    std::vector<pid_t> seen;
    /// Its task ran in an image (TONY_DOCKER_IMAGE): the container's
    /// environment, for the runtime's client that removes what is left.
    std::map<std::string, std::string> image_env;
  };

  expected<void> localize(const launch_spec& spec, const std::string& dir);
  void launch_loop();
  void launch(const launch_spec& spec);
  expected<pid_t> spawn_container(const launch_spec& spec);
  std::string unpack_once(const local_resource& res);
  void reap(std::string id, pid_t pid);
  void remove_image_container(const std::string& id,
                              const std::map<std::string, std::string>& env);
  void finish_locked(container_rec& rec, int32_t status, std::string diag);
  void gpu_env(const container_rec& rec, std::map<std::string, std::string>& env) const;
  void check_memory();
  void memory_loop();

  local_cluster_config cfg_;
  mutable std::mutex mtx_;
  std::condition_variable ended_cv_;
  std::map<int32_t, container_ask> asks_;
  resource free_;
  int64_t next_container_ = 2; // 1 is the AM's, as on YARN
  std::map<std::string, std::unique_ptr<container_rec>> containers_;
  std::vector<container_completion> completed_;
  std::map<std::string, std::string> unpacked_; // url -> dir
  std::vector<std::thread> background_;         // stops of released containers
  std::vector<int> free_gpus_;                  // of cfg_.gpus, not in use
  bool stopping_ = false;                       // the memory check ends
  std::condition_variable stop_cv_;
  std::thread monitor_;
  std::deque<launch_spec> launches_; // queued for the launcher, in order
  bool launcher_quit_ = false;
  std::condition_variable launch_cv_;   // a launch queued, or launcher_quit_
  std::condition_variable launched_cv_; // a container's launching ended
  std::thread launcher_;
};

/// "container_<ts>_<nnnn>_01_<nnnnnn>" for an application id and number.
std::string make_container_id(const std::string& app_id, int32_t attempt, int64_t number);

} // namespace tony::local
