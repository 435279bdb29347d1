#pragma once

// The job lifecycle as a plain value: the task table, the job and task
// states, and every policy of doc/lifecycle.md (tracked, sidecar, attempts,
// restarts, tolerated failures, deadlines, heartbeats). It has no actors, no
// clock and no I/O: the lifecycle monitor feeds it events and carries out the
// commands it returns, and the unit tests do the same with tables.
//
//   fresh ─rm_registered─▶ allocating ─all granted─▶ registering ─barrier─▶ running
//     │                        │                          │                    │
//     │ ask > max              └──── failure, timeout, kill, success ──────────┤
//     ▼                                                                        ▼
//   failed            ending: stop executors ─▶ stop containers ─▶ unregister ─▶ done
//
// A task's failure goes, in this order, to: its restart (restart =
// "on-failure" with restarts left; never the chief), the sidecar rule
// (ignored), the tolerance (a budget of failed tasks; never the chief), and
// else the job: a new attempt while attempts are left, else FAILED.
//
// Time is what the caller says it is: every event comes with `now` in
// milliseconds, and a deadline is a timer the caller arms (arm_timer) and
// reports back (timer_fired).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/job_spec.hpp"
#include "core/waiting.hpp"
#include "messages/types.hpp"

namespace tony::core {

// -- states -----------------------------------------------------------------------

// job_state and task_state (messages/states.hpp): the lifecycle never sets
// job_state::lost, a client's view of an AM that vanished.
using tony::is_final;
using tony::job_state;
using tony::task_state;
using tony::to_string;

// -- events -------------------------------------------------------------------------

using timer_id = uint64_t;

/// The resource manager accepted the AM's registration.
struct rm_registered {
  rm_registration reg;
};

/// The resource manager cannot be reached or ordered the AM to stop.
struct rm_failed {
  std::string what;
  /// The RM no longer knows this AM attempt (attempt not found, AM_SHUTDOWN,
  /// a refused resync): the AM ends at once, without unregistering.
  bool attempt_gone = false;
};

/// Containers the resource manager granted.
struct granted {
  std::vector<container> containers;
};

/// Containers that ended, with their YARN exit statuses.
struct completed {
  std::vector<container_completion> completions;
};

/// A container's start succeeded (launched) or failed.
struct launched {
  std::string container_id;
};

/// A started container runs: its NodeManager finished localizing its
/// resources and runs its launch script (a backend that cannot tell says so
/// at launch). Registration deadlines count from here.
struct container_running {
  std::string container_id;
};

struct launch_failed {
  std::string container_id;
  std::string why;
};

/// An executor registered with the registry (secret checked there).
struct registered {
  executor_hello hello;
};

/// The registry released the barrier: every task of `attempt` has the spec.
struct barrier_released {
  int32_t attempt = 0;
};

struct heartbeat {
  task_id task;
  int32_t attempt = 0;
};

/// An executor reports its command's exit.
struct exited {
  task_exit exit;
};

/// An executor's connection dropped (or, later, its node was lost).
struct executor_lost {
  std::string container_id;
  std::string reason;
};

/// A timer armed by arm_timer went off.
struct timer_fired {
  timer_id id = 0;
};

/// A kill: the user, a signal to the AM, the RM.
struct kill_job {
  std::string reason;
};

/// The answers to stop_containers and unregister (success or not: the end
/// goes on either way).
struct containers_stopped {};
struct unregistered {};

/// What the resource manager last said of the queue's headroom and the
/// cluster's size (core/waiting.hpp says why a gang waits from it).
struct cluster_seen {
  resource headroom;
  int32_t nodes = 0;
};

using event = std::variant<rm_registered, rm_failed, granted, completed, launched,
                           container_running, launch_failed, registered, barrier_released,
                           heartbeat, exited, executor_lost, timer_fired, kill_job,
                           containers_stopped, unregistered, cluster_seen>;

// -- commands -----------------------------------------------------------------------

/// Register the AM with the resource manager (answer: rm_registered).
struct register_am {};

/// Change the outstanding asks of a priority by `ask.count` (may be
/// negative); the ask carries capability, label and placement.
struct ask_containers {
  container_ask ask;
};

/// Withdraw every outstanding ask.
struct cancel_asks {};

/// Give containers back without launching them.
struct release_containers {
  std::vector<std::string> container_ids;
};

/// Never place a container on these node hosts again (YARN's blacklist): a
/// task was lost there, so the node is taken for lost too, or the node's
/// clock keeps it from starting containers.
struct avoid_nodes {
  std::vector<std::string> hosts;
};

/// Start the executor of `task` in `target` (answer: launched / launch_failed).
struct launch {
  task_id task;
  int32_t attempt = 0;
  int32_t restart = 0;
  container target;
};

/// Tell the registry which tasks register for `attempt` (a new barrier).
struct expect_tasks {
  std::vector<task_id> tasks;
  int32_t attempt = 0;
};

/// Tell the registry that `task` registers again (it was restarted): its
/// old registration goes, the new one gets the spec and so do the others.
struct reopen_task {
  task_id task;
  int32_t attempt = 0;
};

/// An adopted container: the task it runs, and the container.
struct adopted_task {
  task_id task;
  std::string container_id;
};

/// This AM took over `attempt` from an earlier AM attempt that died: tell
/// the registry that every task in `tasks` belongs to it, that the cluster
/// spec is out already, and that the executors of `adopted` register again
/// (resumed) from their containers.
struct resume_tasks {
  std::vector<task_id> tasks;
  std::vector<adopted_task> adopted;
  int32_t attempt = 0;
};

/// Supervise the executor that registered from this container.
struct watch_executor {
  std::string container_id;
};

/// Tell an executor to stop its command (SIGTERM, grace, SIGKILL).
struct stop_executor {
  std::string container_id;
  std::string reason;
};

/// Stop containers and forget them (an attempt or a task starts over).
struct discard_containers {
  std::vector<container> containers;
};

/// Stop the job's last containers (answer: containers_stopped).
struct stop_containers {
  std::vector<container> containers;
};

/// Arm a timer that reports timer_fired{id} after `delay_ms`.
struct arm_timer {
  timer_id id = 0;
  int64_t delay_ms = 0;
};

/// Unregister from the resource manager with the outcome (answer:
/// unregistered).
struct unregister {
  final_report report;
};

/// The job is over: answer everyone who waits for it.
struct job_done {};

/// The job's table at this point, for the event log: a failed attempt's
/// last table, before the next attempt replaces it within the same event.
struct publish_status {
  job_status status;
};

/// A line for the AM's log.
struct note {
  enum level_t { info, warn } level = info;
  std::string text;
};

using command =
    std::variant<register_am, ask_containers, cancel_asks, release_containers,
                 avoid_nodes, launch, expect_tasks, reopen_task, resume_tasks,
                 watch_executor, stop_executor, discard_containers, stop_containers,
                 arm_timer, unregister, job_done, publish_status, note>;

using commands = std::vector<command>;

// -- the lifecycle --------------------------------------------------------------------

struct lifecycle_config {
  job_spec job;
  std::string app_id;
  std::string tracking_url;
  /// Nodes and racks named in every ask (YARN node-local placement); empty:
  /// anywhere.
  std::vector<std::string> nodes;
  std::vector<std::string> racks;
  /// The ResourceManager enables placement constraints: capped types go as
  /// SchedulingRequests (the AM log says so, core/placement.hpp).
  bool placement_constraints = false;
  /// The handler is the placement processor: a spread type's strict ask goes
  /// as a SchedulingRequest too (the AM log says so).
  bool placement_processor = false;
  /// Where a container's logs are, for the status (a pure function).
  std::function<std::string(const container&)> log_dir_of;
  /// A failed job waits at most this long before its final status for the
  /// resource manager's reason of a container whose task a signal ended or
  /// whose executor vanished (a NodeManager kills a container over its
  /// memory limit before the RM reports why).
  int64_t container_reason_wait_ms = 3000;
  /// This AM's attempt (YARN's application attempt: 2 after one AM died).
  int32_t am_attempt = 1;
  /// The job as the AM attempt before this one last saved it (YARN kept
  /// its containers): the AM adopts what still runs, or starts over when it
  /// cannot, and says which (job_status::recovery). Empty: the first AM,
  /// or nothing was saved.
  std::optional<job_status> resume;
};

class lifecycle {
public:
  explicit lifecycle(lifecycle_config cfg);

  /// The first commands: register with the RM, arm the job's timeout.
  commands start(int64_t now);

  /// Applies one event; returns what to carry out, in order.
  commands handle(const event& e, int64_t now);

  /// The job as clients and the tracking page see it.
  job_status status() const;

  job_state state() const { return state_; }

  /// True once the job's end is reported (job_done was returned).
  bool done() const { return end_ == end_phase::done; }

  /// True once the job ended because the RM no longer knows this AM
  /// attempt (rm_failed::attempt_gone).
  bool attempt_gone() const { return attempt_gone_; }

  /// True when the attempt is gone and another AM attempt takes the job
  /// over: this attempt's end is not the job's, so it is neither saved for
  /// the next attempt (which would report it as the outcome) nor logged.
  bool leaves_job_to_next_attempt() const {
    return attempt_gone_ && cfg_.am_attempt < cfg_.job.am.max_app_attempts;
  }

  int32_t attempt() const { return attempt_; }

  const lifecycle_config& config() const { return cfg_; }

  /// The plain-words reason of a YARN container exit status (-100 "the node
  /// running it was lost", -104 "killed for exceeding its memory limit", ...).
  static std::string describe_container_exit(int32_t exit_status);

private:
  /// After the outcome is decided: executors stop first (at most the stop
  /// grace), then the containers, then the RM hears the outcome.
  enum class end_phase : uint8_t {
    none,
    stopping_tasks,
    stopping_containers,
    awaiting_reasons, // a failed job waits for its containers' exit statuses
    unregistering,
    done
  };

  enum class timer_kind : uint8_t {
    job_timeout,       // the whole job ran too long
    allocation,        // the attempt's gang was not granted in time
    registration,      // the attempt's executors did not register in time
    stop_grace,        // stopped executors did not report in time
    heartbeat_check,   // periodic: look for silent executors
    restart_backoff,   // a failed task waits before its new container
    task_allocation,   // a restarted task's container was not granted
    task_registration, // a restarted task's executor did not register
    container_reasons, // the wait for the RM's reasons is over
    adoption,          // adopted executors did not register again in time
    execution          // a task's command ran past its type's execution_timeout
  };

  struct timer_purpose {
    timer_kind kind;
    int32_t attempt = 0;
    size_t task = 0; // the task's index in tasks_, for the task_* kinds
  };

  struct task_record {
    task_id id;
    std::string executor; // the container its registered executor came from
    const task_type_spec* type = nullptr;
    task_state state = task_state::requested;
    container c;
    bool has_container = false;
    bool container_done = false;
    std::string host;
    int32_t port = 0;
    int32_t tensorboard_port = 0; // TB_PORT of the TensorBoard it starts
    int32_t exit_code = 0;
    std::string diagnostics;
    int64_t last_heartbeat_ms = 0;
    int64_t started_ms = 0;
    int64_t finished_ms = 0;
    int32_t restarts = 0;
    bool tolerated = false; // failed, and the job goes on without it
    /// A signal ended it or its executor vanished: its container's
    /// completion may still say why (add_container_reason).
    bool awaiting_reason = false;
    /// Its container, adopted from the AM before, runs the task; its
    /// executor has not registered with this AM yet.
    bool adopting = false;
    /// The container the NodeManager last reported running (container_running).
    std::string running_in;

    bool has_executor() const {
      return (state == task_state::registered || state == task_state::running) &&
             !adopting;
    }
  };

  /// The status' TensorBoard fields (job_status::tensorboard_*).
  void describe_tensorboard(job_status& out) const;

  // -- events ----------------------------------------------------------------

  void on(const rm_registered& e);
  void on(const rm_failed& e);
  void end_attempt_gone(const std::string& what);
  void on(const granted& e);
  void on(const completed& e);
  void on(const launched& e);
  void on(const container_running& e);
  void on(const launch_failed& e);
  void on(const registered& e);
  void on(const barrier_released& e);
  void on(const heartbeat& e);
  void on(const exited& e);
  void on(const executor_lost& e);
  void on(const timer_fired& e);
  void on(const kill_job& e);
  void on(const cluster_seen& e) { cluster_ = cluster_view{e.headroom, e.nodes}; }
  void on(const containers_stopped& e);
  void on(const unregistered& e);

  // -- policy ------------------------------------------------------------------

  void start_attempt();
  /// The task table of a new attempt: every task REQUESTED, nothing asked.
  std::vector<task_id> fresh_table();
  /// A later AM attempt: adopt what the AM before left running (the saved
  /// table and the containers the RM kept), or start over, or end with the
  /// outcome the AM before had decided.
  void take_over(const std::vector<container>& previous);
  /// Why the saved job cannot be adopted; empty when it can.
  std::string adoption_problem() const;
  void adopt(const std::vector<container>& previous);
  /// What adopt makes of the saved table (core/adoption.cpp).
  struct adoption;
  /// Restores one task of the saved table: as it ended, asked for again,
  /// adopted in the container the RM kept, or gone (in `a`).
  void adopt_task(const task_status& ts, adoption& a);
  void on_adoption_deadline();
  /// The ask for `count` containers of task `index`'s capability and
  /// priority (a task may have its own), placed on the configured nodes.
  container_ask ask_for(const task_type_spec& type, int32_t index, int32_t count) const;
  void task_failed(task_record& t, task_state state, std::string diag,
                   bool may_restart = true);
  bool restart_allowed(const task_record& t) const;
  void schedule_restart(task_record& t, const std::string& diag);
  void request_again(task_record& t);
  bool tolerate(task_record& t);
  void job_failure(std::string diag);
  void check_success();
  void finish(job_state outcome, std::string diag);
  void maybe_stop_containers();
  void stop_containers_now();
  bool reasons_pending() const;
  void add_container_reason(task_record& t, const container_completion& cc);
  void unregister_now();
  void on_attempt_deadline(timer_kind kind);
  void on_task_deadline(const timer_purpose& p);
  /// Arms the attempt's registration deadline once every task's container
  /// runs or its executor registered (core/registration.cpp).
  void maybe_arm_registration();
  void on_registration_deadline();
  void on_task_registration_deadline(task_record& t);
  void check_heartbeats();
  /// `t`'s command starts now: RUNNING, and its execution timeout armed.
  void start_running(task_record& t);
  /// Arms `t`'s execution timeout, of which `ran_ms` have passed already (an
  /// adopted task's command started under the AM before).
  void arm_execution(const task_record& t, int64_t ran_ms = 0);
  void on_execution_deadline(task_record& t);
  /// A task was lost on `host` (its executor vanished, its node was lost or
  /// its disks failed), or `why` says what else is wrong with the node (its
  /// clock): the node is avoided from now on.
  void avoid_node(const std::string& host, const task_record& t,
                  const std::string& why = {});

  // -- helpers -----------------------------------------------------------------

  task_record* find(const task_id& id);
  task_record* by_container(const std::string& container_id);
  void mark_finished(task_record& t, task_state state, std::string diag);
  void arm(timer_kind kind, int64_t delay_ms, size_t task = 0);
  void disarm(timer_kind kind);
  bool armed(timer_kind kind) const;
  void emit(command c) { out_.push_back(std::move(c)); }
  void say(note::level_t level, std::string text);
  bool is_chief(const task_record& t) const;
  std::vector<container> live_containers() const;
  std::string ending_reason() const;

  // -- state -------------------------------------------------------------------

  lifecycle_config cfg_;
  job_state state_ = job_state::fresh;
  end_phase end_ = end_phase::none;
  std::string diagnostics_;
  std::optional<cluster_view> cluster_; // the RM's last word on room
  int32_t attempt_ = 1;
  int32_t registration_armed_for_ = 0; // the attempt whose deadline is armed
  std::vector<task_record> tasks_;
  std::map<std::string, size_t> by_container_;
  std::map<timer_id, timer_purpose> timers_;
  timer_id next_timer_ = 1;
  std::optional<task_id> chief_;
  /// Failures the job survived, per type (own budget) and against [policy].
  std::map<std::string, int32_t> tolerated_by_type_;
  int32_t tolerated_in_job_ = 0;
  std::vector<std::string> avoided_nodes_;
  int64_t started_ms_ = 0;
  int64_t finished_ms_ = 0;
  std::string recovery_; // job_status::recovery
  bool attempt_gone_ = false;
  // The current call: its time and the commands it produced.
  int64_t now_ = 0;
  commands out_;
};

} // namespace tony::core
