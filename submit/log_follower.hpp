#pragma once

// tony-submit --follow TASK: the task's stdout and stderr as they grow,
// printed line by line as "[worker:0] ..." and "[worker:0 stderr] ...".
// The follower reads through a reader the backend gives (the container's
// files on the local backend, the NodeManager's web service on YARN) from
// where it left off, holds a partial last line until its newline comes, and
// starts over (saying so) when the task moves to a new container.
//
// Which task: the one named, or — `--follow` on a terminal by default —
// the chief: chief:0, else master:0, else worker:0, else the first task.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony {

class log_follower {
public:
  /// The bytes of `file` ("stdout", "stderr") of `task` from `offset` on,
  /// at most about `max_bytes`; nullopt when it is not there (yet).
  using reader = std::function<std::optional<std::string>(
      const task_status& task, const std::string& file, int64_t offset,
      size_t max_bytes)>;

  /// `task`: "worker:1", or empty for the chief.
  log_follower(std::string task, reader read);

  /// The lines that came since the last call.
  std::vector<std::string> poll(const job_status& st);

  /// poll(), then whatever is left of a last line without its newline.
  std::vector<std::string> drain(const job_status& st);

  /// The task followed ("" until the status names it).
  const std::string& task() const { return chosen_; }

private:
  struct stream {
    std::string file;
    int64_t offset = 0;
    std::string partial;
  };

  void read(const task_status& t, stream& s, std::vector<std::string>& out);

  std::string wanted_;
  std::string chosen_;
  reader read_;
  std::string container_;
  std::vector<stream> streams_;
  bool missing_said_ = false;
};

/// The task `--follow` picks by default: chief:0, master:0, worker:0, or
/// the first task; empty when the status has no tasks yet.
std::string default_follow_task(const job_status& st);

/// A reader of the local backend's container files (log_dir is a path).
log_follower::reader local_log_reader();

/// The file's bytes from a NodeManager's /ws/v1/node/containerlogs answer,
/// which wraps them ("LogType:stdout", "LogLength:N", "LogContents:", the
/// N bytes, "End of LogType:..."); an answer without that envelope as it is.
std::string node_manager_log_contents(const std::string& body);

} // namespace tony
