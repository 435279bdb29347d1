#include "runtime/am/executor_host.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/actor_types.hpp"
#include "actors/executor.hpp"
#include "actors/registry.hpp"
#include "messages/error.hpp"
#include "messages/registration.hpp"
#include "messages/type_ids.hpp"
#include "runtime/am/task_layout.hpp"
#include "runtime/gate/caf_bridge.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/launch_context.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/signal_watcher.hpp"

namespace tony {

namespace {

struct executor_system_config : caf::actor_system_config {
  executor_system_config() {
    load<caf::io::middleman>();
    tony::add_all_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
    // One actor and the middleman: two workers are plenty, whatever the
    // node's core count (CAF would start max(4, cores)).
    set("scheduler.max-threads", size_t{2});
  }
};

// Holds a listening socket on an ephemeral port until the task needs it.
struct port_reservation {
  int fd = -1;
  int port = 0;

  bool open() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return false;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd, 1) != 0)
      return false;
    socklen_t len = sizeof(addr);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      return false;
    port = ntohs(addr.sin_port);
    return true;
  }

  void release() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
};

std::string env_or(const std::map<std::string, std::string>& env, const char* key,
                   const std::string& fallback = {}) {
  auto i = env.find(key);
  return i == env.end() ? fallback : i->second;
}

// The working directory as doc/task-environment.md describes it. A
// python_binary_path that names nothing is the task's failure, reported to
// the AM when the command would start (executor_config::start_error).
void prepare_layout(const std::string& here,
                    const std::map<std::string, std::string>& env, executor_config& cfg) {
  task_layout_input in;
  in.container_dir = here;
  in.python_binary_path = env_or(env, launch_env::python_binary_path);
  in.shipped = split_shipped_names(env_or(env, launch_env::shipped_files));
  in.env = cfg.base_env;
  auto layout = prepare_task_layout(in);
  if (!layout) {
    cfg.start_error = describe(layout.error());
    return;
  }
  for (auto& name : layout->shadowed)
    spdlog::warn("tony-executor: src/{} is not linked into the working directory: the "
                 "name is taken there (a shipped file, the venv, or the container's own)",
                 name);
  for (auto& [k, v] : layout->env)
    cfg.base_env[k] = v;
  if (!layout->python.empty())
    spdlog::info("tony-executor: python and python3 run {}", layout->python);
}

} // namespace

int run_executor(const std::string& guard_program) {
  process::signal_watcher signals;
  auto env = process::current_environment();
  auto missing = std::string{};
  for (auto key : {"TONY_AM_ADDRESS", "TONY_TASK_TYPE", "TONY_TASK_INDEX", "TONY_ATTEMPT",
                   "TONY_TASK_COMMAND"})
    if (env.count(key) == 0)
      missing += std::string(missing.empty() ? "" : ", ") + key;
  if (!missing.empty()) {
    spdlog::error("tony-executor: the container environment lacks {}; tony-executor is "
                  "started by tony-am, not by hand",
                  missing);
    return 2;
  }
  auto address = env["TONY_AM_ADDRESS"];
  auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    spdlog::error("tony-executor: TONY_AM_ADDRESS '{}' is not host:port", address);
    return 2;
  }
  auto am_host = address.substr(0, colon);
  auto am_port = static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1));

  executor_config cfg;
  try {
    cfg.task = {env["TONY_TASK_TYPE"], std::stoi(env["TONY_TASK_INDEX"])};
    cfg.attempt = std::stoi(env["TONY_ATTEMPT"]);
    cfg.stop_grace_ms = std::stoll(env_or(env, "TONY_STOP_GRACE_MS", "3000"));
  } catch (const std::exception&) {
    spdlog::error("tony-executor: TONY_TASK_INDEX, TONY_ATTEMPT or TONY_STOP_GRACE_MS is "
                  "not a number");
    return 2;
  }
  cfg.app_id = env_or(env, "TONY_APP_ID");
  cfg.container_id = env_or(env, "CONTAINER_ID");
  // The environment (local) or the container's token file (YARN).
  auto secret = gate::job_secret_from_environment(env);
  if (!secret) {
    spdlog::error("tony-executor: {}", describe(secret.error()));
    return 2;
  }
  cfg.secret = *secret;
  cfg.framework = env_or(env, "TONY_FRAMEWORK", "tensorflow");
  cfg.command = env["TONY_TASK_COMMAND"];
  cfg.host = env_or(env, "NM_HOST", "127.0.0.1");
  char cwd[4096];
  std::string here = ::getcwd(cwd, sizeof(cwd)) ? cwd : ".";
  cfg.work_dir = here;
  cfg.file_dir = here;
  auto log_dir = env_or(env, "LOG_DIRS", here);
  if (auto comma = log_dir.find(','); comma != std::string::npos)
    log_dir.resize(comma);
  // The task sees the container's environment without tony's private ones.
  for (auto& [k, v] : env)
    if (!is_executor_private(k))
      cfg.base_env.emplace(k, v);
  prepare_layout(here, env, cfg);

  port_reservation reservation;
  if (!reservation.open()) {
    spdlog::error("tony-executor: cannot reserve a port for {}", to_string(cfg.task));
    return 3;
  }
  cfg.port = reservation.port;
  cfg.release_port = [&reservation] { reservation.release(); };

  executor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  // Connect to the AM through its gate, retrying for a while: it may still
  // be publishing. A refused secret or a peer that is no tony AM ends it.
  caf::expected<registry_actor> registry = caf::sec::cannot_connect_to_node;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto backoff = std::chrono::milliseconds(50);
  for (;;) {
    registry = gate::remote_actor<registry_actor>(sys, am_host, am_port, cfg.secret,
                                                  std::chrono::seconds(10));
    if (registry || gate::is_final(registry.error()) ||
        std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
  if (!registry) {
    spdlog::error("tony-executor: cannot reach the AM at {}: {}", address,
                  describe(registry.error()));
    return gate::is_refusal(registry.error()) ? 2 : 3;
  }
  std::promise<int> result;
  cfg.on_done = [&result](int code) { result.set_value(code); };
  auto runner =
      make_process_runner(log_dir + "/stdout", log_dir + "/stderr", guard_program);
  auto exec = spawn_executor(sys, caf::actor_cast<caf::actor>(*registry),
                             std::move(runner), std::move(cfg));
  signals.start([exec](int sig) {
    caf::anon_send(exec, stop_atom_v, std::string{"received "} + ::strsignal(sig));
  });
  auto code = result.get_future().get();
  sys.await_all_actors_done();
  return code;
}

} // namespace tony
