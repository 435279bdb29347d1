#pragma once

// The actor harness: the AM's real actors (lifecycle_monitor, registry,
// rm_heartbeater, container_launcher, wired by spawn_am) wired to scripted
// fakes of the resource manager, the node managers and the executors, on
// CAF's deterministic test coordinator. Time only moves when a test calls
// advance(); nothing sleeps, no process starts. doc/testing.md explains how
// to write a scenario.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include "actors/actor_types.hpp"
#include "actors/am_actors.hpp"
#include "actors/executor.hpp"
#include "actors/lifecycle_monitor.hpp"
#include "actors/registry.hpp"
#include "config/job_spec.hpp"
#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/launch_context.hpp"
#include "runtime/nm_client.hpp"
#include "runtime/rm_client.hpp"
#include "tests/state_names.hpp"

namespace tony::testing {

// -- fake resource manager -------------------------------------------------------

/// Records every call. Grants only what the test queued with grant(), or,
/// with auto_grant, everything outstanding at each allocate.
struct fake_rm_state {
  rm_registration registration{{8192, 8, 4}, {0, 0, 0}, "default"};
  bool refuse_registration = false;
  bool fail_allocate = false;
  /// The next allocate is answered as by an RM that restarted or failed
  /// over: it forgot the asks and the AM registered again (resync).
  bool lose_registration = false;
  /// Every allocate fails as for an attempt the RM no longer knows
  /// (ApplicationAttemptNotFoundException).
  bool attempt_not_found = false;
  /// The next allocate response carries AMCommand AM_SHUTDOWN.
  bool order_shutdown = false;
  bool auto_grant = true;
  /// The next this many unregister calls fail as if no RM answered.
  int unanswered_finishes = 0;
  /// Unregister fails as for an attempt the RM no longer knows.
  bool finish_attempt_not_found = false;
  int finish_calls = 0;
  std::vector<am_registration> registrations;
  std::vector<allocate_request> allocations;
  std::vector<final_report> finishes;
  std::map<int32_t, container_ask> outstanding; // the RM's view, by priority
  std::vector<container> to_grant;
  std::vector<container_completion> to_complete;
  std::set<std::string> released;
  int64_t next_container = 2;

  container make_container(int32_t priority, const resource& cap) {
    container c;
    c.id = "container_1_0001_01_" + std::to_string(next_container++);
    c.host = "node" + std::to_string(next_container % 3) + ".test";
    c.port = 45454;
    c.priority = priority;
    c.capability = cap;
    return c;
  }

  static inline const char* name = "fake_rm";
};

using fake_rm_impl = rm_client_actor::stateful_base<fake_rm_state>;

// Spawn arguments are the fakes' initial script. (CAF 0.17 dereferences a
// null pointer when a function-based actor is spawned without arguments,
// which UBSan rejects, so every fake takes at least one.)
rm_client_actor::behavior_type
fake_rm(rm_client_actor::stateful_pointer<fake_rm_state> self,
        rm_registration registration);

// -- fake node managers ------------------------------------------------------------

struct fake_nm_state {
  std::vector<launch_spec> started;
  std::vector<container> stopped;
  std::set<std::string> fail_start; // container ids whose start fails
  /// What `status` answers of a container, one word per call (the last
  /// word stays); a container not named here is in `others`.
  std::map<std::string, std::vector<std::string>> phases;
  std::string others = "running";
  /// Containers whose status calls fail (the node manager cannot be reached).
  std::set<std::string> fail_status;
  /// The container ids of every status call, in order.
  std::vector<std::vector<std::string>> status_calls;

  static inline const char* name = "fake_nm";
};

using fake_nm_impl = nm_client_actor::stateful_base<fake_nm_state>;

nm_client_actor::behavior_type
fake_nm(nm_client_actor::stateful_pointer<fake_nm_state> self,
        std::set<std::string> fail_start);

// -- fake executor ------------------------------------------------------------------

struct fake_executor_state {
  task_id task;
  std::vector<cluster_spec> specs;
  std::vector<std::string> stops;
  std::vector<job_tokens> tokens;

  static inline const char* name = "fake_executor";
};

using fake_executor_impl = executor_actor::stateful_base<fake_executor_state>;

executor_actor::behavior_type
fake_executor(executor_actor::stateful_pointer<fake_executor_state> self, task_id task);

// -- the fixture ------------------------------------------------------------------------

struct harness_config : caf::actor_system_config {
  harness_config() { add_all_types(*this); }
};

/// The job most scenarios use: worker x2 (tracked), ps x1 (untracked).
job_spec default_job();

/// The job as an AM that died had saved it (AM restart scenarios): every
/// task RUNNING in container_<type>_<index> on node.test, port 2000 + index.
job_status saved_running_job(const job_spec& job);

/// The containers of `st`'s tasks, as a restarted AM gets them back.
std::vector<container> containers_of(const job_status& st);

struct harness : test_coordinator_fixture<harness_config> {
  static constexpr const char* secret = "s3cret";

  job_spec job;
  registry_actor registry;
  rm_client_actor rm;
  nm_client_actor nm;
  lifecycle_monitor_actor monitor;
  am_actors am;
  std::map<task_id, executor_actor> executors;
  /// The monitor's event sink (monitor_config::on_change); set before start().
  std::function<void(const job_status&)> on_change;
  /// A later AM attempt and the job as the AM before saved it; set before
  /// start() (the fake RM's registration then names the kept containers).
  int32_t am_attempt = 1;
  std::optional<job_status> resume;
  /// How often the monitor said the AM's attempt is gone
  /// (monitor_config::on_attempt_gone).
  int attempt_gone_calls = 0;
  /// The monitor's sample sink (monitor_config::on_sample); set before start().
  std::function<void(const task_id&, int32_t, const task_sample&)> on_sample;
  /// Called before the monitor tells the RM of the end
  /// (monitor_config::before_unregister); set before start().
  std::function<void(const job_status&)> before_unregister;
  /// Gives the registry a spec channel (set before start()); every frame it
  /// publishes there lands in channel_frames, in order.
  bool with_spec_channel = false;
  std::shared_ptr<std::vector<std::string>> channel_frames =
      std::make_shared<std::vector<std::string>>();
  /// Whether the executors of register_task say they read the spec channel.
  bool executors_read_channel = false;

  explicit harness(job_spec j = default_job());
  ~harness() override;

  /// Spawns the AM's actors and lets them register with the fake RM; with
  /// `run = false` nothing runs yet (a message script follows from the
  /// first message).
  void start(bool run = true);

  /// Processes every queued message, without moving time.
  void settle() { sched.run(); }

  /// Moves the clock and processes what becomes due.
  void advance(caf::timespan d);

  fake_rm_state& rm_state() { return deref<fake_rm_impl>(rm).state; }
  fake_nm_state& nm_state() { return deref<fake_nm_impl>(nm).state; }
  fake_executor_state& exec_state(const task_id& t) {
    return deref<fake_executor_impl>(executors.at(t)).state;
  }

  /// A fake executor registers `t`; returns the registry's answer.
  caf::expected<registration_ack> register_task(const task_id& t, int32_t attempt = 1,
                                                std::string secret_text = secret,
                                                std::string host = "");

  /// The executor of `t` in `container_id` registers again with this AM
  /// (an AM restart); returns the registry's answer.
  caf::expected<registration_ack>
  register_again(const task_id& t, const std::string& container_id, int32_t attempt = 1);

  /// Registers every task of the job (the barrier then releases).
  void register_all(int32_t attempt = 1);

  /// The executor of `t` reports its command's exit.
  void exit_task(const task_id& t, int32_t code, std::string stderr_tail = "",
                 int32_t attempt = 1, int32_t signal = 0);

  /// The executor of `t` sends a heartbeat (with `sample`: what it measured).
  void heartbeat(const task_id& t, int32_t attempt = 1, task_sample sample = {});

  /// The executor of `t` sends a heartbeat with the progress its task wrote.
  void heartbeat_progress(const task_id& t, float progress, int32_t attempt = 1);

  /// The executor of `t` dies: its handle goes down.
  void kill_executor(const task_id& t);

  /// The RM reports a container completion on its next allocate.
  void complete_container(const std::string& container_id, int32_t exit_status,
                          std::string diagnostics = "");

  /// The container given to `t` (from the launches the fake NM saw).
  container container_of(const task_id& t);

  /// The monitor's status now.
  job_status status();

  /// The state of one task in status().
  std::string task_state(const task_id& t);

  /// Ids of containers the fake NM was asked to stop.
  std::set<std::string> stopped_ids();
};

} // namespace tony::testing
