// tony-submit's one-shot commands on a YARN application by its id: --kill,
// --status (the RM's report and the tasks, from the AM while it runs, else
// from the job's event log) and --logs (from the NodeManagers, or the
// aggregated logs once the job ended). Following a job is
// submit/yarn_submit.cpp's.

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>
#include <thread>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "hadoop/user.hpp"
#include "hadoop/yarn/application_client.hpp"
#include "messages/error.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/history/event_log.hpp"
#include "runtime/history/history_store.hpp"
#include "runtime/status_json.hpp"
#include "submit/aggregated_logs.hpp"
#include "submit/am_watcher.hpp"
#include "submit/backend_choice.hpp"
#include "submit/follow_core.hpp"
#include "submit/job_control.hpp"
#include "submit/job_locations.hpp"
#include "submit/submit.hpp"
#include "submit/yarn_common.hpp"

namespace tony {

using namespace yarn_cli;

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// What --kill, --status and --logs work with: the application and a client
// of its ResourceManager; or tony-submit's exit code when either cannot be
// had.
struct rm_target {
  yarn::application_id id;
  yarn::application_client rm;
  hadoop::configuration conf;
  webhdfs::http_auth auth; // tony-submit's own HTTP calls
  std::string caller;      // whom tony-submit acts as (short name)
};

result<rm_target, int> rm_for_application(const std::string& app_id,
                                          const submit_options& opts) {
  auto id = yarn::parse_application_id(app_id);
  if (!id) {
    complain(id.error().message());
    return exit_usage;
  }
  auto setup = load_hadoop(opts.hadoop_conf, {});
  if (!setup)
    return setup.error();
  auto& conf = setup->conf;
  auto connection = connect_rm(*setup, opts, security_spec{});
  if (!connection)
    return connection.error();
  auto& c = *connection;
  auto auth = http_auth_of(c, security_spec{});
  return rm_target{*id, std::move(c.rm), conf, std::move(auth), c.user};
}

// The report of an application, or the exit code: 2 when the RM does not
// know the id, 3 when it cannot be asked.
result<yarn::application_report, int> report_of(rm_target& target,
                                                const std::string& app_id) {
  auto report =
      target.rm.get_application_report(target.id, hadoop::deadline_after(seconds(10)));
  if (report)
    return std::move(*report);
  if (report.error().is_remote("ApplicationNotFoundException")) {
    complain("the ResourceManager knows no application " + app_id);
    return exit_usage;
  }
  complain("cannot get the report of " + app_id + ": " + report.error().message());
  return exit_infra;
}

// Why the RM shows `caller` a running application without its AM, or "":
// it hides the AM's address and tracking URL from whom the application's
// VIEW_APP ACL does not admit (doc/operations.md "View ACLs").
std::string hidden_from(const yarn::application_report& r, const std::string& caller,
                        const std::string& app_id) {
  if (r.state != yarn::application_state::running || r.user.empty() || caller.empty() ||
      r.user == caller || r.tracking_url != "N/A")
    return {};
  return "the ResourceManager shows " + caller + " no details of " + app_id + ": " +
         caller + " is neither its owner (" + r.user +
         ") nor admitted by its view ACL (the job's [security] view_acl)";
}

// The job's tasks: from its AM while it runs, else from the event log the
// AM left in the default history dir (doc/tracking.md). Nothing if neither
// answers.
std::optional<job_status> tasks_of(const yarn::application_report& report,
                                   const std::string& app_id,
                                   const hadoop::configuration& conf,
                                   const webhdfs::http_auth& auth,
                                   std::string* why_not = nullptr) {
  if (report.state == yarn::application_state::running && report.rpc_port > 0 &&
      !report.host.empty() && report.host != "N/A") {
    // Through the AM's gate, with the secret tony-submit kept when it
    // submitted the job.
    auto secret = gate::load_secret(app_id);
    if (!secret) {
      if (why_not)
        *why_not = describe(secret.error());
      return std::nullopt;
    }
    client_config cfg;
    caf::actor_system sys{cfg};
    am_watcher watcher{sys, *secret};
    auto port = static_cast<uint16_t>(report.rpc_port);
    if (watcher.connect(report.host, port))
      if (auto st = watcher.poll(seconds(5)))
        return st;
    if (why_not)
      *why_not = watcher.refusal().empty() ? "the AM at " + report.host + ":" +
                                                 std::to_string(port) + " did not answer"
                                           : watcher.refusal();
  }
  if (!yarn::is_terminal(report.state))
    return std::nullopt;
  auto default_fs = conf.get_or("fs.defaultFS", "file:///");
  auto user = report.user.empty() ? hadoop::current_user() : report.user;
  auto uri = history::history_location({}, default_fs, user);
  auto address = webhdfs_for(uri, conf);
  if (!address) {
    if (why_not)
      *why_not = describe(address.error());
    return std::nullopt;
  }
  webhdfs::namenode_http nn{*address, auth};
  if (!nn.auth.kerberos)
    nn.auth.user = user; // SIMPLE: read as the application's user
  auto dir = history::open_history(uri, std::move(nn));
  if (!dir)
    return std::nullopt;
  // The AM copies its event log there as it ends, and the RM may report the
  // end first: a job that ended moments ago gets a few seconds.
  auto now_ms = std::chrono::duration_cast<milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  auto patience = now_ms - report.finish_time < 60000 ? seconds(10) : seconds(0);
  auto deadline = clock_type::now() + patience;
  for (;;) {
    if (auto logs = (*dir)->list())
      for (auto& log : *logs)
        if (log.app_id == app_id)
          if (auto text = (*dir)->read(log))
            if (auto events = history::parse_event_log(*text))
              return history::replay(*events);
    if (clock_type::now() >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(milliseconds(500));
  }
}

// The tasks as --logs shows them after the end: each task whose container
// the NodeManagers aggregated points at the aggregated file. The upload
// follows the application's end by a moment: until the RM says the
// NodeManagers are done (or, from an RM that does not say, for a job that
// ended in the last minutes), --logs waits, at most 60 s, for every
// container it prints; the others are read from their NodeManager.
job_status aggregated_view(const job_status& st, const logs_request& req,
                           aggregated_logs& logs, rm_target& target,
                           yarn::application_report report) {
  std::vector<std::string> wanted;
  std::set<std::string> hosts; // only their nodes' files are read
  for (auto& task : st.tasks)
    if ((req.task.empty() || to_string(task.task) == req.task) &&
        !task.container_id.empty()) {
      wanted.push_back(task.container_id);
      hosts.insert(task.host);
    }
  if (hosts.count("") != 0)
    hosts.clear(); // a task without its host: read every node's file
  auto now_ms = std::chrono::duration_cast<milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  auto recent = now_ms - report.finish_time < 300000;
  auto deadline = clock_type::now() + seconds(60);
  bool said = false;
  for (;;) {
    // Read what is there now, then see whether more may come.
    auto uploading = report.log_aggregation == yarn::log_aggregation_state::unknown
                         ? recent
                         : !yarn::is_final(report.log_aggregation);
    logs.refresh(hosts);
    auto missing = std::count_if(wanted.begin(), wanted.end(),
                                 [&logs](auto& id) { return logs.find(id) == nullptr; });
    if (missing == 0 || !uploading || clock_type::now() >= deadline)
      break;
    if (!said) {
      said = true;
      complain("waiting for the NodeManagers to aggregate the logs of " + st.app_id +
               " (at most 60 s)");
    }
    std::this_thread::sleep_for(seconds(1));
    if (auto again = target.rm.get_application_report(target.id,
                                                      hadoop::deadline_after(seconds(5))))
      report = std::move(*again);
  }
  auto view = st;
  for (auto& task : view.tasks) {
    std::string from;
    if (logs.find(task.container_id, &from) != nullptr)
      task.log_dir = from + " " + task.container_id;
  }
  return view;
}

} // namespace

bool hadoop_conf_known(const submit_options& opts) {
  return !find_hadoop_conf(backend_inputs_here(front_end::job_toml, "", opts.hadoop_conf))
              .first.empty();
}

int kill_yarn_application(const std::string& app_id, const submit_options& opts) {
  auto target = rm_for_application(app_id, opts);
  if (!target)
    return target.error();
  auto& [id, rm, conf, auth, caller] = *target;
  auto deadline = clock_type::now() + seconds(30);
  for (;;) {
    auto done = rm.force_kill_application(id, "killed by tony-submit --kill",
                                          hadoop::deadline_after(seconds(10)));
    if (!done) {
      complain("cannot kill " + app_id + ": " + done.error().message());
      return done.error().is_remote("ApplicationNotFoundException") ? exit_usage
                                                                    : exit_infra;
    }
    if (*done) {
      gate::forget_secret(app_id);
      say(app_id + " killed");
      return exit_succeeded;
    }
    if (clock_type::now() > deadline) {
      complain("the ResourceManager did not confirm the kill of " + app_id + " in 30 s");
      return exit_infra;
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
}

int status_yarn_application(const std::string& app_id, const submit_options& opts,
                            bool json) {
  auto target = rm_for_application(app_id, opts);
  if (!target)
    return target.error();
  auto& t = *target;
  auto got = report_of(t, app_id);
  if (!got)
    return got.error();
  auto& report = *got;
  std::string why_no_tasks;
  auto hidden = hidden_from(report, t.caller, app_id);
  auto tasks = hidden.empty() ? tasks_of(report, app_id, t.conf, t.auth, &why_no_tasks)
                              : std::nullopt;
  if (!hidden.empty())
    why_no_tasks = hidden;
  if (yarn::is_terminal(report.state))
    gate::forget_secret(app_id);
  if (json) {
    auto st = yarn::is_terminal(report.state)
                  ? submit_core::final_view(app_id, nullptr, report, tasks)
                  : tasks.value_or(job_status{});
    st.app_id = app_id;
    if (st.name.empty())
      st.name = report.name;
    // Without the AM's word: NEW until YARN runs the AM (yarn_state says
    // which of YARN's states), RUNNING once it does.
    if (!tasks && report.state == yarn::application_state::running)
      st.state = job_state::running;
    if (st.tracking_url.empty())
      st.tracking_url = report.tracking_url;
    auto j = nlohmann::json::parse(to_json(st));
    j["backend"] = "yarn";
    j["yarn_state"] = yarn::to_string(report.state);
    j["final_status"] = yarn::to_string(report.final);
    j["queue"] = report.queue;
    j["application_type"] = report.application_type;
    j["yarn_diagnostics"] = report.diagnostics;
    j["progress"] = report.progress;
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              << std::endl;
    return exit_succeeded;
  }
  std::cout << "application: " << app_id << "\nname: " << report.name
            << "\ntype: " << report.application_type << "\nqueue: " << report.queue
            << "\nstate: " << yarn::to_string(report.state)
            << "\nfinal status: " << yarn::to_string(report.final)
            << "\nprogress: " << static_cast<int>(report.progress * 100.0f + 0.5f) << "%"
            << "\ntracking url: " << report.tracking_url << "\n";
  if (!report.diagnostics.empty())
    std::cout << "diagnostics: " << report.diagnostics << "\n";
  if (!tasks && !why_no_tasks.empty())
    std::cout << "tasks: not shown: " << why_no_tasks << "\n";
  if (tasks)
    for (auto& task : tasks->tasks)
      std::cout << "task " << to_string(task.task) << ": " << to_string(task.state) << " "
                << task.host << ":" << task.port << " " << task.container_id << "\n";
  return exit_succeeded;
}

int logs_yarn_application(const std::string& app_id, const submit_options& opts,
                          const logs_request& req) {
  auto target = rm_for_application(app_id, opts);
  if (!target)
    return target.error();
  auto& t = *target;
  auto got = report_of(t, app_id);
  if (!got)
    return got.error();
  auto& report = *got;
  if (auto hidden = hidden_from(report, t.caller, app_id); !hidden.empty()) {
    complain(hidden);
    return exit_infra;
  }
  auto st = tasks_of(report, app_id, t.conf, t.auth);
  if (!st) {
    complain("cannot tell the tasks of " + app_id + " (" + yarn::to_string(report.state) +
             "): its ApplicationMaster does not answer and its event log is not in the "
             "history dir; try `yarn logs -applicationId " +
             app_id + "`");
    return exit_infra;
  }
  // A task's log_dir is its NodeManager's containerlogs page
  // (http://<nm>/node/containerlogs/<container>/<user>); the NM's web
  // service serves each file as plain text while the NM keeps the logs.
  auto from_node_manager = [&t](const task_status& task, const std::string& file) {
    return node_manager_file(task, file, t.auth);
  };
  auto aggregation = log_aggregation_of(t.conf);
  if (!yarn::is_terminal(report.state) || !aggregation.enabled)
    return print_task_logs(*st, req, from_node_manager);
  // Ended: the NodeManagers upload the containers' logs (log aggregation).
  auto user = report.user.empty() ? hadoop::current_user() : report.user;
  auto address = webhdfs_for(aggregation.root, t.conf);
  if (!address) {
    complain(describe(address.error()));
    return exit_usage;
  }
  webhdfs::namenode_http nn{*address, t.auth};
  if (!nn.auth.kerberos)
    nn.auth.user = user; // SIMPLE: read as the application's user
  aggregated_logs logs{aggregation, user, app_id, nn};
  auto view = aggregated_view(*st, req, logs, t, report);
  for (auto& problem : logs.problems())
    complain("warning: aggregated logs: " + problem);
  return print_task_logs(
      view, req, [&](const task_status& task, const std::string& file) {
        if (auto* c = logs.find(task.container_id)) {
          auto* f = c->find(file);
          return f ? std::optional<std::string>{f->content} : std::nullopt;
        }
        return from_node_manager(task, file);
      });
}

} // namespace tony
