#pragma once

// The executor's effects on the world, each behind an interface so the
// executor actor runs against fakes in the actor harness (LevelDB's Env, in
// small): the task's command (command_runner) and the files it writes for
// the task (file_writer). The process-based runner and the real file writer
// are the product's.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "messages/error.hpp"
#include "messages/types.hpp"

namespace tony {

/// Runs the task's command.
class command_runner {
public:
  virtual ~command_runner();

  struct exit_status {
    int32_t exit_code = 0;
    int32_t signal = 0;
  };

  /// Starts `command` under /bin/sh -c. On success `on_exit` is called once,
  /// from any thread, when the command (its main process) has ended and its
  /// group is cleaned up; on failure it is never called.
  virtual expected<void> start(const std::string& command,
                               const std::map<std::string, std::string>& env,
                               const std::string& cwd,
                               std::function<void(exit_status)> on_exit) = 0;

  /// Sends `sig` to the command's whole process group; nothing once it ended.
  virtual void signal(int sig) = 0;

  /// The last bytes of the command's stderr.
  virtual std::string stderr_tail(size_t max_bytes) = 0;

  /// What the command's process tree uses now (runtime/metrics), stamped
  /// `now_ms`; an empty sample (time_ms 0) when it does not run or the
  /// runner cannot measure.
  virtual task_sample sample(int64_t now_ms);
};

/// The process-based runner: stdout/stderr to files, own process group, a
/// guard that kills the group if the executor dies. `guard_program` is
/// tony-guard's path; empty or missing falls back to a shell.
std::unique_ptr<command_runner> make_process_runner(std::string stdout_path,
                                                    std::string stderr_path,
                                                    std::string guard_program = {});

/// Writes the files a task reads (values too large for the environment, the
/// cluster spec file), and reads the one it writes for the executor (its
/// progress file).
class file_writer {
public:
  virtual ~file_writer();

  /// Replaces the file at `path` with `content` at once: a reader sees the
  /// old content or the new one, never a part (written aside, renamed).
  virtual expected<void> write(const std::string& path, const std::string& content) = 0;

  /// The same for a file only its owner may read, 0600 from the moment it
  /// exists: the task's Hadoop token file.
  virtual expected<void> write_private(const std::string& path,
                                       const std::string& content) = 0;

  /// The same for a program the task runs, 0700, in a directory made (0700)
  /// when missing: the chief's `tensorboard` command.
  virtual expected<void> write_program(const std::string& path,
                                       const std::string& content) = 0;

  /// The first `max_bytes` of the file at `path`, or nothing when there is
  /// no such file (or it cannot be read). The default reads nothing.
  virtual std::optional<std::string> read_small(const std::string& path,
                                                size_t max_bytes);
};

/// The real filesystem.
std::unique_ptr<file_writer> make_file_writer();

} // namespace tony
