#pragma once

// The executor: one per container, a remote actor of the AM's registry.
//
//   start ──register──▶ registered ──cluster spec──▶ running ──exit──▶ reporting ──▶ done
//     │                    │                            │ stop / AM lost
//     └─ rejected ─▶ done  └─ stop / AM lost ─▶ done    └──▶ stopping (TERM, grace, KILL)
//
// It holds the task's port until the command starts, heartbeats while
// registered, renders the task environment from the cluster spec, runs the
// command in a process group of its own, reports its exit, and kills it when
// told to or when the AM is gone.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/types.hpp"

namespace tony {

/// What the AM may send an executor.
using executor_actor = caf::typed_actor<caf::reacts_to<spec_atom, cluster_spec>,
                                        caf::reacts_to<stop_atom, std::string>>;

/// Runs the task's command; the executor's only effect on the world besides
/// messages. The real one is process-based (runtime/process); tests inject
/// their own.
class command_runner {
public:
  virtual ~command_runner();

  struct exit_status {
    int32_t exit_code = 0;
    int32_t signal = 0;
  };

  /// Starts `command` under /bin/sh -c. `on_exit` is called once, from any
  /// thread, when the command (its main process) has ended and its group is
  /// cleaned up.
  virtual caf::expected<void> start(const std::string& command,
                                    const std::map<std::string, std::string>& env,
                                    const std::string& cwd,
                                    std::function<void(exit_status)> on_exit) = 0;

  /// Sends `sig` to the command's whole process group.
  virtual void signal(int sig) = 0;

  /// The last bytes of the command's stderr.
  virtual std::string stderr_tail(size_t max_bytes) = 0;
};

/// The process-based runner: stdout/stderr to files, own process group, a
/// guard that kills the group if the executor dies. `guard_program` is
/// tony-guard's path; empty or missing falls back to a shell.
std::unique_ptr<command_runner> make_process_runner(std::string stdout_path,
                                                    std::string stderr_path,
                                                    std::string guard_program = {});

struct executor_config {
  task_id task;
  int32_t attempt = 0;
  std::string app_id;
  std::string container_id;
  std::string host; // the host peers reach this task at
  int32_t port = 0; // the reserved task port
  std::string secret;
  std::string framework;
  std::string command;
  std::string work_dir;
  /// Where values too large for the environment are written (absolute).
  std::string file_dir;
  /// Environment the command starts from (the container's, secret removed).
  std::map<std::string, std::string> base_env;
  int64_t stop_grace_ms = 3000;
  int64_t rpc_timeout_ms = 10000;
  /// When set, the command cannot run (e.g. its interpreter is missing):
  /// instead of starting it the executor reports exit 127 with this text.
  std::string start_error;
  /// Frees the reserved port just before the command starts.
  std::function<void()> release_port;
  /// Receives the executor's exit code when it is done.
  std::function<void(int)> on_done;
};

/// Spawns an executor that registers with `registry` (a caf::actor handle to
/// the AM's registry, typically a remote proxy).
caf::actor spawn_executor(caf::actor_system& sys, caf::actor registry,
                          std::unique_ptr<command_runner> runner, executor_config cfg);

} // namespace tony
