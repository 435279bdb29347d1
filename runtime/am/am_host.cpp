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
#include "runtime/am/backend.hpp"
#include "runtime/launch_context.hpp"
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

  auto backend =
      opts.backend == "local"
          ? make_local_backend(sys, *job, endpoint, opts.work_dir, opts.executor_path)
          : make_yarn_backend(sys, *job, endpoint);
  if (!backend) {
    spdlog::error("tony-am: cannot set up the {} backend: {}", opts.backend,
                  describe(backend.error()));
    caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
    return 3;
  }
  mcfg.log_dir_of = backend->log_dir_of;
  if (opts.backend == "local") {
    nlohmann::json am_info = {{"app_id", opts.app_id},
                              {"host", opts.host},
                              {"port", *port},
                              {"pid", ::getpid()}};
    write_file(opts.work_dir + "/am.json", am_info.dump());
  }
  auto rm = backend->rm;
  auto nm = backend->nm;
  auto monitor =
      spawn_lifecycle_monitor(sys, mcfg, registry, rm, nm, backend->make_launch);
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
  if (opts.backend == "yarn") {
    // tony-submit reads the final task states from the AM (it polls every
    // 250 ms); on the local backend it reads status.json instead.
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
  }
  caf::anon_send_exit(monitor, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(rm, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(nm, caf::exit_reason::user_shutdown);
  if (backend->on_end)
    backend->on_end(final_status);
  return final_status.state == "SUCCEEDED" ? 0 : 1;
}

} // namespace tony
