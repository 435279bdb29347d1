#pragma once

// The executor: one per container, a remote actor of the AM's registry. Each
// phase of its protocol is a behaviour of its own:
//
//   registering ──ack──▶ registered ──cluster spec──▶ running ──exit──▶ reporting ──▶
//   done
//       │                    │                          │  ▲ spec: rewrite the spec
//       │ refused            │ stop / AM lost           │  │ file (+ signal)
//       ▼                    ▼                     stop ▼  │
//      done                 done              stopping (TERM, grace, KILL) ─exit─▶
//      reporting
//
// It holds the task's port until the command starts, heartbeats while
// registered, renders the task environment from the cluster spec, runs the
// command in a process group of its own, reports its exit, and kills it when
// told to or when the AM is gone (then it reports nothing: nobody listens).
// With AM restarts, a lost AM is waited for instead: the command keeps
// running (`orphaned`), and the executor registers again with the next AM
// attempt, reporting an exit that happened meanwhile (doc/operations.md
// "AM restart").
//
// Its effects on the world — the command and the files it writes — come in
// through interfaces (runtime/process/command_runner.hpp); its time is the
// actor clock, so the actor harness drives it with fakes.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/types.hpp"
#include "runtime/launch_context.hpp"
#include "runtime/process/command_runner.hpp"

namespace tony {

/// What the AM may send an executor: the cluster spec (the first starts the
/// command, a later one is an update: a restarted task moved), stop, and
/// the job's newest delegation tokens (sealed; the executor rewrites the
/// task's token file).
using executor_actor = caf::typed_actor<caf::reacts_to<spec_atom, cluster_spec>,
                                        caf::reacts_to<stop_atom, std::string>,
                                        caf::reacts_to<tokens_atom, job_tokens>>;

struct executor_config {
  task_id task;
  int32_t attempt = 0;
  int32_t restart = 0; // the task's run within the attempt (0: the first)
  std::string app_id;
  std::string container_id;
  std::string host; // the host peers reach this task at
  int32_t port = 0; // the reserved task port
  int32_t pid = 0;  // this process, for the AM's log
  std::string secret;
  std::string framework;
  std::string command;
  std::string work_dir;
  /// Where the cluster spec file and values too large for the environment
  /// are written (absolute).
  std::string file_dir;
  /// Environment the command starts from (the container's, secret removed).
  std::map<std::string, std::string> base_env;
  int64_t stop_grace_ms = 3000;
  int64_t rpc_timeout_ms = 10000;
  /// When set, the command cannot run (e.g. its interpreter is missing):
  /// instead of starting it the executor reports exit 127 with this text.
  std::string start_error;
  /// The task's Hadoop token file (HADOOP_TOKEN_FILE_LOCATION in its
  /// environment): rewritten, whole and 0600, when the AM sends newer
  /// tokens. Empty: the job has no tokens (the local backend).
  std::string token_file;
  /// Sent to the command's group when the cluster spec changes (0: none).
  int32_t spec_signal = 0;
  /// Elastic PyTorch: the command runs under torchrun's c10d rendezvous
  /// (render_task_command, config/task_env.hpp); max 0: a fixed world.
  int32_t elastic_min = 0;
  int32_t elastic_max = 0;
  int32_t elastic_restarts = 0;
  /// Horovod: "host:port" of the AM's rendezvous and this attempt's token.
  std::string horovod_rendezvous;
  std::string horovod_token;
  /// The port reserved for the TensorBoard the task starts (TB_PORT; 0: none).
  int32_t tensorboard_port = 0;
  /// The job's TensorBoard token (gate::tensorboard_token): given to the
  /// task that serves TensorBoard (the `tensorboard` type, or the chief
  /// with TB_PORT).
  std::string tensorboard_token;
  /// The local backend's container for the command (image empty: none) and
  /// the program that runs it (docker or podman).
  docker_contract docker;
  std::string container_runtime;
  /// Whether the executor's host can read cluster specs from the AM's spec
  /// channel (tony-executor can; the registry then sends none over BASP).
  bool reads_spec_channel = false;
  /// Called with each accepted registration's acknowledgement and the
  /// executor's own handle, on the executor's thread (keep it short), also
  /// when it registered again with a next AM attempt: tony-executor opens
  /// that AM's spec channel there when the ack says so (closing the one
  /// before), and sends the executor every spec it reads as `spec_atom`.
  std::function<void(const registration_ack&, const executor_actor&)> on_registered;
  /// Frees the reserved ports just before the command starts.
  std::function<void()> release_port;
  /// Receives the executor's exit code when it is done.
  std::function<void(int)> on_done;
  /// AM restarts ([am] max_app_attempts >= 2): when the AM's connection
  /// drops after the command started, the executor keeps the command
  /// running (and its exit, should it end) and calls `find_am`; whoever
  /// looks for the next AM attempt (executor/executor_host.cpp) answers with
  /// `reconnect_atom` and the new registry, and the executor registers again
  /// (executor_hello::resumed), or with `give_up_atom` and why, and the
  /// executor kills the command and ends. After a `not_ready` answer it
  /// calls `find_am(true)` (the same AM, again), after a loss `find_am(false)`.
  /// Empty: the command dies with its AM.
  std::function<void(bool again)> find_am;
};

/// Sent to an executor by the process that runs it: the next AM attempt's
/// registry (a caf::actor), or the end of the wait for one.
using reconnect_atom = caf::atom_constant<caf::atom("reconnect")>;
using give_up_atom = caf::atom_constant<caf::atom("give_up")>;

/// Spawns an executor that registers with `registry` (a caf::actor handle to
/// the AM's registry, typically a remote proxy).
caf::actor spawn_executor(caf::actor_system& sys, caf::actor registry,
                          std::unique_ptr<command_runner> runner,
                          std::unique_ptr<file_writer> files, executor_config cfg);

} // namespace tony
