#pragma once

// tony-submit's work after the job is loaded: start the job on its backend,
// follow it, and turn its outcome into the exit code.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "config/job_spec.hpp"
#include "submit/client_task.hpp"
#include "submit/log_follower.hpp"

namespace tony {

class event_output;

/// tony-submit's exit codes (doc/operations.md).
enum submit_exit : int {
  exit_succeeded = 0,
  exit_failed = 1, // the job FAILED or was KILLED (also after Ctrl-C)
  exit_usage = 2,  // bad command line or job.toml
  exit_infra = 3,  // the AM could not start, the RM is unreachable, ...
};

struct submit_options {
  bool detach = false;
  bool quiet = false;
  std::string hadoop_conf; // --hadoop-conf, else HADOOP_CONF_DIR, else [cluster]
  /// --principal / --keytab: override [security] of job.toml (and are the
  /// only source for --kill and --status). Used when the cluster's
  /// core-site.xml sets hadoop.security.authentication=kerberos.
  std::string principal;
  std::string keytab;
  /// --proxy-user, else HADOOP_PROXY_USER: the user the job is submitted
  /// for, as Hadoop's proxy users (doc/operations.md "Proxy users"). YARN
  /// only.
  std::string proxy_user;
  /// The directory holding tony-am and tony-executor (tony-submit's own).
  std::string bin_dir;
  /// Set (to the signal number) when the user interrupts tony-submit. The
  /// watcher that sets it must exist before any thread starts (main).
  const std::atomic<int>* interrupted = nullptr;
  /// --output json: where the job's events go (event_output.hpp).
  event_output* events = nullptr;
  /// --backend for --status/--kill/--logs: "local", "yarn" or empty (find out).
  std::string backend;
  /// --jobs-dir: the local backend's jobs dir for --status/--kill/--logs.
  std::string jobs_dir;
  /// ytf-submit --client: the local client:0 (submit/client_task.hpp).
  client_task* client = nullptr;
  /// --follow TASK: stream that task's stdout and stderr (submit/log_follower);
  /// "none" (--no-follow) never; empty: the chief when stdout is a terminal.
  std::string follow;
};

/// The follower --follow asks for (reading with `read`), or nullptr.
std::unique_ptr<log_follower> make_follower(const submit_options& opts,
                                            log_follower::reader read);

/// What --logs prints.
struct logs_request {
  std::string task; // "worker:1", or empty: every task
  std::string file; // a file of the task's log dir, or empty: stdout and stderr
};

/// What the follow loops do about the client: feed it statuses, and stop
/// the job when it ended (then its exit decides tony-submit's).
struct client_hook {
  client_task* client = nullptr;

  void on_status(const job_status& st) const;
  /// A line for the terminal once the client ended before the job, else empty.
  std::string stop_reason() const;
  /// tony-submit's exit code: the client's when it ended first, else
  /// `job_code` (the client is stopped then).
  int exit_code(int job_code, bool stopped_for_client,
                std::chrono::milliseconds grace) const;
};

/// Runs `job` on the local backend and follows it to the end.
int submit_local(const job_spec& job, const submit_options& opts);

/// Submits `job` to YARN and follows it to the end (doc/operations.md).
int submit_yarn(const job_spec& job, const submit_options& opts);

/// tony-submit --kill APP_ID: kills a YARN application.
int kill_yarn_application(const std::string& app_id, const submit_options& opts);

/// tony-submit --status APP_ID: prints a YARN application's state and its
/// tasks (from the AM while it runs, from the job's event log afterwards);
/// with `json`, as one JSON object (doc/operations.md).
int status_yarn_application(const std::string& app_id, const submit_options& opts,
                            bool json = false);

/// tony-submit --logs APP_ID: task logs of a YARN application, read from the
/// NodeManagers' web services.
int logs_yarn_application(const std::string& app_id, const submit_options& opts,
                          const logs_request& req);

/// True if a Hadoop configuration directory is known to `opts`
/// (--hadoop-conf, HADOOP_CONF_DIR, YARN_CONF_DIR or the hadoop command's;
/// submit/backend_choice.hpp).
bool hadoop_conf_known(const submit_options& opts);

} // namespace tony
