#include <sys/sysinfo.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "am/backend.hpp"
#include "messages/error.hpp"
#include "runtime/local/local_adapters.hpp"
#include "runtime/metrics/nvml.hpp"
#include "runtime/process/process.hpp"

namespace tony {

namespace {

// The GPUs of the pool: [cluster.local] gpus, else the `here` GPUs this
// machine has (NVML's count, else /proc/driver/nvidia/gpus), numbered from 0 as
// NVML numbers them.
std::vector<int> local_gpus(const job_spec& job, int here) {
  auto n = job.cluster.local.gpus >= 0 ? job.cluster.local.gpus : here;
  std::vector<int> ids;
  for (int i = 0; i < n; ++i)
    ids.push_back(i);
  return ids;
}

// The local pool: [cluster.local] or this machine.
resource local_capacity(const job_spec& job) {
  resource cap;
  cap.memory_mb = job.cluster.local.memory_mb;
  cap.vcores = job.cluster.local.vcores;
  cap.gpus = 0; // the pool's GPUs are counted by local_cluster
  if (cap.memory_mb <= 0) {
    struct sysinfo info;
    if (::sysinfo(&info) == 0)
      cap.memory_mb = static_cast<int64_t>(info.totalram / (1024 * 1024) * info.mem_unit);
    else
      cap.memory_mb = 8192;
  }
  if (cap.vcores <= 0)
    cap.vcores =
        4 * static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  return cap;
}

// The environment every local container starts from, as a NodeManager's
// whitelist passes parts of its own environment through; and the container
// runtime the user chose for tasks in images, and where its client finds
// its daemon (doc/docker.md).
std::map<std::string, std::string> local_base_env() {
  static const char* whitelist[] = {"PATH",
                                    "HOME",
                                    "USER",
                                    "LOGNAME",
                                    "LANG",
                                    "LC_ALL",
                                    "TZ",
                                    "TMPDIR",
                                    "SHELL",
                                    "JAVA_HOME",
                                    "HADOOP_CONF_DIR",
                                    "HADOOP_USER_NAME",
                                    "TONY_CONTAINER_RUNTIME",
                                    "DOCKER_HOST",
                                    "DOCKER_CONTEXT",
                                    "DOCKER_CONFIG",
                                    "DOCKER_CERT_PATH",
                                    "DOCKER_TLS_VERIFY",
                                    "CONTAINER_HOST",
                                    "CONTAINERS_CONF"};
  auto all = process::current_environment();
  std::map<std::string, std::string> env;
  for (auto name : whitelist)
    if (auto i = all.find(name); i != all.end())
      env.emplace(i->first, i->second);
  return env;
}

// What a task's container links, as YARN would localize it: the source
// directory, the venv, the shipped files (directories as they are) and
// archives (unpacked once per job). tony-submit refused remote sources.
std::vector<local_resource> local_resources(const job_spec& job,
                                            const std::string& type) {
  std::vector<local_resource> out;
  auto add = [&out](std::string name, const std::string& path, bool archive) {
    out.push_back({std::move(name), "file://" + path, 0, 0, archive, "APPLICATION"});
  };
  if (!job.src_dir.empty())
    add("src", job.src_dir, false);
  if (!job.python_venv.empty())
    add(job.venv_link_name(), job.python_venv, job.venv_link_name() == "venv");
  for (auto& f : shipped_files_of(job, type))
    add(f.name, f.source, f.archive);
  return out;
}

// The container a task's command runs in (doc/docker.md): what YARN would
// mount, and what the container's links point at on this machine (the job
// dir with the container dirs and unpacked archives, the source directory,
// the shipped files), each at its own path. On a machine with GPUs
// (`gpus_here`) the task's GPUs of the pool go into its container; a pool
// of [cluster.local] gpus on a machine without any stays outside.
docker_contract local_docker(const job_spec& job, const std::string& type,
                             const std::string& job_dir, bool gpus_here) {
  std::vector<std::string> hadoop;
  auto env = process::current_environment();
  for (auto name : {"HADOOP_CONF_DIR", "JAVA_HOME", "HADOOP_HOME"})
    if (auto i = env.find(name);
        i != env.end() && !i->second.empty() && i->second[0] == '/')
      hadoop.push_back(i->second);
  auto d = docker_of(job, type, hadoop);
  if (d.image.empty())
    return d;
  std::vector<std::string> links{job_dir + ":" + job_dir + ":rw"};
  if (!job.src_dir.empty())
    links.push_back(job.src_dir + ":" + job.src_dir + ":ro");
  for (auto& f : shipped_files_of(job, type))
    if (!f.archive)
      links.push_back(f.source + ":" + f.source + ":ro");
  d.mounts.insert(d.mounts.begin(), links.begin(), links.end());
  d.gpus = gpus_here;
  return d;
}

} // namespace

bool write_file_atomically(const std::string& path, const std::string& content) {
  auto tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out)
      return false;
    out << content;
    if (!out)
      return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

expected<am_backend> make_local_backend(caf::actor_system& sys, const job_spec& job,
                                        const am_options& opts) {
  local::local_cluster_config cfg;
  cfg.app_id = opts.app_id;
  cfg.job_dir = opts.work_dir;
  cfg.capacity = local_capacity(job);
  auto gpus_here = metrics::count_gpus();
  cfg.gpus = local_gpus(job, gpus_here);
  cfg.base_env = local_base_env();
  cfg.stop_grace_ms = job.policy.stop_grace_ms;
  auto cluster = std::make_shared<local::local_cluster>(cfg);
  am_backend result;
  result.rm = local::spawn_local_rm(sys, cluster);
  result.nm = local::spawn_local_nm(sys, cluster);
  // TONY_EXECUTOR_WRAPPER runs executors under a tool (gdb, valgrind, perf).
  std::string wrapper;
  if (auto w = std::getenv("TONY_EXECUTOR_WRAPPER"))
    wrapper = w;
  auto executor_path = opts.executor_path;
  auto job_dir = opts.work_dir;
  bool with_gpus = gpus_here > 0;
  result.launcher = [job, executor_path, wrapper, job_dir,
                     with_gpus](const am_endpoint& am) -> launch_factory {
    return [job, am, executor_path, wrapper, job_dir,
            with_gpus](const task_id& task, int32_t attempt, int32_t restart,
                       const container& c) {
      launch_spec spec;
      spec.target = c;
      spec.env = executor_env(job, task, attempt, restart, am);
      for (auto& [k, v] : local_docker(job, task.type, job_dir, with_gpus).to_env())
        spec.env[k] = v;
      // The executor's stderr stays the container's (container.out): what
      // an executor that cannot start says (a missing library, a failed
      // exec, its own errors) is in the container's diagnostics, as on
      // YARN. Its log, stdout, is executor.log.
      spec.command = {"exec", executor_path, ">><LOG_DIR>/executor.log"};
      if (!wrapper.empty())
        spec.command.insert(spec.command.begin() + 1, wrapper);
      spec.resources = local_resources(job, task.type);
      return spec;
    };
  };
  result.log_dir_of = [cluster](const container& c) {
    return cluster->container_dir(c.id);
  };
  // Only this machine: nothing listens beyond the loopback.
  result.host = "127.0.0.1";
  result.bind_address = "127.0.0.1";
  result.event_log = opts.work_dir + "/events.jsonl";
  // tony-submit finds the AM through am.json in the job dir.
  result.announce = [job_dir](const am_address& a) {
    nlohmann::json info = {{"app_id", a.app_id},
                           {"host", a.host},
                           {"port", a.port},
                           {"pid", a.pid},
                           {"tracking_url", a.tracking_url}};
    write_file_atomically(job_dir + "/am.json", info.dump());
  };
  result.on_end = [cluster](const job_status&) { cluster->stop_all(); };
  result.keep_alive = cluster;
  return result;
}

} // namespace tony
