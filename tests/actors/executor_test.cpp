// Scenarios of the executor actor (actors/executor.hpp) as message scripts:
// the real executor against a scripted registry, a fake command runner and
// a fake file writer. The command "runs" until the test ends it.

#define CAF_SUITE executor

#include <signal.h>

#include "config/task_env.hpp"
#include "runtime/gate/token_seal.hpp"
#include "tests/actors/harness.hpp"

using namespace tony;
using namespace tony::testing;
using std::chrono::milliseconds;

namespace {

// -- fakes -------------------------------------------------------------------------

/// What the fake runner saw; the test ends the command with `finish`.
struct runner_script {
  bool refuse_start = false;
  std::vector<std::string> commands;
  std::vector<std::map<std::string, std::string>> envs;
  std::vector<int> signals;
  std::function<void(command_runner::exit_status)> on_exit;
  std::string stderr_text = "Traceback: boom\n";
  /// What sample() answers while the command runs.
  task_sample usage;

  void finish(int32_t code, int32_t sig = 0) {
    auto f = std::move(on_exit);
    on_exit = nullptr;
    if (f)
      f({code, sig});
  }
};

class fake_runner : public command_runner {
public:
  explicit fake_runner(std::shared_ptr<runner_script> script)
      : script_(std::move(script)) {
    // nop
  }

  tony::expected<void> start(const std::string& command,
                             const std::map<std::string, std::string>& env,
                             const std::string&,
                             std::function<void(exit_status)> on_exit) override {
    if (script_->refuse_start)
      return make_error(errc::infrastructure, "no such file: /bin/sh");
    script_->commands.push_back(command);
    script_->envs.push_back(env);
    script_->on_exit = std::move(on_exit);
    return tony::ok;
  }

  void signal(int sig) override { script_->signals.push_back(sig); }

  std::string stderr_tail(size_t) override { return script_->stderr_text; }

  task_sample sample(int64_t now_ms) override {
    auto x = script_->usage;
    x.time_ms = now_ms;
    return x;
  }

private:
  std::shared_ptr<runner_script> script_;
};

class fake_files : public file_writer {
public:
  explicit fake_files(
      std::shared_ptr<std::map<std::string, std::vector<std::string>>> log,
      std::shared_ptr<std::map<std::string, std::string>> readable = nullptr)
      : log_(std::move(log))
      , readable_(std::move(readable)) {
    // nop
  }

  // What the task wrote (the progress file), as the test says.
  std::optional<std::string> read_small(const std::string& path,
                                        size_t max_bytes) override {
    if (!readable_ || readable_->count(path) == 0)
      return std::nullopt;
    return readable_->at(path).substr(0, max_bytes);
  }

  tony::expected<void> write(const std::string& path,
                             const std::string& content) override {
    (*log_)[path].push_back(content);
    return tony::ok;
  }

  // Logged apart: a test can tell a private file from a plain one.
  tony::expected<void> write_private(const std::string& path,
                                     const std::string& content) override {
    (*log_)["private:" + path].push_back(content);
    return tony::ok;
  }

  tony::expected<void> write_program(const std::string& path,
                                     const std::string& content) override {
    (*log_)["program:" + path].push_back(content);
    return tony::ok;
  }

private:
  std::shared_ptr<std::map<std::string, std::vector<std::string>>> log_;
  std::shared_ptr<std::map<std::string, std::string>> readable_;
};

/// The registry as the executor sees it: answers what the script says.
struct fake_registry_state {
  bool refuse = false;
  /// Answers to resumed registrations, in order (none left: accepted).
  std::vector<errc> resumed_answers;
  job_tokens ack_tokens;         // what the acknowledgement carries
  bool ack_spec_channel = false; // and whether it says "open the spec channel"
  std::vector<executor_hello> hellos;
  std::vector<task_exit> exits;
  int heartbeats = 0;
  std::vector<task_sample> samples;
  /// Exits are taken and never answered (an AM that dies meanwhile).
  bool hold_exits = false;
  std::vector<caf::typed_response_promise<bool>> held;

  static inline const char* name = "fake_registry";
};

registry_actor::behavior_type
fake_registry(registry_actor::stateful_pointer<fake_registry_state> self, bool refuse) {
  self->state.refuse = refuse;
  return {
      [=](register_atom, const executor_hello& hello,
          const executor_actor&) -> caf::result<registration_ack> {
        self->state.hellos.push_back(hello);
        if (self->state.refuse)
          return caf_error(errc::bad_secret, "wrong job secret");
        auto& answers = self->state.resumed_answers;
        if (hello.resumed && !answers.empty()) {
          auto answer = answers.front();
          answers.erase(answers.begin());
          if (answer != errc::none)
            return caf_error(answer, "scripted answer");
        }
        return registration_ack{"application_1_0001", 1000, self->state.ack_tokens,
                                self->state.ack_spec_channel};
      },
      [=](heartbeat_atom, const task_id&, int32_t, const task_sample& sample) {
        ++self->state.heartbeats;
        self->state.samples.push_back(sample);
      },
      [=](exit_atom, const task_exit& x) -> caf::result<bool> {
        self->state.exits.push_back(x);
        if (!self->state.hold_exits)
          return true;
        auto rp = self->make_response_promise<bool>();
        self->state.held.push_back(rp);
        return rp;
      },
      [=](status_atom) -> caf::result<job_status> { return job_status{}; },
      [=](wait_atom) -> caf::result<job_status> { return job_status{}; },
      [=](bye_atom) {},
      [=](expect_atom, const std::vector<task_id>&, int32_t) {},
      [=](reopen_atom, const task_id&, int32_t) {},
      [=](resume_atom, const std::vector<task_id>&, const std::vector<executor_hello>&,
          int32_t) {},
      [=](tokens_atom, const std::string&) {},
  };
}

using fake_registry_impl = registry_actor::stateful_base<fake_registry_state>;

const cluster_map two_workers{{"worker", {"h0:2000", "h1:2001"}}};

struct executor_fixture : test_coordinator_fixture<harness_config> {
  std::shared_ptr<runner_script> runner = std::make_shared<runner_script>();
  std::shared_ptr<std::map<std::string, std::vector<std::string>>> files =
      std::make_shared<std::map<std::string, std::vector<std::string>>>();
  std::shared_ptr<std::map<std::string, std::string>> task_files =
      std::make_shared<std::map<std::string, std::string>>();
  registry_actor registry;
  caf::actor exec;
  executor_config cfg;
  std::optional<int> exit_code;
  bool port_released = false;

  executor_fixture() {
    cfg.task = {"worker", 1};
    cfg.attempt = 1;
    cfg.app_id = "application_1_0001";
    cfg.container_id = "container_1_0001_01_000003";
    cfg.host = "h1";
    cfg.port = 2001;
    cfg.secret = "s3cret";
    cfg.framework = "tensorflow";
    cfg.command = "python3 train.py";
    cfg.work_dir = "/c/src";
    cfg.file_dir = "/c";
    cfg.base_env = {{"PATH", "/usr/bin"}};
    cfg.stop_grace_ms = 3000;
  }

  ~executor_fixture() override {
    if (exec)
      self->send_exit(exec, caf::exit_reason::user_shutdown);
    if (registry)
      self->send_exit(registry, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// Spawns the registry and the executor; the executor sends its register.
  void spawn(bool refuse = false) {
    registry = sys.spawn(fake_registry, refuse);
    cfg.release_port = [this] { port_released = true; };
    cfg.on_done = [this](int code) { exit_code = code; };
    exec = spawn_executor(sys, caf::actor_cast<caf::actor>(registry),
                          std::make_unique<fake_runner>(runner),
                          std::make_unique<fake_files>(files, task_files), cfg);
    // The executor's start: it asks to register.
    CAF_REQUIRE(sched.prioritize(exec));
    sched.run_once();
  }

  fake_registry_state& reg() { return deref<fake_registry_impl>(registry).state; }

  void give_spec(const cluster_map& cluster, int32_t attempt = 1) {
    self->send(exec, spec_atom_v, cluster_spec{attempt, encode_cluster(cluster)});
    sched.run();
  }

  /// The command ends; the executor hears it.
  void command_ends(int32_t code, int32_t sig = 0) {
    runner->finish(code, sig);
    CAF_REQUIRE(sched.prioritize(exec));
    sched.run_once();
  }

  /// Spawns and lets the executor register and start its command.
  void run_command(const cluster_map& cluster = two_workers) {
    spawn();
    sched.run();
    give_spec(cluster);
    CAF_REQUIRE_EQUAL(runner->commands.size(), 1u);
  }

  void advance(caf::timespan d) {
    auto step = std::chrono::milliseconds(50);
    for (caf::timespan done{0}; done < d; done += step) {
      sched.clock().advance_time(std::min<caf::timespan>(step, d - done));
      sched.run();
    }
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(executor_tests, executor_fixture)

CAF_TEST(an executor registers and heartbeats but starts only with the spec) {
  spawn();
  expect((register_atom, executor_hello, executor_actor),
         from(exec).to(registry).with(_, _, _));
  CAF_CHECK_EQUAL(reg().hellos.at(0).container_id, cfg.container_id);
  CAF_CHECK_EQUAL(reg().hellos.at(0).port, 2001);
  expect((registration_ack), from(registry).to(exec).with(_));
  expect((heartbeat_atom, task_id, int32_t, task_sample),
         from(exec).to(registry).with(_, _, 1, _));
  CAF_CHECK(runner->commands.empty());
  CAF_CHECK(!port_released);
  give_spec(two_workers);
  CAF_REQUIRE_EQUAL(runner->commands.size(), 1u);
  CAF_CHECK_EQUAL(runner->commands[0], "python3 train.py");
  CAF_CHECK(port_released);
  auto& env = runner->envs[0];
  CAF_CHECK_EQUAL(env.at("TASK_INDEX"), "1");
  CAF_CHECK_EQUAL(env.at("TONY_RESTART"), "0");
  CAF_CHECK_EQUAL(env.at("TONY_CLUSTER_SPEC_FILE"), "/c/cluster_spec.json");
  CAF_CHECK_EQUAL(env.at("PATH"), "/usr/bin");
  CAF_REQUIRE_EQUAL(files->count("/c/cluster_spec.json"), 1u);
  CAF_CHECK_EQUAL(files->at("/c/cluster_spec.json").at(0),
                  cluster_spec_json(two_workers));
  advance(milliseconds(2100));
  CAF_CHECK_GREATER_OR_EQUAL(reg().heartbeats, 3);
}

CAF_TEST(the executor says it reads the spec channel and hands its ack to its host) {
  cfg.reads_spec_channel = true;
  std::vector<registration_ack> acks;
  caf::actor handed;
  cfg.on_registered = [&](const registration_ack& ack, const executor_actor& me) {
    acks.push_back(ack);
    handed = caf::actor_cast<caf::actor>(me);
  };
  spawn();
  reg().ack_spec_channel = true;
  sched.run();
  CAF_REQUIRE_EQUAL(reg().hellos.size(), 1u);
  CAF_CHECK(reg().hellos[0].reads_spec_channel);
  CAF_REQUIRE_EQUAL(acks.size(), 1u);
  CAF_CHECK(acks[0].spec_channel);
  CAF_CHECK(handed == exec);
  CAF_CHECK(runner->commands.empty());
  // What the host reads from the channel arrives as any spec does.
  give_spec(two_workers);
  CAF_CHECK_EQUAL(runner->commands.size(), 1u);
}

CAF_TEST(heartbeats carry the commands resource use once it runs) {
  runner->usage.rss_bytes = 700 << 20;
  runner->usage.cpu_cores = 1.5f;
  runner->usage.processes = 3;
  runner->usage.gpus = {gpu_sample{1, 87.5f, int64_t{3} << 30, int64_t{16} << 30}};
  spawn();
  sched.run();
  advance(milliseconds(1100)); // heartbeats before the spec carry no sample
  CAF_REQUIRE(!reg().samples.empty());
  CAF_CHECK_EQUAL(reg().samples.back().time_ms, 0);
  give_spec(two_workers);
  reg().samples.clear();
  advance(milliseconds(2100));
  CAF_REQUIRE_GREATER_OR_EQUAL(reg().samples.size(), 2u);
  auto& s = reg().samples.back();
  CAF_CHECK_GREATER(s.time_ms, 0);
  CAF_CHECK_EQUAL(s.rss_bytes, 700 << 20);
  CAF_CHECK_EQUAL(s.cpu_cores, 1.5f);
  CAF_CHECK_EQUAL(s.processes, 3);
  CAF_REQUIRE_EQUAL(s.gpus.size(), 1u);
  CAF_CHECK_EQUAL(s.gpus[0].index, 1);
  CAF_CHECK_EQUAL(s.gpus[0].used_bytes, int64_t{3} << 30);
}

CAF_TEST(heartbeats carry the progress the task writes into its progress file) {
  spawn();
  sched.run();
  advance(milliseconds(1100)); // nothing written: no progress
  CAF_REQUIRE(!reg().samples.empty());
  CAF_CHECK_EQUAL(reg().samples.back().progress, -1.0f);
  give_spec(two_workers);
  CAF_CHECK_EQUAL(runner->envs.at(0).at("TONY_PROGRESS_FILE"), "/c/tony_progress");
  (*task_files)["/c/tony_progress"] = "0.25\n";
  advance(milliseconds(1100));
  CAF_CHECK_EQUAL(reg().samples.back().progress, 0.25f);
  // Half-written or not a number: the last value stays.
  (*task_files)["/c/tony_progress"] = "0.";
  advance(milliseconds(1100));
  CAF_CHECK_EQUAL(reg().samples.back().progress, 0.25f);
  (*task_files)["/c/tony_progress"] = "epoch 3";
  advance(milliseconds(1100));
  CAF_CHECK_EQUAL(reg().samples.back().progress, 0.25f);
  (*task_files)["/c/tony_progress"] = "7";
  advance(milliseconds(1100));
  CAF_CHECK_EQUAL(reg().samples.back().progress, 1.0f);
}

CAF_TEST(the command exit is reported with its stderr and ends the executor) {
  run_command();
  command_ends(3);
  expect((exit_atom, task_exit), from(exec).to(registry).with(_, _));
  CAF_REQUIRE_EQUAL(reg().exits.size(), 1u);
  auto& x = reg().exits[0];
  CAF_CHECK_EQUAL(x.exit_code, 3);
  CAF_CHECK_EQUAL(x.task, cfg.task);
  CAF_CHECK_EQUAL(x.container_id, cfg.container_id);
  CAF_CHECK_EQUAL(x.stderr_tail, "Traceback: boom\n");
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 3);
}

CAF_TEST(a stop sends TERM and KILL only after the grace) {
  run_command();
  self->send(exec, stop_atom_v, std::string{"the job is KILLED"});
  sched.run();
  CAF_CHECK_EQUAL(runner->signals, (std::vector<int>{SIGTERM}));
  advance(milliseconds(2900));
  CAF_CHECK_EQUAL(runner->signals, (std::vector<int>{SIGTERM}));
  advance(milliseconds(200));
  CAF_CHECK_EQUAL(runner->signals, (std::vector<int>{SIGTERM, SIGKILL}));
  command_ends(137, 9);
  expect((exit_atom, task_exit), from(exec).to(registry).with(_, _));
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 137);
}

CAF_TEST(a command that ends within the grace gets no KILL) {
  run_command();
  self->send(exec, stop_atom_v, std::string{"the job is FAILED"});
  sched.run();
  command_ends(143, 15);
  expect((exit_atom, task_exit), from(exec).to(registry).with(_, _));
  sched.run();
  advance(milliseconds(5000));
  CAF_CHECK_EQUAL(runner->signals, (std::vector<int>{SIGTERM}));
}

CAF_TEST(a stop before the spec ends the executor and starts nothing) {
  spawn();
  sched.run();
  self->send(exec, stop_atom_v, std::string{"the job is KILLED"});
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 143);
  CAF_CHECK(runner->commands.empty());
  CAF_CHECK(reg().exits.empty());
}

CAF_TEST(a refused registration ends the executor with 2) {
  spawn(true);
  expect((register_atom, executor_hello, executor_actor),
         from(exec).to(registry).with(_, _, _));
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 2);
  disallow((heartbeat_atom, task_id, int32_t, task_sample),
           from(exec).to(registry).with(_, _, _, _));
  CAF_CHECK(runner->commands.empty());
}

CAF_TEST(losing the AM kills the running command and reports nothing) {
  run_command();
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  CAF_CHECK_EQUAL(runner->signals, (std::vector<int>{SIGKILL}));
  runner->finish(137, 9);
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 137);
  registry = nullptr;
}

// Without AM restarts nobody hears the exit once the AM is gone: the
// executor ends at once instead of waiting out the report's timeout (its
// container would outlive the job by rpc_timeout_ms on a lost node).
CAF_TEST(an AM lost while the exit is reported ends the executor at once) {
  run_command();
  reg().hold_exits = true;
  command_ends(3);
  sched.run();
  CAF_REQUIRE_EQUAL(reg().exits.size(), 1u);
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 3);
  registry = nullptr;
}

// -- AM restarts: the task runs on while the next AM attempt is found -------------------

CAF_TEST(with AM restarts a lost AM leaves the command running and the next is looked for) {
  std::vector<bool> finds;
  cfg.find_am = [&finds](bool again) { finds.push_back(again); };
  run_command();
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  CAF_CHECK(runner->signals.empty()); // the task runs on
  CAF_CHECK_EQUAL(finds, (std::vector<bool>{false}));
  CAF_CHECK(!exit_code);
  advance(milliseconds(5000)); // no heartbeats to nobody, nothing ends
  CAF_CHECK(!exit_code);
  // The next AM's registry: the executor registers again, resumed.
  registry = sys.spawn(fake_registry, false);
  self->send(exec, reconnect_atom::value, caf::actor_cast<caf::actor>(registry));
  sched.run();
  CAF_REQUIRE_EQUAL(reg().hellos.size(), 1u);
  CAF_CHECK(reg().hellos[0].resumed);
  CAF_CHECK_EQUAL(reg().hellos[0].container_id, cfg.container_id);
  CAF_CHECK_EQUAL(reg().hellos[0].port, 2001);
  CAF_CHECK_EQUAL(reg().hellos[0].attempt, 1);
  advance(milliseconds(2100));
  CAF_CHECK_GREATER_OR_EQUAL(reg().heartbeats, 2);
  CAF_CHECK_EQUAL(runner->commands.size(), 1u); // never started again
  // Its exit goes to the new AM.
  command_ends(0);
  sched.run();
  CAF_REQUIRE_EQUAL(reg().exits.size(), 1u);
  CAF_CHECK_EQUAL(exit_code, 0);
}

CAF_TEST(an executor that registers again hands the ack of the next AM to its host) {
  // tony-executor opens the next AM's spec channel with it (executor/executor_host.cpp),
  // so a later spec, a restarted task's new address, still reaches the task.
  cfg.reads_spec_channel = true;
  cfg.find_am = [](bool) {};
  std::vector<registration_ack> acks;
  cfg.on_registered = [&](const registration_ack& ack, const executor_actor&) {
    acks.push_back(ack);
  };
  spawn();
  reg().ack_spec_channel = true;
  sched.run();
  give_spec(two_workers);
  CAF_REQUIRE_EQUAL(runner->commands.size(), 1u);
  CAF_REQUIRE_EQUAL(acks.size(), 1u);
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  registry = sys.spawn(fake_registry, false);
  reg().ack_spec_channel = true;
  self->send(exec, reconnect_atom::value, caf::actor_cast<caf::actor>(registry));
  sched.run();
  CAF_REQUIRE_EQUAL(reg().hellos.size(), 1u);
  CAF_CHECK(reg().hellos[0].resumed);
  CAF_CHECK(reg().hellos[0].reads_spec_channel);
  CAF_REQUIRE_EQUAL(acks.size(), 2u);
  CAF_CHECK(acks[1].spec_channel);
  // A spec from the new AM's channel rewrites the spec file.
  const cluster_map moved{{"worker", {"h0:2000", "moved:2501"}}};
  give_spec(moved);
  CAF_CHECK_EQUAL(runner->commands.size(), 1u); // never started again
  CAF_REQUIRE_EQUAL(files->at("/c/cluster_spec.json").size(), 2u);
  CAF_CHECK_EQUAL(files->at("/c/cluster_spec.json").at(1), cluster_spec_json(moved));
}

CAF_TEST(an exit while no AM runs is held and reported to the next AM) {
  cfg.find_am = [](bool) {};
  run_command();
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  command_ends(3);
  sched.run();
  CAF_CHECK(!exit_code); // held, not reported to nobody
  registry = sys.spawn(fake_registry, false);
  self->send(exec, reconnect_atom::value, caf::actor_cast<caf::actor>(registry));
  sched.run();
  CAF_REQUIRE_EQUAL(reg().hellos.size(), 1u);
  CAF_CHECK(reg().hellos[0].resumed);
  CAF_REQUIRE_EQUAL(reg().exits.size(), 1u);
  CAF_CHECK_EQUAL(reg().exits[0].exit_code, 3);
  CAF_CHECK_EQUAL(reg().exits[0].stderr_tail, "Traceback: boom\n");
  CAF_CHECK_EQUAL(exit_code, 3);
}

CAF_TEST(an AM not ready yet is asked again and a refusal kills the task) {
  std::vector<bool> finds;
  cfg.find_am = [&finds](bool again) { finds.push_back(again); };
  run_command();
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  registry = sys.spawn(fake_registry, false);
  reg().resumed_answers = {errc::not_ready, errc::stale_attempt};
  self->send(exec, reconnect_atom::value, caf::actor_cast<caf::actor>(registry));
  sched.run();
  CAF_CHECK_EQUAL(finds, (std::vector<bool>{false, true}));
  CAF_CHECK(runner->signals.empty());
  self->send(exec, reconnect_atom::value, caf::actor_cast<caf::actor>(registry));
  sched.run();
  CAF_CHECK_EQUAL(runner->signals, (std::vector<int>{SIGKILL}));
  runner->finish(137, 9);
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 137);
}

CAF_TEST(no next AM in time kills the task) {
  cfg.find_am = [](bool) {};
  run_command();
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  self->send(exec, give_up_atom::value, std::string{"no new ApplicationMaster"});
  sched.run();
  CAF_CHECK_EQUAL(runner->signals, (std::vector<int>{SIGKILL}));
  runner->finish(137, 9);
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 137);
  registry = nullptr;
}

CAF_TEST(a stop while no AM runs stops the command and ends the executor) {
  cfg.find_am = [](bool) {};
  run_command();
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  self->send(exec, stop_atom_v, std::string{"received Terminated"});
  sched.run();
  CAF_CHECK_EQUAL(runner->signals, (std::vector<int>{SIGTERM}));
  command_ends(143, 15);
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 143);
  registry = nullptr;
}

CAF_TEST(with AM restarts an AM lost before the spec still ends the executor) {
  cfg.find_am = [](bool) { CAF_FAIL("nothing to adopt before the command runs"); };
  spawn();
  sched.run();
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 1);
  registry = nullptr;
}

CAF_TEST(losing the AM before the spec ends the executor at once) {
  spawn();
  sched.run();
  self->send_exit(registry, caf::exit_reason::kill);
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 1);
  CAF_CHECK(runner->signals.empty());
  registry = nullptr;
}

CAF_TEST(a new spec rewrites the spec file and sends the configured signal) {
  cfg.spec_signal = SIGUSR1;
  run_command();
  cluster_map moved{{"worker", {"h0:2000", "h9:2500"}}};
  give_spec(moved);
  CAF_CHECK_EQUAL(runner->commands.size(), 1u); // not started again
  auto& versions = files->at("/c/cluster_spec.json");
  CAF_REQUIRE_EQUAL(versions.size(), 2u);
  CAF_CHECK_EQUAL(versions[1], cluster_spec_json(moved));
  CAF_CHECK_EQUAL(runner->signals, (std::vector<int>{SIGUSR1}));
}

CAF_TEST(a new spec sends no signal unless the job asks for one) {
  run_command();
  give_spec({{"worker", {"h0:2000", "h9:2500"}}});
  CAF_CHECK_EQUAL(files->at("/c/cluster_spec.json").size(), 2u);
  CAF_CHECK(runner->signals.empty());
}

CAF_TEST(a spec of another attempt is ignored) {
  spawn();
  sched.run();
  give_spec(two_workers, 2);
  CAF_CHECK(runner->commands.empty());
}

CAF_TEST(a command that cannot start is reported as exit 127 with the reason) {
  runner->refuse_start = true;
  spawn();
  sched.run();
  self->send(exec, spec_atom_v, cluster_spec{1, encode_cluster(two_workers)});
  expect((spec_atom, cluster_spec), from(self).to(exec).with(_, _));
  expect((exit_atom, task_exit), from(exec).to(registry).with(_, _));
  CAF_REQUIRE_EQUAL(reg().exits.size(), 1u);
  CAF_CHECK_EQUAL(reg().exits[0].exit_code, 127);
  CAF_CHECK(reg().exits[0].stderr_tail.find("cannot start the command") !=
            std::string::npos);
  sched.run();
  CAF_CHECK_EQUAL(exit_code, 127);
}

CAF_TEST(an elastic task runs its command as a node of the torchrun rendezvous) {
  cfg.framework = "pytorch";
  cfg.elastic_min = 2;
  cfg.elastic_max = 3;
  cfg.elastic_restarts = 6;
  run_command(
      {{"worker", {"h0:2000", "h1:2001", "h2:2002"}}, {"rendezvous", {"h5:2900"}}});
  auto& cmd = runner->commands[0];
  CAF_MESSAGE("command: " << cmd);
  CAF_CHECK_EQUAL(cmd.rfind("exec python3 -m torch.distributed.run ", 0), 0u);
  for (auto part : {"--nnodes=2:3", "--rdzv_backend=c10d", "--rdzv_endpoint=h5:2900",
                    "--rdzv_id=application_1_0001-1", "--max_restarts=6",
                    "--no_python /bin/sh -c 'python3 train.py'"})
    CAF_CHECK(cmd.find(part) != std::string::npos);
  auto& env = runner->envs[0];
  CAF_CHECK_EQUAL(env.count("RANK"), 0u); // torchrun ranks the nodes
  CAF_CHECK_EQUAL(env.at("TONY_RDZV_ENDPOINT"), "h5:2900");
}

CAF_TEST(a chief that starts tensorboard finds tonys guarded command first on its path) {
  cfg.task = {"chief", 0};
  cfg.tensorboard_port = 41234;
  cfg.tensorboard_token = "t0k3n";
  run_command({{"chief", {"h0:2000"}}, {"worker", {"h1:2001"}}});
  auto& env = runner->envs[0];
  CAF_CHECK_EQUAL(env.at("PATH"), "/c/tony-bin:/usr/bin");
  CAF_CHECK_EQUAL(env.at("TB_PORT"), "41234");
  CAF_CHECK_EQUAL(env.at("TONY_TENSORBOARD_TOKEN"), "t0k3n");
  CAF_REQUIRE_EQUAL(files->count("program:/c/tony-bin/tensorboard"), 1u);
  CAF_CHECK_EQUAL(files->at("program:/c/tony-bin/tensorboard").at(0),
                  tensorboard_command_shim());
  // A TensorBoard it starts in its own Python is guarded by tony's
  // sitecustomize, first on PYTHONPATH.
  CAF_CHECK_EQUAL(env.at("PYTHONPATH"), "/c/tony-py");
  CAF_REQUIRE_EQUAL(files->count("program:/c/tony-py/sitecustomize.py"), 1u);
  CAF_CHECK_EQUAL(files->at("program:/c/tony-py/sitecustomize.py").at(0),
                  tensorboard_site_hook());
}

CAF_TEST(the chiefs own pythonpath stays after tonys sitecustomize) {
  cfg.task = {"chief", 0};
  cfg.tensorboard_port = 41234;
  cfg.tensorboard_token = "t0k3n";
  cfg.base_env["PYTHONPATH"] = "/c/src:/opt/lib";
  run_command({{"chief", {"h0:2000"}}, {"worker", {"h1:2001"}}});
  CAF_CHECK_EQUAL(runner->envs[0].at("PYTHONPATH"), "/c/tony-py:/c/src:/opt/lib");
}

CAF_TEST(a worker gets no tensorboard command of tonys) {
  cfg.tensorboard_token = "t0k3n";
  run_command();
  CAF_CHECK_EQUAL(runner->envs[0].at("PATH"), "/usr/bin");
  CAF_CHECK_EQUAL(runner->envs[0].count("PYTHONPATH"), 0u);
  for (auto& [path, writes] : *files)
    CAF_CHECK(path.rfind("program:", 0) != 0);
}

CAF_TEST(tokens in the registration ack become the task token file written privately) {
  cfg.token_file = "/c/.tony-tokens";
  spawn();
  reg().ack_tokens =
      job_tokens{2, gate::seal_tokens(cfg.secret, cfg.app_id, 2, "credentials v2")};
  sched.run();
  CAF_REQUIRE_EQUAL(files->count("private:/c/.tony-tokens"), 1u);
  CAF_CHECK_EQUAL(files->at("private:/c/.tony-tokens"),
                  (std::vector<std::string>{"credentials v2"}));
  CAF_CHECK_EQUAL(files->count("/c/.tony-tokens"), 0u); // never a plain write
}

CAF_TEST(newer tokens rewrite the token file and older or foreign ones are ignored) {
  cfg.token_file = "/c/.tony-tokens";
  run_command();
  auto send = [&](int32_t generation, const std::string& secret,
                  const std::string& text) {
    self->send(
        exec, tokens_atom_v,
        job_tokens{generation, gate::seal_tokens(secret, cfg.app_id, generation, text)});
    sched.run();
  };
  send(1, cfg.secret, "v1");
  send(3, cfg.secret, "v3");
  send(2, cfg.secret, "v2");                 // older than the file's
  send(4, "another job's secret", "forged"); // does not open
  self->send(exec, tokens_atom_v, job_tokens{5, "garbage"});
  sched.run();
  CAF_CHECK_EQUAL(files->at("private:/c/.tony-tokens"),
                  (std::vector<std::string>{"v1", "v3"}));
  send(4, cfg.secret, "v4"); // still newer than 3
  CAF_CHECK_EQUAL(files->at("private:/c/.tony-tokens").back(), "v4");
  CAF_CHECK_EQUAL(runner->commands.size(), 1u); // the task runs on
}

CAF_TEST(without a token file the executor ignores tokens) {
  run_command();
  self->send(exec, tokens_atom_v,
             job_tokens{1, gate::seal_tokens(cfg.secret, cfg.app_id, 1, "v1")});
  sched.run();
  for (auto& [path, writes] : *files)
    CAF_CHECK(path.rfind("private:", 0) != 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
