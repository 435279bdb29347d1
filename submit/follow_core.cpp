// tony-submit's follow rules (submit/follow_core.hpp): events in, commands
// out, the time given with each event.

#include "submit/follow_core.hpp"

#include <algorithm>
#include <type_traits>

#include "hadoop/yarn/node_clock.hpp"
#include "submit/submit.hpp"

namespace tony::submit_core {

namespace {

// How long the RMs may stay silent, counting the AM's answers as contact.
constexpr int64_t rm_loss_limit_ms = 60000;

// How long to sleep before the next round.
constexpr milliseconds rm_retry{500};    // no RM answered
constexpr milliseconds am_interval{250}; // the AM shows the job
constexpr milliseconds rm_interval{100}; // no AM yet: the RM's states

bool usable_host(const yarn::application_report& r) {
  return r.rpc_port > 0 && !r.host.empty() && r.host != "N/A";
}

} // namespace

follow_core::follow_core(follow_setup setup, int64_t now)
    : setup_(std::move(setup))
    , last_rm_ok_(now)
    , last_am_ok_(now) {
  // nop
}

commands follow_core::handle(const event& e, int64_t now) {
  return std::visit(
      [&](const auto& x) -> commands {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, tick>) {
          pending_ = pending::rm;
          return {ask_rm{}};
        } else if constexpr (std::is_same_v<T, interrupt>) {
          return on_kill("interrupted: killing " + setup_.app,
                         "killed by tony-submit (interrupted)", false);
        } else if constexpr (std::is_same_v<T, client_stop>) {
          if (!kill_sent_)
            client_code_ = x.code;
          return on_kill(x.reason, "killed by tony-submit: " + x.reason, true);
        } else if constexpr (std::is_same_v<T, kill_result>) {
          pending_ = pending::none;
          if (x.error.empty())
            return {};
          return {complain{"could not kill " + setup_.app + ": " + x.error}};
        } else if constexpr (std::is_same_v<T, rm_report>) {
          return on_rm_report(x.report, now);
        } else if constexpr (std::is_same_v<T, rm_error>) {
          return on_rm_error(x, now);
        } else if constexpr (std::is_same_v<T, am_status>) {
          return on_status(x.status, now);
        } else if constexpr (std::is_same_v<T, am_refused>) {
          if (x.why.empty() || refusal_said_)
            return {};
          refusal_said_ = true;
          return {note{"cannot follow the tasks: " + x.why}};
        } else if constexpr (std::is_same_v<T, am_final>) {
          final_ = x.status;
          return {};
        } else {
          static_assert(std::is_same_v<T, am_link>);
          connected_ = x.connected;
          lost_ = x.lost;
          if (pending_ == pending::connect)
            return after_connect();
          if (pending_ == pending::end) {
            if (final_)
              last_status_ = final_;
            return finish();
          }
          return {};
        }
      },
      e);
}

// Ctrl-C and the client's end kill the application, once: whichever comes
// first decides whether the client's exit code is tony-submit's.
commands follow_core::on_kill(std::string note_line, std::string reason,
                              bool for_client) {
  if (kill_sent_)
    return {};
  kill_sent_ = true;
  stopped_for_client_ = for_client;
  pending_ = pending::kill;
  return {note{std::move(note_line)}, kill_app{std::move(reason)}};
}

commands follow_core::on_rm_error(const rm_error& e, int64_t now) {
  if (e.not_found) {
    // An RM restarted without recovery (or another RM without the state
    // store) has forgotten the job: no poll will bring it back.
    return {complain{"the ResourceManager no longer knows " + setup_.app +
                     " (it restarted or failed over without recovering its "
                     "applications): " +
                     e.message +
                     "; its NodeManagers stop the job's containers when they register "
                     "with it"},
            exit_with{exit_infra}};
  }
  // No RM answers, but the AM may: it decides the job's end whatever the
  // RMs do, and keeps trying to tell them (at most its rm_failure_limit).
  // Its answers count as contact, so a job that ends while the RMs restart
  // is followed to the end the RM reports once it is back.
  last_rm_error_ = e.message;
  if (connected_ && !lost_) {
    pending_ = pending::poll_lost;
    return {poll_am{}};
  }
  return rm_lost_check(now);
}

commands follow_core::rm_lost_check(int64_t now) {
  pending_ = pending::none;
  if (now - std::max(last_rm_ok_, last_am_ok_) <= rm_loss_limit_ms)
    return {next_round{rm_retry}};
  auto& app = setup_.app;
  if (!final_)
    return {complain{"lost the ResourceManager for 60 s: " + last_rm_error_ +
                     "; the application may still run (tony-submit --status " + app +
                     ")"},
            exit_with{exit_infra}};
  // The AM said how the job ended; YARN's record of it is unknown.
  auto& end = *final_;
  commands out{forget_secret{}, leave{end}};
  out.emplace_back(say{"job " + app +
                       (setup_.job ? " (" + setup_.job->name + ")" : std::string{}) +
                       " " + to_string(end.state) +
                       " (its AM's final status: no ResourceManager answered for 60 s "
                       "after the AM ended, so YARN's record of it is unknown; "
                       "tony-submit --status " +
                       app + ")"});
  if (!end.diagnostics.empty())
    out.emplace_back(say{"diagnostics: " + end.diagnostics});
  out.emplace_back(say{"last ResourceManager error: " + last_rm_error_});
  out.emplace_back(
      exit_with{end.state == job_state::succeeded ? exit_succeeded : exit_failed});
  return out;
}

commands follow_core::on_rm_report(const yarn::application_report& r, int64_t now) {
  last_rm_ok_ = now;
  report_ = r;
  auto& app = setup_.app;
  commands out;
  auto state = yarn::to_string(r.state);
  if (state != last_yarn_state_) {
    last_yarn_state_ = state;
    out.emplace_back(yarn_state{state, r.tracking_url});
    out.emplace_back(note{"YARN: " + app + " " + state +
                          (r.tracking_url.empty() ? "" : " (" + r.tracking_url + ")")});
  }
  // A new AM attempt (the last one died): say so; the watcher follows it to
  // its own address.
  if (r.current_attempt && r.current_attempt->attempt > last_attempt_) {
    if (last_attempt_ > 0)
      out.emplace_back(note{"YARN: " + app + " AM attempt " +
                            std::to_string(r.current_attempt->attempt) +
                            " (the previous AM ended without unregistering)"});
    last_attempt_ = r.current_attempt->attempt;
  }
  // The RM's web proxy URL: it works wherever the RM's UI does.
  if (r.state == yarn::application_state::running) {
    out.emplace_back(tracking_url{r.tracking_url});
    if (usable_host(r)) {
      pending_ = pending::connect;
      out.emplace_back(connect_am{r.host, static_cast<uint16_t>(r.rpc_port)});
      return out;
    }
  }
  auto rest = after_connect();
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// The final status comes from the AM itself (it waits for us to have it);
// until then the polls show the job.
commands follow_core::after_connect() {
  commands out;
  if (final_) {
    report_round(final_, out);
    return out;
  }
  pending_ = pending::poll_report;
  return {poll_am{}};
}

commands follow_core::on_status(const std::optional<job_status>& st, int64_t now) {
  if (pending_ == pending::poll_lost) {
    commands out;
    if (st) {
      last_am_ok_ = now;
      last_status_ = st;
      out.emplace_back(show{*st, false});
    }
    auto rest = rm_lost_check(now);
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  }
  if (pending_ != pending::poll_report)
    return {};
  commands out;
  report_round(st, out);
  return out;
}

void follow_core::report_round(const std::optional<job_status>& st, commands& out) {
  pending_ = pending::none;
  if (st) {
    // What a later AM attempt did with the job: adopted it, or started over.
    if (st->recovery != last_recovery_ && !st->recovery.empty())
      out.emplace_back(note{st->recovery});
    last_recovery_ = st->recovery;
    last_status_ = st;
    out.emplace_back(show{*st, true});
  }
  if (!yarn::is_terminal(report_->state)) {
    out.emplace_back(next_round{connected_ ? am_interval : rm_interval});
    return;
  }
  // YARN reports the end as soon as the AM has unregistered, a moment before
  // the AM hands its waiters the final status. Leaving before it arrives
  // would cost the AM its linger (it waits up to 5 s for every client that
  // waits for the end to say it has it) with the job's container still
  // held: so wait a little for it, never for an AM that is gone.
  if (connected_ && !lost_ && !final_) {
    pending_ = pending::end;
    out.emplace_back(await_final{});
    return;
  }
  auto rest = finish();
  out.insert(out.end(), rest.begin(), rest.end());
}

commands follow_core::finish() {
  pending_ = pending::none;
  auto& r = *report_;
  auto& app = setup_.app;
  commands out{forget_secret{}};
  if (last_status_) {
    out.emplace_back(drain_logs{*last_status_});
    out.emplace_back(leave{*last_status_});
  }
  auto final = yarn::to_string(r.final);
  out.emplace_back(say{"job " + app +
                       (setup_.job ? " (" + setup_.job->name + ")" : std::string{}) +
                       " " + yarn::to_string(r.state) + "/" + final});
  if (!r.diagnostics.empty())
    out.emplace_back(say{"diagnostics: " + r.diagnostics});
  // An AM that could not unregister (no RM answered it in time) left YARN
  // only its container's exit: its own word on the end says why.
  if (final_ && !final_->diagnostics.empty() &&
      r.diagnostics.find(final_->diagnostics) == std::string::npos)
    out.emplace_back(say{"the AM's diagnostics: " + final_->diagnostics});
  if (auto clock = yarn::describe_am_clock_ahead(r.diagnostics, r.finish_time))
    out.emplace_back(say{*clock});
  out.emplace_back(say{"logs: yarn logs -applicationId " + app});
  if (!setup_.quiet && !setup_.history_uri.empty())
    out.emplace_back(say{"event log: " + setup_.history_uri + "/" + app +
                         ".jsonl (tony-history --dir " + setup_.history_uri + " show " +
                         app + ")"});
  // The client's end stopped the job: its exit code is tony-submit's. Else
  // the job's, and the client (if any) is stopped.
  auto code = r.state == yarn::application_state::finished &&
                      r.final == yarn::final_status::succeeded
                  ? exit_succeeded
                  : exit_failed;
  if (stopped_for_client_)
    code = client_code_ == 0 ? exit_succeeded : exit_failed;
  else
    out.emplace_back(
        stop_client{milliseconds(setup_.job ? setup_.job->policy.stop_grace_ms : 3000)});
  out.emplace_back(finished{final_view(app, setup_.job, r, last_status_), code});
  out.emplace_back(exit_with{code});
  return out;
}

job_status final_view(const std::string& app, const job_spec* job,
                      const yarn::application_report& report,
                      const std::optional<job_status>& last) {
  job_status st = last ? *last : job_status{};
  st.app_id = app;
  if (st.name.empty())
    st.name = job ? job->name : report.name;
  if (report.state == yarn::application_state::killed)
    st.state = job_state::killed;
  else if (report.state == yarn::application_state::failed)
    st.state = job_state::failed;
  else if (report.final == yarn::final_status::succeeded)
    st.state = job_state::succeeded;
  else if (report.final == yarn::final_status::failed)
    st.state = job_state::failed;
  else if (report.final == yarn::final_status::killed)
    st.state = job_state::killed;
  if (!report.diagnostics.empty())
    st.diagnostics = report.diagnostics;
  return st;
}

} // namespace tony::submit_core
