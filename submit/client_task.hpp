#pragma once

// YARN-DTF's client mode (ytf-submit --client): one more task, client:0,
// run on the submitting machine, outside the cluster spec, for interactive
// use. It starts once every task of the job runs (the job is RUNNING), with
// the environment a task would get (DTF_*, CLUSTER_SPEC, the job's [env];
// no port, no TF_CONFIG), in the submitting shell's directory, terminal and
// process group, so it reads the terminal and Ctrl-C reaches it.
//
//   job RUNNING ──▶ client runs ──exits──▶ the job is stopped; ytf-submit
//                        │                 exits 0 if the client did, else 1
//                        └── the job ends first ──▶ the client is stopped;
//                                                   the job's exit code

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include <sys/types.h>

#include "config/job_spec.hpp"
#include "messages/types.hpp"

namespace tony {

class client_task {
public:
  /// `extra_env` goes on top of the task environment (DTF_TASK_SCRIPT as a
  /// local path).
  client_task(std::string command, std::map<std::string, std::string> extra_env,
              job_spec job);
  ~client_task();

  client_task(const client_task&) = delete;
  client_task& operator=(const client_task&) = delete;

  /// Every status the follow loop sees; starts the command the first time
  /// the job is RUNNING.
  void on_status(const job_status& st);

  /// The command's exit code once it ended (127 when it could not start).
  std::optional<int> ended();

  /// Ends a running command: SIGTERM, SIGKILL after `grace`.
  void stop(std::chrono::milliseconds grace);

  /// The environment client:0 gets for the job in `st` (exposed for tests).
  std::map<std::string, std::string> environment(const job_status& st) const;

private:
  std::string command_;
  std::map<std::string, std::string> extra_env_;
  job_spec job_;
  pid_t pid_ = -1;
  std::optional<int> exit_;
};

} // namespace tony
