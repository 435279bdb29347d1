// tony-submit's follow rules (submit/follow_core.hpp), one table row each: a
// script of rounds (what the RM and the AM say, Ctrl-C, the client's end)
// and what the user sees, ending with the exit code. A driver answers the
// core's questions the way the follow loop in submit/yarn_submit.cpp does.
// Each row is its own ctest entry ("follow_rules/follow.rule/<name>").

#include "submit/follow_core.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "submit/submit.hpp"
#include "tests/state_names.hpp"

using namespace tony;
using namespace tony::submit_core;

namespace {

const std::string app = "application_1700000000000_0001";

job_status status_of(const std::string& state, const std::string& diagnostics = {}) {
  job_status st;
  st.app_id = app;
  st.name = "mnist";
  st.state = job_state_of(state);
  st.diagnostics = diagnostics;
  return st;
}

// -- one round as the world answers it -------------------------------------------

struct poll_round {
  int64_t at = 0; // ms since the follow began
  bool interrupt = false;
  std::optional<int> client_exit; // client:0 ended with this code
  // The RM's answer: a report, or an error.
  std::optional<yarn::application_report> report;
  std::string rm_error = "Connection refused";
  bool rm_forgot = false;
  // The AM as the watcher sees it this round.
  std::optional<job_status> am_poll;       // what a poll answers
  std::optional<job_status> am_final;      // sent before the round
  std::optional<job_status> final_in_wait; // sent while tony-submit waits for it
  bool am_lost = false;
  std::string refusal;
};

yarn::application_report report(yarn::application_state state,
                                yarn::final_status final = yarn::final_status::undefined,
                                int32_t attempt = 1) {
  yarn::application_report r;
  r.name = "mnist";
  r.state = state;
  r.final = final;
  r.current_attempt = yarn::application_attempt_id{{}, attempt};
  if (state == yarn::application_state::running) {
    r.host = "node1";
    r.rpc_port = 4000 + attempt;
    r.tracking_url = "http://rm:8088/proxy/" + app + "/";
  }
  return r;
}

poll_round accepted(int64_t at) {
  poll_round r;
  r.at = at;
  r.report = report(yarn::application_state::accepted);
  return r;
}

poll_round running(int64_t at, std::optional<job_status> poll = status_of("RUNNING")) {
  poll_round r;
  r.at = at;
  r.report = report(yarn::application_state::running);
  r.am_poll = std::move(poll);
  return r;
}

poll_round ended(int64_t at, yarn::application_state state, yarn::final_status final,
                 std::optional<job_status> am_final) {
  poll_round r;
  r.at = at;
  r.report = report(state, final);
  r.report->diagnostics = state == yarn::application_state::finished ? "" : "it failed";
  r.am_final = std::move(am_final);
  r.am_poll = r.am_final;
  return r;
}

poll_round rm_down(int64_t at, std::optional<job_status> poll = std::nullopt) {
  poll_round r;
  r.at = at;
  r.am_poll = std::move(poll);
  return r;
}

// -- the driver: the follow loop without the world ---------------------------------

struct driver {
  follow_core core;
  std::vector<std::string> seen;
  std::vector<command> all;
  std::optional<int> code;
  // The watcher's side.
  bool connected = false;
  std::optional<job_status> final;
  std::string target;  // the AM the watcher was last told to connect to
  std::string refusal; // why that AM refused the connection for good
  poll_round now;

  explicit driver(const job_spec* j = nullptr)
      : core({app, j, "hdfs:///tony/history", false}, 0) {
    // nop
  }

  void play(const std::vector<poll_round>& rounds) {
    for (auto& r : rounds) {
      ASSERT_FALSE(code) << "a poll_round after the exit";
      now = r;
      if (r.am_final)
        final = r.am_final;
      if (r.interrupt)
        feed(interrupt{});
      if (r.client_exit)
        feed(client_stop{"client:0 exited with code " + std::to_string(*r.client_exit) +
                             ": stopping the job",
                         *r.client_exit});
      feed(tick{});
    }
  }

  void sync(std::vector<event>& out) const {
    if (!refusal.empty())
      out.emplace_back(am_refused{refusal});
    if (final)
      out.emplace_back(am_final{*final});
    out.emplace_back(am_link{connected, connected && now.am_lost});
  }

  void feed(event e) {
    std::vector<event> todo{std::move(e)};
    for (size_t i = 0; i < todo.size(); ++i)
      for (auto& cmd : core.handle(todo[i], now.at)) {
        all.push_back(cmd);
        std::visit([&](const auto& x) { take(x, todo); }, cmd);
      }
  }

  // Questions, answered from the round.
  void take(const kill_app& c, std::vector<event>& out) {
    seen.push_back("kill: " + c.reason);
    sync(out);
    out.emplace_back(kill_result{});
  }
  void take(const ask_rm&, std::vector<event>& out) {
    sync(out);
    if (now.report)
      out.emplace_back(rm_report{*now.report});
    else
      out.emplace_back(
          rm_error{now.rm_forgot ? "ApplicationNotFoundException: gone" : now.rm_error,
                   now.rm_forgot});
  }
  void take(const connect_am& c, std::vector<event>& out) {
    // The watcher is told every round; a new address is what counts.
    auto to = c.host + ":" + std::to_string(c.port);
    if (to != target)
      seen.push_back("connect: " + to);
    target = to;
    connected = now.refusal.empty();
    refusal = now.refusal;
    sync(out);
  }
  void take(const poll_am&, std::vector<event>& out) {
    sync(out);
    out.emplace_back(am_status{connected ? now.am_poll : std::nullopt});
  }
  void take(const await_final& c, std::vector<event>& out) {
    seen.push_back("await final " + std::to_string(c.up_to.count()) + " ms");
    if (now.final_in_wait)
      final = now.final_in_wait;
    sync(out);
  }
  // What the user sees.
  void take(const note& c, std::vector<event>&) { seen.push_back("note: " + c.line); }
  void take(const say& c, std::vector<event>&) { seen.push_back("tony: " + c.line); }
  void take(const complain& c, std::vector<event>&) {
    seen.push_back("tony-submit: " + c.line);
  }
  void take(const next_round& c, std::vector<event>&) {
    seen.push_back("wait " + std::to_string(c.interval.count()) + " ms");
  }
  void take(const leave& c, std::vector<event>&) {
    seen.push_back("leave " + std::string{to_string(c.status.state)});
  }
  void take(const forget_secret&, std::vector<event>&) {
    seen.push_back("forget secret");
  }
  void take(const stop_client& c, std::vector<event>&) {
    seen.push_back("stop client (" + std::to_string(c.grace.count()) + " ms)");
  }
  void take(const exit_with& c, std::vector<event>&) {
    seen.push_back("exit " + std::to_string(c.code));
    code = c.code;
  }
  // The rest is checked by the tests below the table.
  template <class T>
  void take(const T&, std::vector<event>&) {}

  template <class T>
  std::vector<T> of() const {
    std::vector<T> xs;
    for (auto& c : all)
      if (auto* x = std::get_if<T>(&c))
        xs.push_back(*x);
    return xs;
  }
};

// -- the table ------------------------------------------------------------------------

struct rule {
  const char* name;
  std::vector<poll_round> script;
  std::vector<std::string> seen; // everything the driver records, in order
};

std::ostream& operator<<(std::ostream& os, const rule& r) {
  return os << r.name;
}

class follow : public ::testing::TestWithParam<rule> {};

TEST_P(follow, rule) {
  driver d;
  d.play(GetParam().script);
  EXPECT_EQ(d.seen, GetParam().seen);
}

std::string param_name(const ::testing::TestParamInfo<rule>& info) {
  return info.param.name;
}

using yarn::application_state;
using yarn::final_status;

const std::string running_note =
    "note: YARN: " + app + " RUNNING (http://rm:8088/proxy/" + app + "/)";
const std::string tail_lines[] = {
    "tony: logs: yarn logs -applicationId " + app,
    "tony: event log: hdfs:///tony/history/" + app +
        ".jsonl (tony-history --dir hdfs:///tony/history show " + app + ")"};

// The lines of a job that ended `how` ("FINISHED/SUCCEEDED"), after `before`.
std::vector<std::string> end_lines(std::vector<std::string> before,
                                   const std::string& how,
                                   std::vector<std::string> diagnostics, int code) {
  before.push_back("tony: job " + app + " " + how);
  for (auto& d : diagnostics)
    before.push_back(d);
  before.insert(before.end(), std::begin(tail_lines), std::end(tail_lines));
  before.push_back("stop client (3000 ms)");
  before.push_back("exit " + std::to_string(code));
  return before;
}

poll_round with_interrupt(poll_round r) {
  r.interrupt = true;
  return r;
}

poll_round with_client_exit(poll_round r, int code) {
  r.client_exit = code;
  return r;
}

poll_round with_lost_am(poll_round r) {
  r.am_lost = true;
  return r;
}

poll_round with_final_in_wait(poll_round r, job_status st) {
  r.final_in_wait = std::move(st);
  return r;
}

poll_round with_rm_diagnostics(poll_round r, std::string text) {
  r.report->diagnostics = std::move(text);
  return r;
}

poll_round with_refusal(poll_round r) {
  r.refusal = "the AM refused the job secret";
  return r;
}

poll_round attempt(poll_round r, int32_t n) {
  r.report = report(r.report->state, r.report->final, n);
  return r;
}

const std::string killed_by_ctrl_c = "kill: killed by tony-submit (interrupted)";
const std::string interrupted_note = "note: interrupted: killing " + app;
const std::string connect1 = "connect: node1:4001";

// doc/operations.md "Exit codes", and the sequences no cluster test reaches.
const rule rules[] = {
    // -- exit 0 ---
    {"succeeded_exit_0",
     {accepted(0), running(100),
      ended(350, application_state::finished, final_status::succeeded,
            status_of("SUCCEEDED"))},
     end_lines({"note: YARN: " + app + " ACCEPTED", "wait 100 ms", running_note, connect1,
                "wait 250 ms", "note: YARN: " + app + " FINISHED", "forget secret",
                "leave SUCCEEDED"},
               "FINISHED/SUCCEEDED", {}, exit_succeeded)},
    {"succeeded_while_the_final_status_is_awaited_exit_0",
     {running(0), with_final_in_wait(ended(250, application_state::finished,
                                           final_status::succeeded, std::nullopt),
                                     status_of("SUCCEEDED"))},
     end_lines({running_note, connect1, "wait 250 ms", "note: YARN: " + app + " FINISHED",
                "await final 2000 ms", "forget secret", "leave SUCCEEDED"},
               "FINISHED/SUCCEEDED", {}, exit_succeeded)},
    {"an_am_that_is_gone_is_not_awaited",
     {running(0), with_lost_am(ended(250, application_state::finished,
                                     final_status::succeeded, std::nullopt))},
     end_lines({running_note, connect1, "wait 250 ms", "note: YARN: " + app + " FINISHED",
                "forget secret", "leave RUNNING"},
               "FINISHED/SUCCEEDED", {}, exit_succeeded)},
    // -- exit 1 ---
    {"failed_exit_1",
     {running(0), ended(250, application_state::finished, final_status::failed,
                        status_of("FAILED", "worker:0 exited with 1"))},
     end_lines({running_note, connect1, "wait 250 ms", "note: YARN: " + app + " FINISHED",
                "forget secret", "leave FAILED"},
               "FINISHED/FAILED", {"tony: the AM's diagnostics: worker:0 exited with 1"},
               exit_failed)},
    {"the_am_diagnostics_are_not_said_twice",
     {running(0),
      with_rm_diagnostics(ended(250, application_state::finished, final_status::failed,
                                status_of("FAILED", "worker:0 exited with 1")),
                          "AM says: worker:0 exited with 1")},
     end_lines({running_note, connect1, "wait 250 ms", "note: YARN: " + app + " FINISHED",
                "forget secret", "leave FAILED"},
               "FINISHED/FAILED", {"tony: diagnostics: AM says: worker:0 exited with 1"},
               exit_failed)},
    {"killed_by_yarn_exit_1",
     {running(0),
      ended(250, application_state::killed, final_status::killed, std::nullopt)},
     end_lines({running_note, connect1, "wait 250 ms", "note: YARN: " + app + " KILLED",
                "await final 2000 ms", "forget secret", "leave RUNNING"},
               "KILLED/KILLED", {"tony: diagnostics: it failed"}, exit_failed)},
    {"ctrl_c_twice_kills_once_exit_1",
     {running(0), with_interrupt(running(250)), with_interrupt(running(500)),
      with_interrupt(
          ended(750, application_state::killed, final_status::killed, std::nullopt))},
     end_lines({running_note, connect1, "wait 250 ms", interrupted_note, killed_by_ctrl_c,
                "wait 250 ms", "wait 250 ms", "note: YARN: " + app + " KILLED",
                "await final 2000 ms", "forget secret", "leave RUNNING"},
               "KILLED/KILLED", {"tony: diagnostics: it failed"}, exit_failed)},
    // -- exit 3 ---
    {"rm_forgot_the_application_exit_3",
     {running(0),
      [] {
        auto r = rm_down(250);
        r.rm_forgot = true;
        return r;
      }()},
     {running_note, connect1, "wait 250 ms",
      "tony-submit: the ResourceManager no longer knows " + app +
          " (it restarted or failed over without recovering its applications): "
          "ApplicationNotFoundException: gone; its NodeManagers stop the job's "
          "containers "
          "when they register with it",
      "exit 3"}},
    {"rm_lost_60_s_without_an_am_exit_3",
     {accepted(0), rm_down(100), rm_down(60000), rm_down(60101)},
     {"note: YARN: " + app + " ACCEPTED", "wait 100 ms", "wait 500 ms", "wait 500 ms",
      "tony-submit: lost the ResourceManager for 60 s: Connection refused; the "
      "application may still run (tony-submit --status " +
          app + ")",
      "exit 3"}},
    {"rm_lost_60_s_while_the_am_runs_without_ending_exit_3",
     {running(0), rm_down(250), rm_down(60251, std::nullopt)},
     {running_note, connect1, "wait 250 ms", "wait 500 ms",
      "tony-submit: lost the ResourceManager for 60 s: Connection refused; the "
      "application may still run (tony-submit --status " +
          app + ")",
      "exit 3"}},
    // -- the RM lost mid-follow while the AM answers ---
    {"the_am_answering_keeps_the_follow_alive_past_60_s",
     {running(0), rm_down(30000, status_of("RUNNING")), rm_down(89000), running(89500)},
     {running_note, connect1, "wait 250 ms", "wait 500 ms", "wait 500 ms",
      "wait 250 ms"}},
    {"rm_lost_the_am_ended_succeeded_exit_0",
     {running(0), rm_down(250, status_of("RUNNING")),
      [] {
        auto r = rm_down(60300);
        r.am_final = status_of("SUCCEEDED");
        return r;
      }()},
     {running_note, connect1, "wait 250 ms", "wait 500 ms", "forget secret",
      "leave SUCCEEDED",
      "tony: job " + app +
          " SUCCEEDED (its AM's final status: no ResourceManager answered for 60 s after "
          "the AM ended, so YARN's record of it is unknown; tony-submit --status " +
          app + ")",
      "tony: last ResourceManager error: Connection refused", "exit 0"}},
    {"rm_lost_the_am_ended_failed_exit_1",
     {running(0),
      [] {
        auto r = rm_down(60300);
        r.am_final = status_of("FAILED", "worker:0 exited with 2");
        r.am_lost = true;
        return r;
      }()},
     {running_note, connect1, "wait 250 ms", "forget secret", "leave FAILED",
      "tony: job " + app +
          " FAILED (its AM's final status: no ResourceManager answered for 60 s after "
          "the AM ended, so YARN's record of it is unknown; tony-submit --status " +
          app + ")",
      "tony: diagnostics: worker:0 exited with 2",
      "tony: last ResourceManager error: Connection refused", "exit 1"}},
    // -- AM attempts, refusals, the client ---
    {"a_new_am_attempt_is_said_once",
     {running(0), attempt(running(250), 2), attempt(running(500), 2)},
     {running_note, connect1, "wait 250 ms",
      "note: YARN: " + app +
          " AM attempt 2 (the previous AM ended without unregistering)",
      "connect: node1:4002", "wait 250 ms", "wait 250 ms"}},
    {"an_am_refusal_is_said_once",
     {with_refusal(running(0)), with_refusal(running(100))},
     {running_note, connect1,
      "note: cannot follow the tasks: the AM refused the job secret", "wait 100 ms",
      "wait 100 ms"}},
    {"the_client_ending_first_kills_and_its_code_is_the_exit_code",
     {running(0), with_client_exit(running(250), 0),
      with_client_exit(
          ended(500, application_state::killed, final_status::killed, std::nullopt), 0)},
     {running_note, connect1, "wait 250 ms",
      "note: client:0 exited with code 0: stopping the job",
      "kill: killed by tony-submit: client:0 exited with code 0: stopping the job",
      "wait 250 ms", "note: YARN: " + app + " KILLED", "await final 2000 ms",
      "forget secret", "leave RUNNING", "tony: job " + app + " KILLED/KILLED",
      "tony: diagnostics: it failed", tail_lines[0], tail_lines[1], "exit 0"}},
    {"the_client_failing_makes_exit_1",
     {with_client_exit(running(0), 3),
      ended(250, application_state::killed, final_status::killed, std::nullopt)},
     {"note: client:0 exited with code 3: stopping the job",
      "kill: killed by tony-submit: client:0 exited with code 3: stopping the job",
      running_note, connect1, "wait 250 ms", "note: YARN: " + app + " KILLED",
      "await final 2000 ms", "forget secret", "leave RUNNING",
      "tony: job " + app + " KILLED/KILLED", "tony: diagnostics: it failed",
      tail_lines[0], tail_lines[1], "exit 1"}},
    {"ctrl_c_before_the_client_ends_keeps_the_job_code",
     {with_client_exit(with_interrupt(running(0)), 0),
      ended(250, application_state::killed, final_status::killed, std::nullopt)},
     end_lines({interrupted_note, killed_by_ctrl_c, running_note, connect1, "wait 250 ms",
                "note: YARN: " + app + " KILLED", "await final 2000 ms", "forget secret",
                "leave RUNNING"},
               "KILLED/KILLED", {"tony: diagnostics: it failed"}, exit_failed)},
};

INSTANTIATE_TEST_SUITE_P(follow_rules, follow, ::testing::ValuesIn(rules), param_name);

// -- what the table does not show -------------------------------------------------

TEST(follow_core, a_failed_kill_is_complained_about) {
  follow_core core{{app, nullptr, {}, false}, 0};
  auto cs = core.handle(interrupt{}, 0);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(std::get<kill_app>(cs[1]).timeout, milliseconds(15000));
  cs = core.handle(kill_result{"no RM"}, 0);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(std::get<complain>(cs[0]).line, "could not kill " + app + ": no RM");
}

TEST(follow_core, every_call_to_the_rm_and_the_am_is_bounded) {
  follow_core core{{app, nullptr, {}, false}, 0};
  auto cs = core.handle(tick{}, 0);
  EXPECT_EQ(std::get<ask_rm>(cs.at(0)).timeout, milliseconds(5000));
  cs = core.handle(rm_report{report(application_state::running)}, 0);
  EXPECT_EQ(std::get<connect_am>(cs.back()).host, "node1");
  cs = core.handle(am_link{true, false}, 0);
  EXPECT_EQ(std::get<poll_am>(cs.at(0)).timeout, milliseconds(2000));
}

TEST(follow_core, statuses_pass_on_only_while_the_rm_answers) {
  driver d;
  d.play({running(0), rm_down(250, status_of("RUNNING"))});
  auto shows = d.of<show>();
  ASSERT_EQ(shows.size(), 2u);
  EXPECT_TRUE(shows[0].pass_on);
  EXPECT_FALSE(shows[1].pass_on);
}

TEST(follow_core, the_yarn_state_goes_to_json_once_per_change) {
  driver d;
  d.play({accepted(0), accepted(100), running(200), running(450)});
  auto states = d.of<yarn_state>();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].state, "ACCEPTED");
  EXPECT_EQ(states[1].state, "RUNNING");
  EXPECT_EQ(states[1].tracking_url, "http://rm:8088/proxy/" + app + "/");
}

TEST(follow_core, a_new_attempt_recovery_is_noted_once) {
  driver d;
  auto adopted = status_of("RUNNING");
  adopted.recovery = "adopted 2 running tasks";
  d.play({running(0, adopted), running(250, adopted)});
  EXPECT_EQ(std::count(d.seen.begin(), d.seen.end(), "note: adopted 2 running tasks"), 1);
}

TEST(follow_core, the_end_drains_the_log_and_reports_the_final_view) {
  job_spec job;
  job.name = "mnist-job";
  job.policy.stop_grace_ms = 7000;
  driver d{&job};
  d.play({running(0), ended(250, application_state::finished, final_status::succeeded,
                            status_of("SUCCEEDED"))});
  ASSERT_EQ(d.code, exit_succeeded);
  ASSERT_EQ(d.of<drain_logs>().size(), 1u);
  auto done = d.of<finished>();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status.state, "SUCCEEDED");
  EXPECT_EQ(done[0].code, exit_succeeded);
  EXPECT_EQ(d.of<stop_client>().at(0).grace, milliseconds(7000));
  EXPECT_NE(std::find(d.seen.begin(), d.seen.end(),
                      "tony: job " + app + " (mnist-job) FINISHED/SUCCEEDED"),
            d.seen.end());
}

TEST(follow_core, quiet_says_no_event_log) {
  follow_core core{{app, nullptr, "hdfs:///h", true}, 0};
  core.handle(tick{}, 0);
  core.handle(rm_report{report(application_state::finished, final_status::succeeded)}, 0);
  auto cs = core.handle(am_status{}, 0);
  for (auto& c : cs) {
    if (auto* s = std::get_if<say>(&c)) {
      EXPECT_EQ(s->line.find("event log"), std::string::npos);
    }
  }
  EXPECT_EQ(std::get<exit_with>(cs.back()).code, exit_succeeded);
}

TEST(follow_core, final_view_takes_the_rm_verdict_over_the_last_table) {
  auto r = report(application_state::failed, final_status::failed);
  r.diagnostics = "AM container exited with 137";
  auto st = final_view(app, nullptr, r, status_of("RUNNING"));
  EXPECT_EQ(st.state, "FAILED");
  EXPECT_EQ(st.diagnostics, "AM container exited with 137");
  EXPECT_EQ(st.name, "mnist");
  auto fresh = final_view(app, nullptr, r, std::nullopt);
  EXPECT_EQ(fresh.name, "mnist");
  EXPECT_EQ(fresh.app_id, app);
}

} // namespace
