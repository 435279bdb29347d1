#pragma once

// Starting, signalling and reaping processes: the only place tony calls
// fork/exec. Used by the executor (the user command) and the local backend
// (containers).
//
// Process-tree cleanup is the point of this file. A task's command runs in a
// process group of its own so it can be signalled as a whole. With
// `guard_group`, a tiny guard process joins that group and blocks reading a
// pipe whose write end only the spawning process holds; when the spawning
// process dies for any reason (even SIGKILL) the pipe closes and the guard
// kills the whole group, so no command outlives its executor.

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "messages/error.hpp"

namespace tony::process {

struct spawn_options {
  /// argv[0] is looked up in PATH when it has no slash.
  std::vector<std::string> argv;
  /// The complete environment of the child.
  std::map<std::string, std::string> env;
  /// Working directory; empty keeps the parent's.
  std::string cwd;
  /// Files for stdout and stderr (created or truncated); empty keeps the
  /// parent's. The same path for both shares one file.
  std::string stdout_path;
  std::string stderr_path;
  /// setsid(): the child leads a new session (a container).
  bool new_session = false;
  /// setpgid(0, 0): the child leads a new process group (a task command).
  bool new_process_group = false;
  /// The child gets SIGKILL when the spawning thread's process dies.
  bool die_with_parent = false;
  /// Start a guard that kills the child's group when this process dies.
  /// Requires new_process_group.
  bool guard_group = false;
  /// The guard's program (tony-guard, run with no arguments); empty, or one
  /// that cannot be started, falls back to /bin/sh.
  std::string guard_program;
  /// Start the child with SIGTERM, SIGINT and SIGHUP blocked, for a child
  /// that takes them with a signal_watcher: one that arrives while the child
  /// is still starting then waits for the watcher instead of killing it.
  bool block_stop_signals = false;
};

struct child {
  pid_t pid = -1;
  pid_t pgid = -1;
  pid_t guard_pid = -1;
  int guard_fd = -1; // write end held by the parent; closing it fires the guard
};

/// How a process ended. exit_code is the exit status, or 128 + signal.
struct exit_info {
  int exit_code = 0;
  int signal = 0;
};

/// Starts a child. The error says what could not be started and why
/// (e.g. "cannot execute 'python3': No such file or directory").
expected<child> spawn(const spawn_options& opts);

/// Blocks until `pid` exits; retries on EINTR.
exit_info wait(pid_t pid);

/// Returns the exit of `pid` if it already ended, without blocking.
std::optional<exit_info> try_wait(pid_t pid);

/// Sends `sig` to process group `pgid`. Returns false if it no longer exists.
bool kill_group(pid_t pgid, int sig);

/// Pids of every live process whose session id is `sid` (read from /proc).
std::vector<pid_t> session_members(pid_t sid);

/// Sends `sig` to every process of session `sid`; returns how many.
int kill_session(pid_t sid, int sig);

/// Disarms the guard of `c` after the group was cleaned up (closes the pipe
/// and reaps the guard).
void release_guard(child& c);

/// The last `max_bytes` of a file, starting at a line boundary when possible.
std::string tail_file(const std::string& path, size_t max_bytes);

/// The process environment as a map.
std::map<std::string, std::string> current_environment();

/// Absolute path of the running executable.
std::string self_executable();

} // namespace tony::process
