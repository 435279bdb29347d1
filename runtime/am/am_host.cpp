#include "runtime/am/am_host.hpp"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <nlohmann/json.hpp>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include "actors/actor_types.hpp"
#include "actors/lifecycle_monitor.hpp"
#include "actors/registry.hpp"
#include "config/job_json.hpp"
#include "messages/error.hpp"
#include "messages/registration.hpp"
#include "messages/type_ids.hpp"
#include "runtime/launch_context.hpp"
#include "runtime/local/local_adapters.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/signal_watcher.hpp"
#include "runtime/status_json.hpp"

namespace tony {

namespace {

struct am_config : caf::actor_system_config {
  am_config() {
    load<caf::io::middleman>();
    tony::add_all_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
  }
};

bool write_file(const std::string& path, const std::string& content) {
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

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The local pool: [cluster.local] or this machine.
resource local_capacity(const job_spec& job) {
  resource cap;
  cap.memory_mb = job.cluster.local.memory_mb;
  cap.vcores = job.cluster.local.vcores;
  cap.gpus = job.cluster.local.gpus;
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

// The environment every local container starts from, as YARN's NodeManager
// whitelist passes through its own environment.
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
                                    "HADOOP_USER_NAME"};
  auto all = process::current_environment();
  std::map<std::string, std::string> env;
  for (auto name : whitelist)
    if (auto i = all.find(name); i != all.end())
      env.emplace(i->first, i->second);
  return env;
}

launch_factory local_launch_factory(const job_spec& job, am_endpoint am,
                                    std::string executor_path) {
  return [job, am, executor_path](const task_id& task, int32_t attempt,
                                  const container& c) {
    launch_spec spec;
    spec.target = c;
    spec.env = executor_env(job, task, attempt, am);
    spec.command = {"exec", executor_path, ">><LOG_DIR>/executor.log", "2>&1"};
    if (auto wrap = std::getenv("TONY_EXECUTOR_WRAPPER"))
      spec.command = {"exec", wrap, executor_path, ">><LOG_DIR>/executor.log", "2>&1"};
    spec.resources.push_back(
        {"src", "file://" + job.src_dir, 0, 0, false, "APPLICATION"});
    if (!job.python_venv.empty())
      spec.resources.push_back(
          {"venv", "file://" + job.python_venv, 0, 0, true, "APPLICATION"});
    return spec;
  };
}

} // namespace

std::string make_job_secret() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1)
    return {};
  static const char* hex = "0123456789abcdef";
  std::string result;
  for (auto b : bytes) {
    result += hex[b >> 4];
    result += hex[b & 0xF];
  }
  return result;
}

int run_am(const am_options& opts) {
  process::signal_watcher signals;
  auto text = read_file(opts.job_json);
  if (text.empty()) {
    spdlog::error("tony-am: cannot read the job spec {}", opts.job_json);
    return 2;
  }
  auto job = job_from_json(text);
  if (!job) {
    spdlog::error("tony-am: bad job spec {}: {}", opts.job_json, describe(job.error()));
    return 2;
  }
  auto secret = make_job_secret();
  if (secret.empty()) {
    spdlog::error("tony-am: cannot generate the job secret (OpenSSL RAND_bytes failed)");
    return 3;
  }
  am_config cfg;
  caf::actor_system sys{cfg};
  registry_config rcfg{opts.app_id, secret,
                       static_cast<int32_t>(job->policy.heartbeat_interval_ms)};
  auto registry = spawn_registry(sys, rcfg);
  auto port = sys.middleman().publish(registry, 0, "0.0.0.0", true);
  if (!port) {
    spdlog::error("tony-am: cannot publish the registry: {}", sys.render(port.error()));
    caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
    return 3;
  }
  spdlog::info("tony-am: {} registry at {}:{}", opts.app_id, opts.host, *port);
  am_endpoint endpoint{opts.app_id, opts.host, static_cast<int32_t>(*port), secret};

  monitor_config mcfg;
  mcfg.job = *job;
  mcfg.app_id = opts.app_id;
  mcfg.am = {opts.host, static_cast<int32_t>(*port), ""};

  std::shared_ptr<local::local_cluster> cluster;
  rm_client_actor rm;
  nm_client_actor nm;
  launch_factory make_launch;
  if (opts.backend == "local") {
    local::local_cluster_config lcfg;
    lcfg.app_id = opts.app_id;
    lcfg.job_dir = opts.work_dir;
    lcfg.capacity = local_capacity(*job);
    lcfg.base_env = local_base_env();
    lcfg.stop_grace_ms = job->policy.stop_grace_ms;
    cluster = std::make_shared<local::local_cluster>(lcfg);
    rm = local::spawn_local_rm(sys, cluster);
    nm = local::spawn_local_nm(sys, cluster);
    make_launch = local_launch_factory(*job, endpoint, opts.executor_path);
    mcfg.log_dir_of = [cluster](const container& c) {
      return cluster->container_dir(c.id);
    };
    nlohmann::json am_info = {{"app_id", opts.app_id},
                              {"host", opts.host},
                              {"port", *port},
                              {"pid", ::getpid()}};
    write_file(opts.work_dir + "/am.json", am_info.dump());
  } else {
    spdlog::error("tony-am: backend '{}' is not available in this build", opts.backend);
    caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
    return 3;
  }

  auto monitor = spawn_lifecycle_monitor(sys, mcfg, registry, rm, nm, make_launch);
  signals.start([monitor](int sig) {
    caf::anon_send(monitor, kill_atom_v,
                   std::string{"the ApplicationMaster received "} + ::strsignal(sig));
  });
  job_status final_status;
  {
    caf::scoped_actor self{sys};
    self->request(monitor, caf::infinite, wait_atom_v)
        .receive([&](job_status& st) { final_status = std::move(st); },
                 [&](caf::error& err) {
                   final_status.state = "FAILED";
                   final_status.diagnostics =
                       "the lifecycle monitor failed: " + sys.render(err);
                 });
  }
  write_file(opts.work_dir + "/status.json", to_json(final_status, 2));
  caf::anon_send_exit(monitor, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(rm, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(nm, caf::exit_reason::user_shutdown);
  if (cluster)
    cluster->stop_all();
  return final_status.state == "SUCCEEDED" ? 0 : 1;
}

} // namespace tony
