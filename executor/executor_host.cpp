#include "executor/executor_host.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/actor_types.hpp"
#include "actors/executor.hpp"
#include "actors/registry.hpp"
#include "config/task_env.hpp"
#include "executor/task_layout.hpp"
#include "hadoop/credentials.hpp"
#include "messages/error.hpp"
#include "messages/registration.hpp"
#include "messages/type_ids.hpp"
#include "runtime/am_restart.hpp"
#include "runtime/container_command.hpp"
#include "runtime/gate/caf_bridge.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/gate/spec_channel.hpp"
#include "runtime/launch_context.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/signal_watcher.hpp"
#include "runtime/staging/stager.hpp"
#include "web/horovod_rendezvous.hpp"

namespace tony {

namespace {

// Looks for the next AM attempt once the executor's AM died (AM restarts,
// runtime/am_restart.hpp): reads am.json in the job's staging dir about every
// second until it names another AM than the lost one, connects through that
// AM's gate, and hands its registry to the executor (reconnect_atom). After
// `reconnect_ms` without one, the executor gives up (give_up_atom).
class am_finder {
public:
  am_finder(caf::actor_system& sys, const executor_contract& contract,
            std::map<std::string, std::string> env)
      : sys_(sys)
      , secret_(contract.secret)
      , dir_(contract.restart_dir)
      , webhdfs_(contract.restart_webhdfs)
      , limit_(contract.reconnect_ms)
      , env_(std::move(env))
      , current_{contract.am_host, contract.am_port, 0} {
    // nop
  }

  ~am_finder() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }

  /// Called on the finder's thread with each next AM it found, before the
  /// executor hears of it (tony-executor's spec channel then opens there).
  std::function<void(const am_location&)> on_found;

  void start(caf::actor exec) {
    exec_ = std::move(exec);
    thread_ = std::thread([this] { run(); });
  }

  /// From the executor: its AM died (again = false), or the AM it found
  /// asked it to try again.
  void find(bool again) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (!again) {
        lost_ = current_;
        deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_);
      }
      wanted_ = true;
      retry_ = again;
    }
    cv_.notify_all();
  }

private:
  // The AM named in am.json now, if the file is there and readable.
  std::optional<am_location> read_location() {
    auto tokens_path = env_or_empty("HADOOP_TOKEN_FILE_LOCATION");
    hadoop::credentials tokens;
    if (!tokens_path.empty())
      if (auto creds = hadoop::read_credentials_file(tokens_path))
        tokens = std::move(*creds);
    auto user = env_or_empty("USER");
    auto nn = namenode_for(dir_, webhdfs_, user, tokens, env_or_empty("TONY_CA_FILE"));
    auto dir = staging::make_stager(dir_, nn);
    if (!dir)
      return std::nullopt;
    auto text = (*dir)->read(am_address_file);
    if (!text)
      return std::nullopt;
    return am_location_from_json(*text);
  }

  std::string env_or_empty(const char* key) const {
    auto i = env_.find(key);
    return i == env_.end() ? std::string{} : i->second;
  }

  void run() {
    std::unique_lock<std::mutex> lock{mtx_};
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || wanted_; });
      if (stop_)
        return;
      if (retry_) { // the AM it found was not ready: a moment
        retry_ = false;
        cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
        if (stop_)
          return;
      }
      if (std::chrono::steady_clock::now() >= deadline_) {
        wanted_ = false;
        caf::anon_send(exec_, give_up_atom::value,
                       "no new ApplicationMaster registered it within " +
                           std::to_string(limit_ / 1000) + " s of losing its AM at " +
                           lost_.host + ":" + std::to_string(lost_.port) +
                           " ([am] reconnect_timeout)");
        continue;
      }
      lock.unlock();
      auto found = read_location();
      bool is_new = found && !(found->host == lost_.host && found->port == lost_.port);
      expected<registry_actor> registry = make_error(errc::infrastructure);
      if (is_new)
        registry = gate::remote_actor<registry_actor>(sys_, found->host,
                                                      static_cast<uint16_t>(found->port),
                                                      secret_, std::chrono::seconds(10));
      lock.lock();
      if (stop_)
        return;
      if (is_new && registry) {
        spdlog::info("tony-executor: the next AM (attempt {}) listens at {}:{}",
                     found->am_attempt, found->host, found->port);
        current_ = *found;
        wanted_ = false;
        if (on_found)
          on_found(current_);
        caf::anon_send(exec_, reconnect_atom::value,
                       caf::actor_cast<caf::actor>(*registry));
        continue;
      }
      if (is_new)
        spdlog::warn("tony-executor: cannot reach the AM at {}:{} yet: {}", found->host,
                     found->port, describe(registry.error()));
      // About a second apart, spread over the executors.
      auto pause = std::chrono::milliseconds(800 + (::getpid() % 400));
      cv_.wait_for(lock, pause, [this] { return stop_; });
      if (stop_)
        return;
    }
  }

  caf::actor_system& sys_;
  std::string secret_;
  std::string dir_;
  std::string webhdfs_;
  int64_t limit_;
  std::map<std::string, std::string> env_;
  caf::actor exec_;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool wanted_ = false;
  bool retry_ = false;
  am_location current_; // the AM registered with last
  am_location lost_;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

struct executor_system_config : caf::actor_system_config {
  executor_system_config() {
    load<caf::io::middleman>();
    tony::add_all_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
    // One actor and the middleman: two workers are plenty, whatever the
    // node's core count (CAF would start max(4, cores)).
    set("scheduler.max-threads", size_t{2});
    // Workers that sleep until there is work: CAF's default work-stealing
    // workers poll, which cost each executor about 60 ms of CPU to start
    // and 0.75% of a core while it waits; sharing, 23 ms and 0.2%, when a
    // node runs dozens of them (bench/notes.md, "Launch at scale after
    // spread placement").
    set("scheduler.policy", caf::atom("sharing"));
  }
};

// Holds an ephemeral port for the task (config/task_env.hpp port_share).
// `released`: a listening socket, closed just before the command starts.
// `reuse_port` / `reuse_addr`: bound with that option and not listening,
// kept until the executor ends: the task's server binds beside it with the
// same option and gets every connection, while nothing else takes the port
// meanwhile.
struct port_reservation {
  int fd = -1;
  int port = 0;
  bool shared = false;

  bool open(port_share share) {
    shared = share != port_share::released;
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return false;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET,
                 share == port_share::reuse_port ? SO_REUSEPORT : SO_REUSEADDR, &one,
                 sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        (!shared && ::listen(fd, 1) != 0))
      return false;
    socklen_t len = sizeof(addr);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      return false;
    port = ntohs(addr.sin_port);
    return true;
  }

  // Before the command starts: a listening reservation goes, a shared one
  // stays.
  void release_for_command() {
    if (!shared)
      close();
  }

  void close() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }

  ~port_reservation() { close(); }
};

std::string env_or(const std::map<std::string, std::string>& env, const char* key,
                   const std::string& fallback = {}) {
  auto i = env.find(key);
  return i == env.end() ? fallback : i->second;
}

// The working directory as doc/task-environment.md describes it. A
// python_binary_path that names nothing is the task's failure, reported to
// the AM when the command would start (executor_config::start_error).
void prepare_layout(const std::string& here, const executor_contract& contract,
                    executor_config& cfg) {
  task_layout_input in;
  in.container_dir = here;
  in.python_binary_path = contract.python_binary_path;
  in.shipped = contract.shipped_files;
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

// True when a NodeManager's JVM is among this process' ancestors: the
// NodeManager started the container on the node itself. In YARN's Docker
// runtime the container has a PID namespace of its own, where the
// NodeManager is not to be seen. (A marker file like /.dockerenv would not
// do: the node may itself be a container.)
bool nodemanager_is_an_ancestor() {
  auto pid = ::getppid();
  for (int depth = 0; pid > 1 && depth < 64; ++depth) {
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    std::string args{std::istreambuf_iterator<char>(cmdline), {}};
    if (args.find("org.apache.hadoop.yarn.server.nodemanager.NodeManager") !=
        std::string::npos)
      return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close_paren = line.rfind(')');
    int ppid = 0;
    char state = 0;
    if (close_paren == std::string::npos ||
        std::sscanf(line.c_str() + close_paren + 1, " %c %d", &state, &ppid) != 2)
      return false;
    pid = ppid;
  }
  return false;
}

// On YARN a task with an image runs in it only where the NodeManager has the
// LinuxContainerExecutor with the docker runtime allowed; elsewhere the
// runtime variables are ignored and the container runs on the node itself.
std::string yarn_docker_problem(const std::map<std::string, std::string>& env,
                                const task_id& task) {
  if (env_or(env, "YARN_CONTAINER_RUNTIME_TYPE") != "docker" ||
      !nodemanager_is_an_ancestor())
    return {};
  return to_string(task) + " was to run in the Docker image " +
         env_or(env, "YARN_CONTAINER_RUNTIME_DOCKER_IMAGE") +
         ", but its NodeManager started it on the node itself: YARN runs containers "
         "in Docker only with the LinuxContainerExecutor "
         "(yarn.nodemanager.container-executor.class) and the docker runtime allowed "
         "(yarn.nodemanager.runtime.linux.allowed-runtimes = default,docker). Ask the "
         "cluster's administrator, or remove the image ([docker] image, [tasks.<type>] "
         "docker_image)";
}

// The task's own token file: the container's tokens (from the NodeManager's
// file) without the job secret, 0600 in its working directory. The
// executor rewrites it when the AM sends newer tokens, and the task's
// HADOOP_TOKEN_FILE_LOCATION names it (doc/task-environment.md).
void prepare_token_file(const std::string& here, executor_config& cfg) {
  auto given = cfg.base_env.find("HADOOP_TOKEN_FILE_LOCATION");
  if (given == cfg.base_env.end() || given->second.empty())
    return;
  auto creds = hadoop::read_credentials_file(given->second);
  if (!creds) {
    spdlog::warn("tony-executor: the task keeps {}: {}", given->second,
                 creds.error().message());
    return;
  }
  hadoop::credentials task_creds;
  for (auto& [alias, tok] : creds->tokens())
    task_creds.add_token(alias, tok);
  for (auto& [alias, bytes] : creds->secrets())
    if (alias != gate::secret_alias)
      task_creds.add_secret(alias, bytes);
  auto path = here + "/" + task_token_file;
  if (auto ok = make_file_writer()->write_private(
          path, hadoop::serialize_credentials(task_creds));
      !ok) {
    spdlog::warn("tony-executor: the task keeps {}: {}", given->second,
                 describe(ok.error()));
    return;
  }
  cfg.token_file = path;
  given->second = path;
}

// The executor's configuration: the contract the AM wrote into the
// container's environment, and what this container is.
executor_config executor_config_from(const executor_contract& contract,
                                     const std::map<std::string, std::string>& env) {
  executor_config cfg;
  cfg.task = contract.task;
  cfg.attempt = contract.attempt;
  cfg.restart = contract.restart;
  cfg.stop_grace_ms = contract.stop_grace_ms;
  cfg.app_id = contract.app_id;
  cfg.secret = contract.secret;
  cfg.framework = contract.framework;
  cfg.command = contract.command;
  cfg.spec_signal = contract.spec_signal;
  cfg.elastic_min = contract.elastic_min;
  cfg.elastic_max = contract.elastic_max;
  cfg.elastic_restarts = contract.elastic_restarts;
  cfg.horovod_rendezvous = contract.horovod_rendezvous;
  cfg.docker = contract.docker;
  cfg.container_id = env_or(env, "CONTAINER_ID");
  cfg.host = env_or(env, "NM_HOST", "127.0.0.1");
  cfg.pid = static_cast<int32_t>(::getpid());
  char cwd[4096];
  std::string here = ::getcwd(cwd, sizeof(cwd)) ? cwd : ".";
  // The task runs in its container's directory, where the source entries,
  // shipped files and the venv are laid out (doc/task-environment.md).
  cfg.work_dir = here;
  cfg.file_dir = here;
  // The task sees the container's environment without tony's private ones.
  for (auto& [k, v] : env)
    if (!executor_contract::is_private(k))
      cfg.base_env.emplace(k, v);
  prepare_layout(here, contract, cfg);
  if (auto why = yarn_docker_problem(env, cfg.task); !why.empty())
    cfg.start_error = why;
  if (!cfg.docker.image.empty() && cfg.start_error.empty()) {
    auto runtime = find_container_runtime(cfg.docker.image, to_string(cfg.task));
    if (runtime)
      cfg.container_runtime = *runtime;
    else
      cfg.start_error = describe(runtime.error());
  }
  prepare_token_file(here, cfg);
  return cfg;
}

// -- the spec channel ------------------------------------------------------------

// The executor's second connection to the AM, for its cluster specs
// (runtime/gate/spec_channel.hpp): opened when a registration's ack says
// so, each frame passed to the executor as `spec_atom`, as a spec over BASP
// would be. Without a spec the task cannot start, so a channel that cannot
// be opened or ends before its first spec stops the executor (`failed`:
// tony-executor then exits 3, as when the AM cannot be reached).
// AM restarts: the executor that registers again with the next AM attempt
// opens that AM's channel instead (the finder moves the link there first;
// spec_reader::open stops the old reader), so later specs reach it.
struct spec_channel_link {
  std::string secret;
  /// The finder looks for a next AM when this one dies.
  bool follows_am = false;
  std::atomic<bool> got_spec{false};
  std::atomic<bool> failed{false};

  /// The AM registered with last, or about to be (finder thread).
  void move_to(std::string host, uint16_t port) {
    std::lock_guard<std::mutex> guard{mutex_};
    am_host_ = std::move(host);
    am_port_ = port;
  }

  std::pair<std::string, uint16_t> am() {
    std::lock_guard<std::mutex> guard{mutex_};
    return {am_host_, am_port_};
  }

private:
  std::mutex mutex_;
  std::string am_host_;
  uint16_t am_port_ = 0;

public:
  gate::spec_reader reader; // last: stopped before the rest goes
};

void give_up_on_channel(spec_channel_link& link, const executor_actor& exec,
                        const std::string& where, const std::string& why) {
  if (link.got_spec) {
    if (link.follows_am)
      spdlog::warn("tony-executor: the AM's spec channel at {} ended ({}); the next AM "
                   "attempt's channel opens once this task registers with it",
                   where, why);
    else
      spdlog::warn("tony-executor: the AM's spec channel at {} ended ({}); a later "
                   "change of the cluster spec would not reach this task",
                   where, why);
    return;
  }
  spdlog::error("tony-executor: no cluster spec from the AM's spec channel at {}: {}",
                where, why);
  link.failed = true;
  caf::anon_send(exec, stop_atom_v, "no cluster spec: the AM's spec channel failed");
}

// What the executor calls with each registration's ack.
void open_spec_channel(spec_channel_link& link, const registration_ack& ack,
                       const executor_actor& exec) {
  auto [host, port] = link.am();
  auto where = host + ":" + std::to_string(port);
  if (!ack.spec_channel) {
    link.reader.stop(); // a next AM without one: the old AM's channel is gone
    spdlog::info("tony-executor: the AM at {} sends the cluster spec over the "
                 "registry's connection (no spec channel)",
                 where);
    return;
  }
  link.reader.open(
      host, port, link.secret,
      [&link, exec, where](std::string frame) {
        auto spec = from_channel_frame(frame);
        if (!spec) {
          give_up_on_channel(link, exec, where, "a frame that is no cluster spec");
          return;
        }
        spdlog::info("tony-executor: cluster spec of attempt {} ({} bytes) from the "
                     "AM's spec channel at {}",
                     spec->attempt, frame.size(), where);
        link.got_spec = true;
        caf::anon_send(exec, spec_atom_v, std::move(*spec));
      },
      [&link, exec, where](const error& err) {
        give_up_on_channel(link, exec, where, describe(err));
      });
}

// The task's port and, for the chief of a `[tensorboard] on = "chief"` job,
// TB_PORT: held until the task starts (cfg.release_port), or until the
// executor ends where the task's server binds beside the hold
// (ports_to_hold, whose variables join the command's environment). False,
// said in the log, when one cannot be reserved.
bool reserve_ports(port_reservation& reservation, port_reservation& tensorboard,
                   bool wants_tensorboard, executor_config& cfg) {
  auto hold = ports_to_hold(cfg.framework, cfg.task, cfg.command, cfg.base_env,
                            !cfg.docker.image.empty());
  if (!reservation.open(hold.task_port)) {
    spdlog::error("tony-executor: cannot reserve a port for {}", to_string(cfg.task));
    return false;
  }
  cfg.port = reservation.port;
  if (wants_tensorboard) {
    if (!tensorboard.open(hold.tensorboard_port)) {
      spdlog::error("tony-executor: cannot reserve a TensorBoard port for {}",
                    to_string(cfg.task));
      return false;
    }
    cfg.tensorboard_port = tensorboard.port;
  }
  for (auto& [name, value] : hold.vars)
    cfg.base_env.emplace(name, value);
  cfg.release_port = [&reservation, &tensorboard] {
    reservation.release_for_command();
    tensorboard.release_for_command();
  };
  return true;
}

// Connects to the AM's registry through its gate, retrying for a while: it
// may still be publishing. A refused secret or a peer that is no tony AM ends
// it at once.
expected<registry_actor> connect_registry(caf::actor_system& sys,
                                          const std::string& am_host, uint16_t am_port,
                                          const std::string& secret) {
  expected<registry_actor> registry = make_error(errc::infrastructure);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto backoff = std::chrono::milliseconds(50);
  for (;;) {
    registry = gate::remote_actor<registry_actor>(sys, am_host, am_port, secret,
                                                  std::chrono::seconds(10));
    if (registry || gate::is_final(registry.error()) ||
        std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
  return registry;
}

} // namespace

int run_executor(const std::string& guard_program) {
  process::signal_watcher signals;
  auto env = process::current_environment();
  auto contract = executor_contract::from_env(env);
  if (!contract) {
    spdlog::error("tony-executor: {}", describe(contract.error()));
    return 2;
  }
  // The environment (local) or the container's token file (YARN).
  auto secret = gate::job_secret_from_environment(env);
  if (!secret) {
    spdlog::error("tony-executor: {}", describe(secret.error()));
    return 2;
  }
  contract->secret = *secret;
  auto cfg = executor_config_from(*contract, env);
  if (!cfg.horovod_rendezvous.empty())
    cfg.horovod_token = rendezvous::horovod_token(*secret, contract->attempt);
  cfg.tensorboard_token = gate::tensorboard_token(*secret);
  auto address = contract->am_host + ":" + std::to_string(contract->am_port);
  auto am_host = contract->am_host;
  auto am_port = static_cast<uint16_t>(contract->am_port);
  auto log_dir = env_or(env, "LOG_DIRS", cfg.file_dir);
  if (auto comma = log_dir.find(','); comma != std::string::npos)
    log_dir.resize(comma);

  port_reservation reservation;
  port_reservation tensorboard;
  if (!reserve_ports(reservation, tensorboard, contract->tensorboard, cfg))
    return 3;

  executor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  spec_channel_link channel;
  channel.move_to(am_host, am_port);
  channel.secret = cfg.secret;
  cfg.reads_spec_channel = true;
  cfg.on_registered = [&channel](const registration_ack& ack,
                                 const executor_actor& exec) {
    open_spec_channel(channel, ack, exec);
  };
  auto registry = connect_registry(sys, am_host, am_port, cfg.secret);
  if (!registry) {
    spdlog::error("tony-executor: cannot reach the AM at {}: {}", address,
                  describe(registry.error()));
    return gate::is_refusal(registry.error()) ? 2 : 3;
  }
  std::promise<int> result;
  cfg.on_done = [&result](int code) { result.set_value(code); };
  // AM restarts: when the AM dies, the task runs on while the next one is found.
  std::unique_ptr<am_finder> finder;
  if (contract->reconnect_ms > 0 && !contract->restart_dir.empty()) {
    finder = std::make_unique<am_finder>(sys, *contract, env);
    cfg.find_am = [f = finder.get()](bool again) { f->find(again); };
    finder->on_found = [&channel](const am_location& next) {
      channel.move_to(next.host, static_cast<uint16_t>(next.port));
    };
    channel.follows_am = true;
  }
  auto runner =
      make_process_runner(log_dir + "/stdout", log_dir + "/stderr", guard_program);
  auto exec = spawn_executor(sys, caf::actor_cast<caf::actor>(*registry),
                             std::move(runner), make_file_writer(), std::move(cfg));
  if (finder)
    finder->start(exec);
  signals.start([exec](int sig) {
    caf::anon_send(exec, stop_atom_v, std::string{"received "} + ::strsignal(sig));
  });
  auto code = result.get_future().get();
  finder.reset(); // before the channel: it moves the channel to a next AM
  channel.reader.stop();
  sys.await_all_actors_done();
  return channel.failed ? 3 : code;
}

} // namespace tony
