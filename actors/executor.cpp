#include "actors/executor.hpp"

#include <signal.h>

#include <chrono>
#include <optional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/registry.hpp"
#include "config/task_env.hpp"
#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/container_command.hpp"
#include "runtime/gate/token_seal.hpp"

namespace tony {

namespace {

using cmd_exited_atom = caf::atom_constant<caf::atom("cmd_exited")>;
using escalate_atom = caf::atom_constant<caf::atom("escalate")>;

using executor_impl = executor_actor::extend<
    caf::reacts_to<tick_atom>, caf::reacts_to<cmd_exited_atom, int32_t, int32_t>,
    caf::reacts_to<escalate_atom>, caf::reacts_to<reconnect_atom, caf::actor>,
    caf::reacts_to<give_up_atom, std::string>>;

using behavior = executor_impl::behavior_type;

struct executor_state {
  executor_config cfg;
  registry_actor registry;
  std::unique_ptr<command_runner> runner;
  std::unique_ptr<file_writer> files;
  int32_t heartbeat_ms = 1000;
  bool am_lost = false;
  bool command_alive = false; // started and not yet ended
  bool reporting = false;     // the exit report is out
  bool finished = false;
  int32_t tokens_generation = 0; // of the task's token file
  bool started = false;          // the command was started (the spec came)
  bool stopping = false;         // told to stop: the end is near, no AM is waited for
  bool orphaned = false;         // the AM died; the next one is looked for
  int32_t am_generation = 0;     // counts the AMs registered with
  /// The command's exit while no AM listens: reported to the next one.
  std::optional<task_exit> pending_exit;
  float progress = -1; // the task's, from its progress file

  static inline const char* name = "executor";
};

using executor_pointer = executor_impl::stateful_pointer<executor_state>;

// -- the end ----------------------------------------------------------------------

void done(executor_pointer self, int code) {
  auto& st = self->state;
  if (st.finished)
    return;
  st.finished = true;
  if (st.cfg.on_done)
    st.cfg.on_done(code);
  self->quit();
}

behavior reporting(executor_pointer self);

// Reports how the command ended (unless the AM is gone), then ends.
void report_exit(executor_pointer self, task_exit x) {
  auto& st = self->state;
  auto code = x.exit_code;
  if (st.am_lost) {
    if (st.orphaned) { // the next AM attempt hears it
      spdlog::info("executor: {} ended with code {} while no AM ran; the next AM "
                   "attempt is told",
                   to_string(st.cfg.task), code);
      st.pending_exit = std::move(x);
      return;
    }
    done(self, code);
    return;
  }
  st.reporting = true;
  st.pending_exit = x;
  self->become(reporting(self));
  auto generation = st.am_generation;
  self->request(st.registry, std::chrono::milliseconds(st.cfg.rpc_timeout_ms),
                exit_atom_v, std::move(x))
      .then(
          [=](bool) {
            self->state.pending_exit.reset();
            done(self, code);
          },
          [=](caf::error& err) {
            if (self->state.orphaned || generation != self->state.am_generation)
              return; // the AM died meanwhile: the next one is told
            spdlog::error("executor: could not report the exit to the AM: {}",
                          describe(err));
            done(self, code);
          });
}

task_exit exit_of(executor_pointer self, int32_t code, int32_t sig, std::string tail) {
  auto& st = self->state;
  return task_exit{st.cfg.task, st.cfg.attempt,  code,
                   sig,         std::move(tail), st.cfg.container_id};
}

// The command never ran: report exit 127 with the reason as its stderr.
void fail_start(executor_pointer self, const std::string& why) {
  spdlog::error("executor: {}", why);
  report_exit(self, exit_of(self, 127, 0, "tony-executor: " + why));
}

// -- handlers shared by several phases ------------------------------------------------

// Newer tokens from the AM: the task's token file is replaced whole, so a
// task reading it sees the old tokens or the new ones. Older or equal
// generations (a late duplicate) are ignored.
void take_tokens(executor_pointer self, const job_tokens& x) {
  auto& st = self->state;
  if (st.cfg.token_file.empty() || x.generation <= st.tokens_generation)
    return;
  auto creds = gate::open_tokens(st.cfg.secret, st.cfg.app_id, x.generation, x.sealed);
  if (!creds) {
    spdlog::error("executor: tokens of generation {} refused: {}", x.generation,
                  describe(creds.error()));
    return;
  }
  if (auto ok = st.files->write_private(st.cfg.token_file, *creds); !ok) {
    spdlog::error("executor: cannot update the token file: {}", describe(ok.error()));
    return;
  }
  st.tokens_generation = x.generation;
  spdlog::info("executor: tokens of generation {} written to {}", x.generation,
               st.cfg.token_file);
}

// Every heartbeat carries what the command's process tree uses now (an
// empty sample before it runs): the AM's metrics (doc/tracking.md); and
// the progress the task last wrote into its progress file (the AM reports
// the job's to the RM).
void beat(executor_pointer self) {
  auto& st = self->state;
  if (st.am_lost)
    return;
  task_sample sample;
  if (st.command_alive) {
    using namespace std::chrono;
    sample = st.runner->sample(
        duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
  }
  if (auto text = st.files->read_small(st.cfg.file_dir + "/" + progress_file_name, 64))
    if (auto p = parse_progress(*text))
      st.progress = *p;
  sample.progress = st.progress;
  self->send(st.registry, heartbeat_atom_v, st.cfg.task, st.cfg.attempt,
             std::move(sample));
  self->delayed_send(self, std::chrono::milliseconds(st.heartbeat_ms), tick_atom_v);
}

void on_command_exit(executor_pointer self, int32_t code, int32_t sig) {
  auto& st = self->state;
  st.command_alive = false;
  spdlog::info("executor: {} command ended with code {}{}", to_string(st.cfg.task), code,
               sig ? " (signal " + std::to_string(sig) + ")" : std::string{});
  report_exit(self, exit_of(self, code, sig, st.runner->stderr_tail(4096)));
}

task_env_input env_input(executor_pointer self, cluster_map cluster) {
  auto& st = self->state;
  task_env_input in;
  in.framework = st.cfg.framework;
  in.app_id = st.cfg.app_id;
  in.task = st.cfg.task;
  in.attempt = st.cfg.attempt;
  in.restart = st.cfg.restart;
  in.cluster = std::move(cluster);
  in.file_dir = st.cfg.file_dir;
  in.spec_file = st.cfg.file_dir + "/cluster_spec.json";
  in.progress_file = st.cfg.file_dir + "/" + progress_file_name;
  in.elastic_min = st.cfg.elastic_min;
  in.elastic_max = st.cfg.elastic_max;
  in.elastic_restarts = st.cfg.elastic_restarts;
  in.horovod_rendezvous = st.cfg.horovod_rendezvous;
  in.horovod_token = st.cfg.horovod_token;
  in.tensorboard_port = st.cfg.tensorboard_port;
  if (st.cfg.task.type == "tensorboard" || st.cfg.tensorboard_port > 0)
    in.tensorboard_token = st.cfg.tensorboard_token;
  return in;
}

// -- the phases -----------------------------------------------------------------------

behavior running(executor_pointer self);
behavior stopping(executor_pointer self);

// Writes the spec file and every value too large for the environment, then
// starts the command.
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
  auto in = env_input(self, std::move(*cluster));
  auto rendered = render_task_env_files(in);
  auto env = st.cfg.base_env;
  for (auto& [k, v] : rendered.vars)
    env[k] = v;
  rendered.files[in.spec_file] = cluster_spec_json(in.cluster);
  for (auto& [path, content] : rendered.files)
    if (auto ok = st.files->write(path, content); !ok) {
      fail_start(self, describe(ok.error()));
      return;
    }
  for (auto& [path, content] : rendered.executables)
    if (auto ok = st.files->write_program(path, content); !ok) {
      fail_start(self, describe(ok.error()));
      return;
    }
  if (!rendered.path_prefix.empty()) {
    auto& path = env["PATH"];
    path = rendered.path_prefix + ":" +
           (path.empty() ? "/usr/local/bin:/usr/bin:/bin" : path);
  }
  if (!rendered.python_path_prefix.empty()) {
    auto& path = env["PYTHONPATH"];
    path = path.empty() ? rendered.python_path_prefix
                        : rendered.python_path_prefix + ":" + path;
  }
  if (st.cfg.release_port)
    st.cfg.release_port();
  caf::actor me = caf::actor_cast<caf::actor>(self);
  auto command = render_task_command(in, st.cfg.command);
  if (!st.cfg.docker.image.empty())
    command = shell_command(st.cfg.container_runtime,
                            container_run_args(st.cfg.container_runtime, st.cfg.docker,
                                               "tony-" + st.cfg.container_id,
                                               st.cfg.work_dir, env, command));
  auto started = st.runner->start(
      command, env, st.cfg.work_dir, [me](command_runner::exit_status x) {
        caf::anon_send(me, cmd_exited_atom::value, x.exit_code, x.signal);
      });
  if (!started) {
    fail_start(self, "cannot start the command: " + describe(started.error()));
    return;
  }
  st.command_alive = true;
  st.started = true;
  self->become(running(self));
  spdlog::info("executor: {} started: {}", to_string(st.cfg.task), command);
}

// A restarted task moved: the running command learns it from the spec file
// (and the signal, when the job asks for one).
void update_spec(executor_pointer self, const cluster_spec& spec) {
  auto& st = self->state;
  auto cluster = decode_cluster(spec.encoded);
  if (!cluster || spec.attempt != st.cfg.attempt)
    return;
  auto in = env_input(self, std::move(*cluster));
  if (auto ok = st.files->write(in.spec_file, cluster_spec_json(in.cluster)); !ok) {
    spdlog::error("executor: cannot update the cluster spec: {}", describe(ok.error()));
    return;
  }
  spdlog::info("executor: the cluster spec changed; {} rewritten", in.spec_file);
  if (st.cfg.spec_signal > 0)
    st.runner->signal(st.cfg.spec_signal);
}

void begin_stopping(executor_pointer self, const std::string& reason) {
  auto& st = self->state;
  st.stopping = true;
  spdlog::info("executor: stopping {}: {}", to_string(st.cfg.task), reason);
  st.runner->signal(SIGTERM);
  self->delayed_send(self, std::chrono::milliseconds(st.cfg.stop_grace_ms),
                     escalate_atom::value);
  self->become(stopping(self));
}

// Waiting for the cluster spec; a stop before it ends the executor.
behavior registered(executor_pointer self) {
  return {
      [=](spec_atom, const cluster_spec& spec) {
        if (spec.attempt == self->state.cfg.attempt)
          start_command(self, spec);
      },
      [=](stop_atom, const std::string& reason) {
        spdlog::info("executor: stopping {}: {}", to_string(self->state.cfg.task),
                     reason);
        done(self, 143);
      },
      [=](tokens_atom, const job_tokens& x) { take_tokens(self, x); },
      [=](tick_atom) { beat(self); },
      [=](cmd_exited_atom, int32_t, int32_t) {},
      [=](escalate_atom) {},
      [=](reconnect_atom, const caf::actor&) {},
      [=](give_up_atom, const std::string&) {},
  };
}

behavior running(executor_pointer self) {
  return {
      [=](spec_atom, const cluster_spec& spec) { update_spec(self, spec); },
      [=](stop_atom, const std::string& reason) { begin_stopping(self, reason); },
      [=](tokens_atom, const job_tokens& x) { take_tokens(self, x); },
      [=](tick_atom) { beat(self); },
      [=](cmd_exited_atom, int32_t code, int32_t sig) {
        on_command_exit(self, code, sig);
      },
      [=](escalate_atom) {},
      [=](reconnect_atom, const caf::actor&) {},
      [=](give_up_atom, const std::string&) {},
  };
}

// SIGTERM went out; SIGKILL follows after the grace unless the command ends.
behavior stopping(executor_pointer self) {
  return {
      [=](spec_atom, const cluster_spec&) {},
      [=](stop_atom, const std::string&) {},
      [=](tokens_atom, const job_tokens& x) { take_tokens(self, x); },
      [=](tick_atom) { beat(self); },
      [=](cmd_exited_atom, int32_t code, int32_t sig) {
        on_command_exit(self, code, sig);
      },
      [=](escalate_atom) { self->state.runner->signal(SIGKILL); },
      [=](reconnect_atom, const caf::actor&) {},
      [=](give_up_atom, const std::string&) {},
  };
}

// The exit report is out; its answer (or its timeout) ends the executor.
behavior reporting(executor_pointer self) {
  return {
      [=](spec_atom, const cluster_spec&) {},    [=](stop_atom, const std::string&) {},
      [=](tokens_atom, const job_tokens&) {},    [=](tick_atom) { beat(self); },
      [=](cmd_exited_atom, int32_t, int32_t) {}, [=](escalate_atom) {},
      [=](reconnect_atom, const caf::actor&) {}, [=](give_up_atom, const std::string&) {},
  };
}

// Until the registry answers: nothing but a stop can arrive.
behavior registering(executor_pointer self) {
  return {
      [=](spec_atom, const cluster_spec&) {},
      [=](tokens_atom, const job_tokens&) {}, // the ack carries the newest
      [=](stop_atom, const std::string& reason) {
        spdlog::info("executor: stopping {}: {}", to_string(self->state.cfg.task),
                     reason);
        done(self, 143);
      },
      [=](tick_atom) {},
      [=](cmd_exited_atom, int32_t, int32_t) {},
      [=](escalate_atom) {},
      [=](reconnect_atom, const caf::actor&) {},
      [=](give_up_atom, const std::string&) {},
  };
}

// -- start and the AM's loss -------------------------------------------------------

executor_hello make_hello(executor_pointer self) {
  auto& st = self->state;
  executor_hello hello;
  hello.task = st.cfg.task;
  hello.attempt = st.cfg.attempt;
  hello.container_id = st.cfg.container_id;
  hello.host = st.cfg.host;
  hello.port = st.cfg.port;
  hello.secret = st.cfg.secret;
  hello.pid = st.cfg.pid;
  hello.tensorboard_port = st.cfg.tensorboard_port;
  hello.reads_spec_channel = st.cfg.reads_spec_channel;
  return hello;
}

void register_with_am(executor_pointer self) {
  auto& st = self->state;
  executor_actor me = self;
  self->request(st.registry, std::chrono::milliseconds(st.cfg.rpc_timeout_ms),
                register_atom_v, make_hello(self), me)
      .then(
          [=](const registration_ack& ack) {
            auto& st = self->state;
            if (st.finished)
              return;
            st.heartbeat_ms = std::max(ack.heartbeat_interval_ms, 10);
            spdlog::info("executor: {} registered with {}", to_string(st.cfg.task),
                         ack.app_id);
            take_tokens(self, ack.tokens);
            self->become(registered(self));
            if (st.cfg.on_registered)
              st.cfg.on_registered(ack, executor_actor{self});
            beat(self);
          },
          [=](caf::error& err) {
            spdlog::error("executor: registration of {} refused: {}",
                          to_string(self->state.cfg.task), describe(err));
            done(self, 2);
          });
}

// -- the AM's loss and the next AM attempt -------------------------------------------

behavior orphaned(executor_pointer self);

// The wait for the next AM is over: the command dies (its exit, if it had
// one, is the executor's).
void give_up(executor_pointer self, const std::string& why) {
  auto& st = self->state;
  if (!st.orphaned)
    return;
  st.orphaned = false;
  spdlog::error("executor: {}; killing {}", why, to_string(st.cfg.task));
  if (st.command_alive)
    st.runner->signal(SIGKILL); // cmd_exited follows and ends us
  else
    done(self, st.pending_exit ? st.pending_exit->exit_code : 1);
}

bool is_not_ready(const caf::error& err) {
  return err.category() == errc_category &&
         err.code() == static_cast<uint8_t>(errc::not_ready);
}

// Registers again with the next AM attempt's registry: the command runs on
// (or its exit, held meanwhile, is reported now).
void register_again(executor_pointer self, const caf::actor& handle) {
  auto& st = self->state;
  if (!st.orphaned || !handle)
    return;
  auto registry = caf::actor_cast<registry_actor>(handle);
  auto generation = ++st.am_generation;
  st.registry = registry;
  self->monitor(registry);
  auto hello = make_hello(self);
  hello.resumed = true;
  executor_actor me = self;
  self->request(registry, std::chrono::milliseconds(st.cfg.rpc_timeout_ms),
                register_atom_v, std::move(hello), me)
      .then(
          [=](const registration_ack& ack) {
            auto& st = self->state;
            if (st.finished || !st.orphaned || generation != st.am_generation)
              return;
            st.orphaned = false;
            st.am_lost = false;
            st.heartbeat_ms = std::max(ack.heartbeat_interval_ms, 10);
            spdlog::info("executor: {} registered again with the new AM of {}",
                         to_string(st.cfg.task), ack.app_id);
            take_tokens(self, ack.tokens);
            if (st.pending_exit) {
              auto x = *st.pending_exit;
              report_exit(self, std::move(x));
              return;
            }
            self->become(running(self));
            // The new AM's spec channel (tony-executor closes the old one),
            // so a later spec, a restarted task's address, reaches the task.
            if (st.cfg.on_registered)
              st.cfg.on_registered(ack, executor_actor{self});
            beat(self);
          },
          [=](caf::error& err) {
            auto& st = self->state;
            if (st.finished || !st.orphaned || generation != st.am_generation)
              return;
            self->demonitor(registry.address());
            if (is_not_ready(err)) {
              st.cfg.find_am(true); // asked again, a little later
              return;
            }
            give_up(self, "the new ApplicationMaster refused its registration: " +
                              describe(err));
          });
}

// The AM died, and the next AM attempt may adopt the task: it runs on.
behavior orphaned(executor_pointer self) {
  return {
      [=](spec_atom, const cluster_spec&) {},
      [=](stop_atom, const std::string& reason) {
        // Its container is being stopped (the application ended): no AM
        // comes any more.
        auto& st = self->state;
        st.orphaned = false;
        if (st.command_alive)
          begin_stopping(self, reason);
        else
          done(self, st.pending_exit ? st.pending_exit->exit_code : 143);
      },
      [=](tokens_atom, const job_tokens&) {},
      [=](tick_atom) {},
      [=](cmd_exited_atom, int32_t code, int32_t sig) {
        on_command_exit(self, code, sig);
      },
      [=](escalate_atom) {},
      [=](reconnect_atom, const caf::actor& registry) { register_again(self, registry); },
      [=](give_up_atom, const std::string& why) { give_up(self, why); },
  };
}

// The AM's connection dropped. Without AM restarts nobody will stop the
// command or hear its exit, so it dies now; with them, once the command
// started, it runs on while the next AM attempt is looked for.
void on_am_lost(executor_pointer self, const caf::down_msg& msg) {
  auto& st = self->state;
  if (msg.source != st.registry.address() || st.finished)
    return;
  st.am_lost = true;
  if (st.cfg.find_am && st.started && !st.stopping && !st.orphaned) {
    spdlog::warn("executor: lost the AM ({}); {} runs on while the next AM attempt "
                 "is looked for",
                 caf::to_string(msg.reason), to_string(st.cfg.task));
    st.orphaned = true;
    self->become(orphaned(self));
    st.cfg.find_am(false);
    return;
  }
  if (st.orphaned)
    return; // a new AM's connection that dropped: still looking
  spdlog::error("executor: lost the AM ({}); killing the task",
                caf::to_string(msg.reason));
  if (st.command_alive)
    st.runner->signal(SIGKILL); // cmd_exited follows and ends us
  else if (st.reporting && st.pending_exit)
    // Nobody is left to hear the exit; waiting for the report's timeout
    // would keep the container (and, on a lost NodeManager, its processes)
    // for rpc_timeout_ms after the job ended.
    done(self, st.pending_exit->exit_code);
  else if (!st.reporting)
    done(self, 1);
}

} // namespace

caf::actor spawn_executor(caf::actor_system& sys, caf::actor registry,
                          std::unique_ptr<command_runner> runner,
                          std::unique_ptr<file_writer> files, executor_config cfg) {
  // Spawn arguments must be copyable: the effects travel in a shared box.
  struct effects {
    std::unique_ptr<command_runner> runner;
    std::unique_ptr<file_writer> files;
  };
  auto box = std::make_shared<effects>(effects{std::move(runner), std::move(files)});
  auto impl = [](executor_pointer self, caf::actor registry, std::shared_ptr<effects> box,
                 executor_config cfg) -> behavior {
    auto& st = self->state;
    st.cfg = std::move(cfg);
    st.registry = caf::actor_cast<registry_actor>(registry);
    st.runner = std::move(box->runner);
    st.files = std::move(box->files);
    self->monitor(st.registry);
    self->set_down_handler([=](const caf::down_msg& msg) { on_am_lost(self, msg); });
    register_with_am(self);
    return registering(self);
  };
  return caf::actor_cast<caf::actor>(
      sys.spawn(impl, std::move(registry), box, std::move(cfg)));
}

} // namespace tony
