#include "actors/executor.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/registry.hpp"
#include "config/task_env.hpp"
#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/process/process.hpp"

namespace tony {

command_runner::~command_runner() {
  // nop
}

// -- the process-based runner -------------------------------------------------

namespace {

class process_runner : public command_runner {
public:
  process_runner(std::string out, std::string err, std::string guard_program)
      : stdout_path_(std::move(out))
      , stderr_path_(std::move(err))
      , guard_program_(std::move(guard_program)) {
    // nop
  }

  ~process_runner() override {
    if (child_.pgid > 0 && !ended_)
      process::kill_group(child_.pgid, SIGKILL);
    if (waiter_.joinable())
      waiter_.join();
  }

  caf::expected<void> start(const std::string& command,
                            const std::map<std::string, std::string>& env,
                            const std::string& cwd,
                            std::function<void(exit_status)> on_exit) override {
    process::spawn_options opts;
    opts.argv = {"/bin/sh", "-c", command};
    opts.env = env;
    opts.cwd = cwd;
    opts.stdout_path = stdout_path_;
    opts.stderr_path = stderr_path_;
    opts.new_process_group = true;
    opts.guard_group = true;
    opts.guard_program = guard_program_;
    auto child = process::spawn(opts);
    if (!child)
      return child.error();
    child_ = *child;
    waiter_ = std::thread{[this, on_exit = std::move(on_exit)] {
      auto exit = process::wait(child_.pid);
      // The task ends with its main process; whatever it left behind in its
      // group (and the guard) goes with it.
      process::kill_group(child_.pgid, SIGKILL);
      process::release_guard(child_);
      ended_ = true;
      on_exit({exit.exit_code, exit.signal});
    }};
    return caf::unit;
  }

  void signal(int sig) override {
    if (child_.pgid > 0 && !ended_)
      process::kill_group(child_.pgid, sig);
  }

  std::string stderr_tail(size_t max_bytes) override {
    return process::tail_file(stderr_path_, max_bytes);
  }

private:
  std::string stdout_path_;
  std::string stderr_path_;
  std::string guard_program_;
  process::child child_;
  std::atomic<bool> ended_{false};
  std::thread waiter_;
};

} // namespace

std::unique_ptr<command_runner> make_process_runner(std::string stdout_path,
                                                    std::string stderr_path,
                                                    std::string guard_program) {
  return std::make_unique<process_runner>(std::move(stdout_path), std::move(stderr_path),
                                          std::move(guard_program));
}

// -- the executor actor ---------------------------------------------------------

namespace {

using cmd_exited_atom = caf::atom_constant<caf::atom("cmd_exited")>;
using escalate_atom = caf::atom_constant<caf::atom("escalate")>;

using executor_impl =
    executor_actor::extend<caf::reacts_to<tick_atom>,
                           caf::reacts_to<cmd_exited_atom, int32_t, int32_t>,
                           caf::reacts_to<escalate_atom>>;

enum class phase { registering, registered, running, stopping, reporting, done };

struct executor_state {
  executor_config cfg;
  registry_actor registry;
  std::unique_ptr<command_runner> runner;
  phase ph = phase::registering;
  int32_t heartbeat_ms = 1000;
  bool am_lost = false;

  static inline const char* name = "executor";
};

using executor_pointer = executor_impl::stateful_pointer<executor_state>;

void done(executor_pointer self, int code) {
  auto& st = self->state;
  if (st.ph == phase::done)
    return;
  st.ph = phase::done;
  if (st.cfg.on_done)
    st.cfg.on_done(code);
  self->quit();
}

void report_exit(executor_pointer self, int32_t code, int32_t sig) {
  auto& st = self->state;
  task_exit x{st.cfg.task, st.cfg.attempt, code, sig, st.runner->stderr_tail(4096)};
  if (st.am_lost) {
    done(self, code);
    return;
  }
  st.ph = phase::reporting;
  self->request(st.registry, std::chrono::milliseconds(st.cfg.rpc_timeout_ms),
                exit_atom_v, std::move(x))
      .then([=](bool) { done(self, code); },
            [=](caf::error& err) {
              spdlog::error("executor: could not report the exit to the AM: {}",
                            describe(err));
              done(self, code);
            });
}

// The command never ran: report exit 127 with the reason as its stderr.
void fail_start(executor_pointer self, const std::string& why) {
  auto& st = self->state;
  spdlog::error("executor: {}", why);
  st.ph = phase::reporting;
  task_exit x{st.cfg.task, st.cfg.attempt, 127, 0, "tony-executor: " + why};
  self->request(st.registry, std::chrono::milliseconds(st.cfg.rpc_timeout_ms),
                exit_atom_v, std::move(x))
      .then([=](bool) { done(self, 127); }, [=](caf::error&) { done(self, 127); });
}

void start_command(executor_pointer self, const cluster_spec& spec) {
  auto& st = self->state;
  if (!st.cfg.start_error.empty()) {
    fail_start(self, st.cfg.start_error);
    return;
  }
  auto cluster = decode_cluster(spec.encoded);
  if (!cluster) {
    fail_start(self, "the AM sent a malformed cluster spec");
    return;
  }
  task_env_input in;
  in.framework = st.cfg.framework;
  in.app_id = st.cfg.app_id;
  in.task = st.cfg.task;
  in.attempt = st.cfg.attempt;
  in.cluster = std::move(*cluster);
  in.file_dir = st.cfg.file_dir;
  auto rendered = render_task_env_files(in);
  auto env = st.cfg.base_env;
  for (auto& [k, v] : rendered.vars)
    env[k] = v;
  // Values over the environment's limits (huge clusters) go into files.
  for (auto& [path, content] : rendered.files) {
    std::ofstream out(path, std::ios::trunc);
    out << content;
    if (!out)
      spdlog::error("executor: cannot write {}", path);
  }
  if (st.cfg.release_port)
    st.cfg.release_port();
  caf::actor me = caf::actor_cast<caf::actor>(self);
  auto started = st.runner->start(
      st.cfg.command, env, st.cfg.work_dir, [me](command_runner::exit_status x) {
        caf::anon_send(me, cmd_exited_atom::value, x.exit_code, x.signal);
      });
  if (!started) {
    fail_start(self, "cannot start the command: " + describe(started.error()));
    return;
  }
  st.ph = phase::running;
  spdlog::info("executor: {} started: {}", to_string(st.cfg.task), st.cfg.command);
}

void stop_command(executor_pointer self, const std::string& reason) {
  auto& st = self->state;
  spdlog::info("executor: stopping {}: {}", to_string(st.cfg.task), reason);
  switch (st.ph) {
  case phase::registering:
  case phase::registered:
    done(self, 143);
    break;
  case phase::running:
    st.ph = phase::stopping;
    st.runner->signal(SIGTERM);
    self->delayed_send(self, std::chrono::milliseconds(st.cfg.stop_grace_ms),
                       escalate_atom::value);
    break;
  default:
    break;
  }
}

} // namespace

caf::actor spawn_executor(caf::actor_system& sys, caf::actor registry,
                          std::unique_ptr<command_runner> runner, executor_config cfg) {
  // Spawn arguments must be copyable: the runner travels in a shared box.
  auto box = std::make_shared<std::unique_ptr<command_runner>>(std::move(runner));
  auto impl = [](executor_pointer self, caf::actor registry,
                 std::shared_ptr<std::unique_ptr<command_runner>> box,
                 executor_config cfg) -> executor_impl::behavior_type {
    auto& st = self->state;
    st.cfg = std::move(cfg);
    st.registry = caf::actor_cast<registry_actor>(registry);
    st.runner = std::move(*box);
    self->monitor(st.registry);
    self->set_down_handler([=](const caf::down_msg& msg) {
      auto& st = self->state;
      if (msg.source != st.registry.address())
        return;
      st.am_lost = true;
      spdlog::error("executor: lost the AM ({}); killing the task",
                    caf::to_string(msg.reason));
      if (st.ph == phase::running || st.ph == phase::stopping)
        st.runner->signal(SIGKILL); // cmd_exited follows and ends us
      else if (st.ph != phase::reporting)
        done(self, 1);
    });
    executor_hello hello;
    hello.task = st.cfg.task;
    hello.attempt = st.cfg.attempt;
    hello.container_id = st.cfg.container_id;
    hello.host = st.cfg.host;
    hello.port = st.cfg.port;
    hello.secret = st.cfg.secret;
    hello.pid = static_cast<int32_t>(::getpid());
    executor_actor me = self;
    self->request(st.registry, std::chrono::milliseconds(st.cfg.rpc_timeout_ms),
                  register_atom_v, std::move(hello), me)
        .then(
            [=](const registration_ack& ack) {
              auto& st = self->state;
              if (st.ph != phase::registering)
                return;
              st.ph = phase::registered;
              st.heartbeat_ms = std::max(ack.heartbeat_interval_ms, 10);
              spdlog::info("executor: {} registered with {}", to_string(st.cfg.task),
                           ack.app_id);
              self->send(self, tick_atom_v);
            },
            [=](caf::error& err) {
              spdlog::error("executor: registration of {} refused: {}",
                            to_string(self->state.cfg.task), describe(err));
              done(self, 2);
            });
    return {
        [=](spec_atom, const cluster_spec& spec) {
          auto& st = self->state;
          if (st.ph != phase::registered || spec.attempt != st.cfg.attempt)
            return;
          start_command(self, spec);
        },
        [=](stop_atom, const std::string& reason) { stop_command(self, reason); },
        [=](tick_atom) {
          auto& st = self->state;
          if (st.ph == phase::done || st.am_lost)
            return;
          self->send(st.registry, heartbeat_atom_v, st.cfg.task, st.cfg.attempt);
          self->delayed_send(self, std::chrono::milliseconds(st.heartbeat_ms),
                             tick_atom_v);
        },
        [=](cmd_exited_atom, int32_t code, int32_t sig) {
          spdlog::info("executor: {} command ended with code {}{}",
                       to_string(self->state.cfg.task), code,
                       sig ? " (signal " + std::to_string(sig) + ")" : std::string{});
          report_exit(self, code, sig);
        },
        [=](escalate_atom) {
          if (self->state.ph == phase::stopping)
            self->state.runner->signal(SIGKILL);
        },
    };
  };
  return caf::actor_cast<caf::actor>(
      sys.spawn(impl, std::move(registry), box, std::move(cfg)));
}

} // namespace tony
