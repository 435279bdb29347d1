#pragma once

// tony-submit's rules for following a YARN application to its end, as a
// plain value: what it says, when it kills the application, when it gives
// up, and its exit code (doc/operations.md, "Exit codes"). It has no
// actors, no sockets, no clock and no printing: the follow loop in
// submit/yarn_submit.cpp feeds it events with the time and carries out the
// commands it returns, and the unit tests do the same with tables
// (tests/unit/submit/).
//
// One round of the loop:
//
//   interrupt?  client_stop?  (a kill, once: kill_app ─▶ kill_result)
//   tick ─▶ ask_rm ─┬─▶ rm_error ─┬─ not found ─────────────────────▶ exit 3
//                   │             └─ (poll_am ─▶ am_status) ─┬─ 60 s lost ─▶ exit 0/1/3
//                   │                                        └─ next_round 500 ms
//                   └─▶ rm_report ─ (connect_am ─▶ am_link) ─ (poll_am ─▶ am_status)
//                            ├─ running ──────────────────────────▶ next_round 250/100 ms
//                            └─ terminal ─ (await_final ─▶ am_link) ─▶ exit 0/1
//
// A command that asks something (kill_app, ask_rm, connect_am, poll_am,
// await_final) is the last of its batch: the caller answers it with the
// event named beside it, and before every answer says what the AM watcher
// knows now (am_refused, am_final, then am_link).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/job_spec.hpp"
#include "hadoop/yarn/records.hpp"
#include "messages/types.hpp"

namespace tony::submit_core {

using std::chrono::milliseconds;

// -- events -------------------------------------------------------------------------

/// A round of the loop begins (after the wait the last round asked for).
struct tick {};

/// The user interrupted tony-submit (Ctrl-C, SIGTERM, SIGHUP).
struct interrupt {};

/// The client task (ytf-submit --client) ended before the job: `reason` is
/// the line for the terminal, `code` its exit code.
struct client_stop {
  std::string reason;
  int code = 0;
};

/// The answer to kill_app: empty, or why the RM did not take the kill.
struct kill_result {
  std::string error;
};

/// The answers to ask_rm.
struct rm_report {
  yarn::application_report report;
};

struct rm_error {
  std::string message;
  /// ApplicationNotFoundException: the RM has forgotten the application.
  bool not_found = false;
};

/// The answer to poll_am: the AM's status, or nothing when it did not answer.
struct am_status {
  std::optional<job_status> status;
};

/// What the AM watcher knows, said before every answer (in this order).
/// The connection to the AM failed for good (it refused the job secret).
struct am_refused {
  std::string why;
};

/// The AM sent the job's final status.
struct am_final {
  job_status status;
};

/// Whether the watcher is connected to an AM, and whether that AM's
/// connection dropped. Also the answer to connect_am and await_final.
struct am_link {
  bool connected = false;
  bool lost = false;
};

using event = std::variant<tick, interrupt, client_stop, kill_result, rm_report, rm_error,
                           am_status, am_refused, am_final, am_link>;

// -- commands -----------------------------------------------------------------------

/// Kill the application (answer: kill_result).
struct kill_app {
  std::string reason;
  milliseconds timeout{15000};
};

/// Ask the RM for the application's report (answer: rm_report or rm_error).
struct ask_rm {
  milliseconds timeout{5000};
};

/// Connect the watcher to the AM at host:port and wait for the job's end
/// there (answer: am_link).
struct connect_am {
  std::string host;
  uint16_t port = 0;
};

/// Ask the AM for the job's status (answer: am_status).
struct poll_am {
  milliseconds timeout{2000};
};

/// Wait until the AM sends the final status or its connection drops, at
/// most `up_to` (answer: am_link).
struct await_final {
  milliseconds up_to{2000};
};

/// Sleep `interval`, then begin the next round (interrupt, client_stop, tick).
struct next_round {
  milliseconds interval{0};
};

/// A line above the status table ("YARN: ... RUNNING").
struct note {
  std::string line;
};

/// "tony: <line>" on stdout.
struct say {
  std::string line;
};

/// "tony-submit: <line>" on stderr.
struct complain {
  std::string line;
};

/// Tell --output json the application's YARN state changed.
struct yarn_state {
  std::string state;
  std::string tracking_url;
};

/// Show the RM's tracking URL (the first one only is printed).
struct tracking_url {
  std::string url;
};

/// Show a status. `pass_on`: also to the followed task's log lines,
/// --output json and the client task (the AM's status while the RM answers).
struct show {
  job_status status;
  bool pass_on = false;
};

/// Forget the job secret kept for --status: the job is over.
struct forget_secret {};

/// Print what is left of the followed task's log (--follow).
struct drain_logs {
  job_status status;
};

/// The final table; later lines go below it.
struct leave {
  job_status status;
};

/// Stop the client task, if any (SIGTERM, SIGKILL after `grace`).
struct stop_client {
  milliseconds grace{3000};
};

/// Tell --output json the job ended.
struct finished {
  job_status status;
  int code = 0;
};

/// tony-submit exits with `code`.
struct exit_with {
  int code = 0;
};

using command =
    std::variant<kill_app, ask_rm, connect_am, poll_am, await_final, next_round, note,
                 say, complain, yarn_state, tracking_url, show, forget_secret, drain_logs,
                 leave, stop_client, finished, exit_with>;
using commands = std::vector<command>;

// -- the rules ----------------------------------------------------------------------

/// Where the follow starts: `app` the application id, `job` the job
/// submitted (null when tony-submit follows one it did not submit),
/// `history_uri` the job's history dir (empty: none), `quiet` --quiet.
struct follow_setup {
  std::string app;
  const job_spec* job = nullptr;
  std::string history_uri;
  bool quiet = false;
};

class follow_core {
public:
  /// The RM and the AM count as heard from at `now` (milliseconds).
  follow_core(follow_setup setup, int64_t now);

  /// Takes one event at `now` and returns what to do.
  commands handle(const event& e, int64_t now);

private:
  // What an am_status or am_link answers.
  enum class pending : uint8_t { none, kill, rm, connect, poll_lost, poll_report, end };

  commands on_kill(std::string note_line, std::string reason, bool for_client);
  commands on_rm_error(const rm_error& e, int64_t now);
  commands on_rm_report(const yarn::application_report& r, int64_t now);
  commands after_connect();
  commands on_status(const std::optional<job_status>& st, int64_t now);
  commands rm_lost_check(int64_t now);
  void report_round(const std::optional<job_status>& st, commands& out);
  commands finish();

  follow_setup setup_;
  pending pending_ = pending::none;
  // -- what the RM said ---
  int64_t last_rm_ok_;
  std::string last_rm_error_;
  std::string last_yarn_state_;
  int32_t last_attempt_ = 0;
  std::optional<yarn::application_report> report_; // the last one
  // -- what the AM said ---
  int64_t last_am_ok_;
  bool connected_ = false;
  bool lost_ = false;
  bool refusal_said_ = false;
  std::optional<job_status> final_;
  std::optional<job_status> last_status_;
  std::string last_recovery_;
  // -- stopping ---
  bool kill_sent_ = false;
  bool stopped_for_client_ = false;
  int client_code_ = 0;
};

/// The job's end as the RM reports it, with the tasks the AM last showed
/// (the AM may be gone before it was asked for its final table); `job` may
/// be null (--status).
job_status final_view(const std::string& app, const job_spec* job,
                      const yarn::application_report& report,
                      const std::optional<job_status>& last);

} // namespace tony::submit_core
