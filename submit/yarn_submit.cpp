// tony-submit on YARN: checks the job against the cluster, stages it,
// submits it to the ResourceManager, and follows it to its end. --status,
// --kill and --logs are submit/yarn_query.cpp's.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include <caf/all.hpp>

#include "base/text.hpp"
#include "config/job_json.hpp"
#include "config/setting_names.hpp"
#include "hadoop/configuration.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/webhdfs.hpp"
#include "hadoop/yarn/application_client.hpp"
#include "hadoop/yarn/node_clock.hpp"
#include "hadoop/yarn/protocols.hpp"
#include "messages/error.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/staging/node_bundle.hpp"
#include "runtime/staging/stager.hpp"
#include "runtime/status_printer.hpp"
#include "runtime/yarn/am_env.hpp"
#include "submit/am_watcher.hpp"
#include "submit/backend_choice.hpp"
#include "submit/event_output.hpp"
#include "submit/job_control.hpp"
#include "submit/job_locations.hpp"
#include "submit/job_tokens.hpp"
#include "submit/queue_check.hpp"
#include "submit/shared_cache.hpp"
#include "submit/shipping.hpp"
#include "submit/staging_sweep.hpp"
#include "submit/submit.hpp"
#include "submit/yarn_common.hpp"
#include "web/job_page.hpp"
#include "web/proxy_filter.hpp"

namespace fs = std::filesystem;

namespace tony {

using namespace yarn_cli;

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Bad job.toml or client configuration: said, and exit 2.
int usage_error(const caf::error& err) {
  complain(describe(err));
  return exit_usage;
}

// The message for a ResourceManager that did not answer a first call.
std::string rm_failure(const hadoop::error& err, const std::string& conf_dir) {
  // Authentication problems carry their own what-to-do.
  if (err.code() == hadoop::error_code::auth || err.is_remote("AccessControlException"))
    return err.message();
  // With HA the failover's message names every RM and what to check.
  if (err.message().rfind("no ResourceManager answered", 0) == 0)
    return "cannot reach the ResourceManagers: " + err.message();
  return "cannot reach the ResourceManager: " + err.message() +
         " (is it running? check yarn.resourcemanager.address in " + conf_dir +
         "/yarn-site.xml)";
}

const char* application_type(const std::string& framework) {
  if (framework == "tensorflow")
    return "TENSORFLOW";
  if (framework == "pytorch")
    return "PYTORCH";
  if (framework == "horovod")
    return "HOROVOD";
  return "TONY";
}

log_follower::reader node_manager_log_reader(webhdfs::http_auth auth) {
  return [auth](const task_status& task, const std::string& file, int64_t offset,
                size_t max_bytes) -> std::optional<std::string> {
    auto got = node_manager_file(task, file, auth);
    if (!got)
      return std::nullopt;
    auto body = node_manager_log_contents(*got);
    if (static_cast<int64_t>(body.size()) <= offset)
      return std::string{};
    return body.substr(static_cast<size_t>(offset), max_bytes);
  };
}

// Follows the application to its end; returns tony-submit's exit code.
int follow(yarn::application_client& rm, const yarn::application_id& id,
           const job_spec* job, const submit_options& opts, const std::string& secret,
           const std::string& history_uri = {}, const webhdfs::http_auth& auth = {}) {
  auto quiet = opts.quiet;
  auto interrupted = [&opts] {
    return opts.interrupted && opts.interrupted->load() != 0;
  };
  client_config cfg;
  caf::actor_system sys{cfg};
  am_watcher watcher{sys, secret};
  bool refusal_said = false;
  status_view view{std::cout, !quiet && status_view::stdout_is_terminal(), quiet};
  view.tensorboard_probe(&http::tensorboard_address);
  auto follower = make_follower(opts, node_manager_log_reader(auth));
  auto app = yarn::to_string(id);
  std::string last_yarn_state;
  bool kill_sent = false;
  client_hook hook{opts.client};
  bool stopped_for_client = false;
  auto last_report_ok = clock_type::now();
  auto last_am_ok = last_report_ok; // the AM answered a poll while no RM did
  std::optional<job_status> last_status;
  int32_t last_attempt = 0;
  std::string last_recovery;
  for (;;) {
    auto client_stop = hook.stop_reason();
    if ((interrupted() || !client_stop.empty()) && !kill_sent) {
      kill_sent = true;
      stopped_for_client = !interrupted();
      view.note(stopped_for_client ? client_stop : "interrupted: killing " + app);
      auto killed = rm.force_kill_application(
          id,
          stopped_for_client ? "killed by tony-submit: " + client_stop
                             : "killed by tony-submit (interrupted)",
          hadoop::deadline_after(seconds(15)));
      if (!killed)
        complain("could not kill " + app + ": " + killed.error().message());
    }
    auto report = rm.get_application_report(id, hadoop::deadline_after(seconds(5)));
    if (!report && report.error().is_remote("ApplicationNotFoundException")) {
      // An RM restarted without recovery (or another RM without the state
      // store) has forgotten the job: no poll will bring it back.
      complain("the ResourceManager no longer knows " + app +
               " (it restarted or failed over without recovering its applications): " +
               report.error().message() +
               "; its NodeManagers stop the job's containers when they register with it");
      return exit_infra;
    }
    if (!report) {
      // No RM answers, but the AM may: it decides the job's end whatever the
      // RMs do, and keeps trying to tell them (at most its rm_failure_limit).
      // Its answers count as contact, so a job that ends while the RMs
      // restart is followed to the end the RM reports once it is back.
      if (watcher.connected() && !watcher.lost()) {
        if (auto st = watcher.poll(seconds(2))) {
          last_am_ok = clock_type::now();
          last_status = *st;
          view.show(*st);
        }
      }
      if (clock_type::now() - std::max(last_report_ok, last_am_ok) > seconds(60)) {
        if (auto end = watcher.final_status()) {
          // The AM said how the job ended; YARN's record of it is unknown.
          gate::forget_secret(app);
          view.leave(*end);
          say("job " + app + (job ? " (" + job->name + ")" : std::string{}) + " " +
              end->state +
              " (its AM's final status: no ResourceManager answered for 60 s "
              "after the AM ended, so YARN's record of it is unknown; tony-submit "
              "--status " +
              app + ")");
          if (!end->diagnostics.empty())
            say("diagnostics: " + end->diagnostics);
          say("last ResourceManager error: " + report.error().message());
          return end->state == "SUCCEEDED" ? exit_succeeded : exit_failed;
        }
        complain("lost the ResourceManager for 60 s: " + report.error().message() +
                 "; the application may still run (tony-submit --status " + app + ")");
        return exit_infra;
      }
      std::this_thread::sleep_for(milliseconds(500));
      continue;
    }
    last_report_ok = clock_type::now();
    auto state = yarn::to_string(report->state);
    if (state != last_yarn_state) {
      last_yarn_state = state;
      if (opts.events)
        opts.events->yarn_state(app, state, report->tracking_url);
      view.note("YARN: " + app + " " + state +
                (report->tracking_url.empty() ? "" : " (" + report->tracking_url + ")"));
    }
    // A new AM attempt (the last one died): say so; the watcher follows it
    // to its own address.
    if (report->current_attempt && report->current_attempt->attempt > last_attempt) {
      if (last_attempt > 0)
        view.note("YARN: " + app + " AM attempt " +
                  std::to_string(report->current_attempt->attempt) +
                  " (the previous AM ended without unregistering)");
      last_attempt = report->current_attempt->attempt;
    }
    // The RM's web proxy URL: it works wherever the RM's UI does.
    if (report->state == yarn::application_state::running)
      view.tracking_url(report->tracking_url);
    if (report->state == yarn::application_state::running && report->rpc_port > 0 &&
        !report->host.empty() && report->host != "N/A")
      if (watcher.connect(report->host, static_cast<uint16_t>(report->rpc_port)))
        watcher.watch_end();
    if (!watcher.refusal().empty() && !refusal_said) {
      refusal_said = true;
      view.note("cannot follow the tasks: " + watcher.refusal());
    }
    // The final status comes from the AM itself (it waits for us to have
    // it); until then the polls show the job.
    if (auto st = watcher.final_status(); st || (st = watcher.poll(seconds(2)))) {
      // What a later AM attempt did with the job: adopted it, or started over.
      if (st->recovery != last_recovery && !st->recovery.empty())
        view.note(st->recovery);
      last_recovery = st->recovery;
      last_status = *st;
      view.show(*st);
      if (follower)
        for (auto& line : follower->poll(*st))
          view.output(line);
      if (opts.events)
        opts.events->show(*st);
      hook.on_status(*st);
    }
    if (yarn::is_terminal(report->state)) {
      // YARN reports the end as soon as the AM has unregistered, a moment
      // before the AM hands its waiters the final status. Leaving before it
      // arrives would cost the AM its linger (it waits up to 5 s for every
      // client that waits for the end to say it has it) with the job's
      // container still held: so wait a little for it, never for an AM
      // that is gone.
      if (watcher.connected() && !watcher.lost() && !watcher.final_status()) {
        auto until = clock_type::now() + seconds(2);
        while (!watcher.final_status() && !watcher.lost() && clock_type::now() < until)
          std::this_thread::sleep_for(milliseconds(20));
        if (auto end = watcher.final_status())
          last_status = *end;
      }
      gate::forget_secret(app);
      if (follower && last_status)
        for (auto& line : follower->drain(*last_status))
          view.output(line);
      if (last_status)
        view.leave(*last_status);
      auto final = yarn::to_string(report->final);
      say("job " + app + (job ? " (" + job->name + ")" : std::string{}) + " " + state +
          "/" + final);
      if (!report->diagnostics.empty())
        say("diagnostics: " + report->diagnostics);
      // An AM that could not unregister (no RM answered it in time) left
      // YARN only its container's exit: its own word on the end says why.
      if (auto end = watcher.final_status();
          end && !end->diagnostics.empty() &&
          report->diagnostics.find(end->diagnostics) == std::string::npos)
        say("the AM's diagnostics: " + end->diagnostics);
      if (auto clock =
              yarn::describe_am_clock_ahead(report->diagnostics, report->finish_time))
        say(*clock);
      say("logs: yarn logs -applicationId " + app);
      if (!quiet && !history_uri.empty())
        say("event log: " + history_uri + "/" + app + ".jsonl (tony-history --dir " +
            history_uri + " show " + app + ")");
      auto grace = milliseconds(job ? job->policy.stop_grace_ms : 3000);
      auto code = hook.exit_code(report->state == yarn::application_state::finished &&
                                         report->final == yarn::final_status::succeeded
                                     ? exit_succeeded
                                     : exit_failed,
                                 stopped_for_client, grace);
      if (opts.events)
        opts.events->finished(final_view(app, job, *report, last_status), code);
      return code;
    }
    std::this_thread::sleep_for(milliseconds(watcher.connected() ? 250 : 100));
  }
}

} // namespace

namespace {

// Asks the cluster can never grant fail here, before anything is submitted:
// the message, or empty.
std::string unfit_ask(const job_spec& job, const resource& max) {
  for (auto& type : job.tasks)
    for (int32_t i = 0; i < type.instances; ++i)
      if (!fits(type.capability_of(i), max))
        return (type.index_capability.count(i) != 0
                    ? "task " + type.name + ":" + std::to_string(i)
                    : "each " + type.name + " task") +
               " asks for " + to_string(type.capability_of(i)) +
               ", but the largest container this cluster grants is " + to_string(max) +
               "; " + what_to_lower(job, &type, type.capability_of(i), max) +
               " or use a larger queue/cluster";
  if (!fits(job.am.capability, max))
    return "[am] asks for " + to_string(job.am.capability) +
           ", but the largest container this cluster grants is " + to_string(max);
  return {};
}

// The tokens the AM gets, and what the user is told about them; or the
// exit code.
std::variant<job_credentials, int> credentials_for(const rm_connection& c,
                                                   const hadoop_setup& setup,
                                                   const job_spec& job, bool quiet) {
  auto creds = gather_job_credentials(setup.conf, job.security, c.ipc, c.kerberos);
  if (!creds) {
    complain(describe(creds.error()));
    return creds.error().code() == static_cast<uint8_t>(errc::invalid_config)
               ? exit_usage
               : exit_infra;
  }
  auto note = token_lifetime_note(creds->hdfs, !c.keytab.empty(),
                                  std::chrono::system_clock::now());
  if (!quiet && !note.empty())
    say(note);
  return std::move(*creds);
}

// What the AM needs on a secure cluster: the CA its HTTPS calls check, and
// with a keytab login the keytab (staged readable by the user only) and
// the plan to get new tokens with it.
caf::expected<void> stage_security(const rm_connection& c, const job_credentials& creds,
                                   const webhdfs::http_auth& auth,
                                   staging::stager& stager, yarn::container_launch& am) {
  if (!auth.ca_file.empty()) {
    auto ca = stager.put(auth.ca_file, yarn_env::ca_resource, false);
    if (!ca)
      return ca.error();
    am.resources.push_back(*ca);
    am.env[yarn_env::ca_file] = yarn_env::ca_resource;
  }
  if (c.keytab.empty() || creds.plan.namenodes.empty())
    return caf::unit;
  auto keytab = stager.put_private(c.keytab, yarn_env::keytab_resource);
  if (!keytab)
    return keytab.error();
  am.resources.push_back(*keytab);
  hdfs::renewal_plan plan{creds.plan, c.kerberos->principal(), yarn_env::keytab_resource};
  am.env[yarn_env::token_renewal] = hdfs::to_json(plan);
  return caf::unit;
}

// What the RM says about application `id`, for the staging sweep.
rm_verdict verdict_of(yarn::application_client& rm, const yarn::application_id& id) {
  auto report = rm.get_application_report(id, hadoop::deadline_after(seconds(5)));
  if (report)
    return {yarn::is_terminal(report->state) ? rm_verdict::ended : rm_verdict::live};
  if (report.error().is_remote("ApplicationNotFoundException"))
    return {rm_verdict::unknown};
  return {rm_verdict::no_answer};
}

// tony-submit on its way out: the job's staging dir goes once the RM says
// the application is over (its AM, killed, may not have removed it).
void remove_own_staging(yarn::application_client& rm, const yarn::application_id& id,
                        staging::stager& stager) {
  auto v = verdict_of(rm, id);
  if (v.kind != rm_verdict::ended && v.kind != rm_verdict::unknown)
    return; // it may still run (the RM did not answer): the next sweep decides
  if (auto ok = stager.remove_all(); !ok)
    complain("warning: could not remove the staging dir " + stager.uri() + ": " +
             describe(ok.error()));
}

// The next submit sweeps the staging root of ended jobs' dirs
// (submit/staging_sweep.hpp); `own` is this job's.
void sweep_ended_jobs(yarn::application_client& rm, const std::string& root,
                      const webhdfs::namenode_http& nn, int64_t cluster_ts,
                      const std::string& own, bool quiet) {
  auto now_ms = std::chrono::duration_cast<milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  sweep_options sweep;
  sweep.except = own;
  auto result = sweep_staging(
      root, nn, [&rm](const yarn::application_id& id) { return verdict_of(rm, id); },
      cluster_ts, now_ms, sweep);
  if (!quiet && !result.removed.empty())
    say("removed the staging dirs of " +
        base::plural(static_cast<int64_t>(result.removed.size()), "ended job") +
        " under " + root);
  // One line, whatever the count: a shared root may hold dirs this user
  // cannot remove, and every submit would say so again.
  if (!result.problems.empty())
    complain("warning: sweeping " + root + ": " + result.problems.front() +
             (result.problems.size() > 1
                  ? " (and " + std::to_string(result.problems.size() - 1) + " more)"
                  : std::string{}));
}

// The RUNNING nodes as TONY_NODES' value, or empty. Warns when the job
// needs more than its queue may ever use on these nodes (submit/queue_check).
std::string node_places(yarn::application_client& rm, const job_spec& job) {
  auto nodes = rm.get_cluster_nodes(hadoop::deadline_after(seconds(10)));
  if (!nodes)
    return {};
  if (auto tree = rm.get_queue_tree("root", hadoop::deadline_after(seconds(10))))
    if (auto warning = queue_warning(job, *nodes, *tree); !warning.empty())
      complain(warning);
  std::string places;
  size_t running = 0;
  for (auto& node : *nodes)
    if (node.state == "RUNNING") {
      places += (places.empty() ? "" : ",") + node.host + "=" + node.rack;
      ++running;
    }
  return running <= yarn_env::nodes_in_asks_limit ? places : std::string{};
}

// yarn.resourcemanager.placement-constraints.handler when it enables
// SchedulingRequests (doc/architecture.md "Spread placement"), or empty.
std::string constraints_handler(const hadoop::configuration& conf) {
  auto handler = base::lower(base::trim(
      conf.get_or("yarn.resourcemanager.placement-constraints.handler", "disabled")));
  return handler == "scheduler" || handler == "placement-processor" ? handler
                                                                    : std::string{};
}

} // namespace

int submit_yarn(const job_spec& job, const submit_options& opts) {
  auto setup = load_hadoop(opts.hadoop_conf, job.cluster.hadoop_conf);
  if (auto code = std::get_if<int>(&setup))
    return *code;
  auto& [conf_dir, conf] = std::get<hadoop_setup>(setup);
  auto connection = connect_rm(std::get<hadoop_setup>(setup), opts, job.security);
  if (auto code = std::get_if<int>(&connection))
    return *code;
  auto& client = std::get<rm_connection>(connection);
  auto& user = client.user;
  auto* rm = &client.rm;
  auto fresh = rm->get_new_application(hadoop::deadline_after(seconds(20)));
  if (!fresh) {
    complain(rm_failure(fresh.error(), conf_dir));
    return exit_infra;
  }
  auto app = yarn::to_string(fresh->id);
  if (auto unfit = unfit_ask(job, fresh->max_capability); !unfit.empty()) {
    complain(unfit);
    return exit_usage;
  }
  // Tokens before staging: a cluster that refuses them costs no upload.
  auto got_creds =
      credentials_for(client, std::get<hadoop_setup>(setup), job, opts.quiet);
  if (auto code = std::get_if<int>(&got_creds))
    return *code;
  auto& creds = std::get<job_credentials>(got_creds);
  auto auth = http_auth_of(client, job.security);

  // Stage what the job ships.
  auto where = locate_job(job, conf, app, user);
  if (!where)
    return usage_error(where.error());
  auto& staging_uri = where->staging_uri;
  webhdfs::namenode_http webhdfs{where->staging_webhdfs, auth};
  auto stager = staging::make_stager(staging_uri, webhdfs);
  if (!stager)
    return usage_error(stager.error());
  fs::path scratch = private_scratch(app, to_json(job));
  if (scratch.empty())
    return exit_infra;
  std::error_code ec;
  auto cleanup_scratch = [&] { fs::remove_all(scratch, ec); };
  auto fail_staging = [&](const caf::error& err) {
    complain("staging to " + staging_uri + " failed: " + describe(err));
    (*stager)->remove_all();
    cleanup_scratch();
    return exit_infra;
  };
  std::vector<local_resource> am_resources;
  std::vector<local_resource> executor_resources;
  auto stage = [&](const std::string& path, const std::string& name, bool archive,
                   bool for_am, bool for_executor) -> caf::expected<void> {
    auto res = (*stager)->put(path, name, archive);
    if (!res)
      return res.error();
    if (for_am)
      am_resources.push_back(*res);
    if (for_executor)
      executor_resources.push_back(*res);
    return caf::unit;
  };
  cache_use cache{user, webhdfs, stager->get(), complain};
  std::string am_program = std::string{"./"} + yarn_env::bundle_link + "/bin/tony-am";
  std::string install_dir = job.cluster.install_dir;
  if (install_dir.empty()) {
    auto root = staging_uri.substr(0, staging_uri.rfind('/'));
    auto res = stage_node_bundle(root + "/bin", opts.bin_dir, scratch.string(), cache);
    if (!res)
      return fail_staging(res.error());
    am_resources.push_back(*res);
    executor_resources.push_back(*res);
  } else {
    am_program = install_dir + "/tony-am";
  }
  if (auto ok = stage(scratch.string() + "/job.json", "job.json", false, true, false);
      !ok)
    return fail_staging(ok.error());
  // A local venv is staged once per content under <root>/envs/<sha256>/, as
  // the binaries are: an unchanged environment (tony.pack_env) is not
  // uploaded again. Localized PRIVATE, like the binaries: the NodeManager
  // keeps it in the user's cache, so the next job with the same environment
  // on that node starts without downloading or unpacking it again.
  auto root = staging_uri.substr(0, staging_uri.rfind('/'));
  auto stage_env = [&](const std::string& path, const std::string& name, bool archive) {
    return stage_once(root + "/envs", path, name, archive, cache);
  };
  auto shipped = ship_job_files(job, **stager, scratch.string(), conf, auth, stage_env);
  if (!shipped) {
    if (shipped.error().code() != static_cast<uint8_t>(errc::unsatisfiable))
      return fail_staging(shipped.error());
    complain(describe(shipped.error()));
    (*stager)->remove_all();
    cleanup_scratch();
    return exit_usage;
  }
  executor_resources.insert(executor_resources.end(), shipped->common.begin(),
                            shipped->common.end());
  cleanup_scratch();

  // The AM's container.
  yarn::submission_context ctx;
  ctx.id = fresh->id;
  ctx.name = job.name;
  ctx.queue = job.queue;
  ctx.application_type = application_type(job.framework);
  ctx.am_resource = job.am.capability;
  ctx.max_app_attempts = job.am.max_app_attempts;
  // A later AM attempt adopts the running tasks (doc/operations.md "AM
  // restart"): YARN must not stop them with the AM that died.
  ctx.keep_containers_across_attempts = job.am.max_app_attempts >= 2;
  ctx.tags = job.tags;
  ctx.node_label = job.node_label;
  ctx.am_launch.resources = am_resources;
  if (auto ok = stage_security(client, creds, auth, **stager, ctx.am_launch); !ok)
    return fail_staging(ok.error());
  auto scheduler = yarn::rm_peers(conf, "yarn.resourcemanager.scheduler.address", 8030);
  if (!scheduler) {
    complain(scheduler.error().message());
    (*stager)->remove_all();
    return exit_usage;
  }
  ctx.am_launch.env[yarn_env::scheduler] = yarn::format_rm_peers(*scheduler);
  ctx.am_launch.env[yarn_env::executor_resources] = resources_to_json(executor_resources);
  if (!shipped->by_type.empty())
    ctx.am_launch.env[yarn_env::type_resources] =
        type_resources_to_json(shipped->by_type);
  ctx.am_launch.env[yarn_env::staging_uri] = staging_uri;
  if (auto places = node_places(*rm, job); !places.empty())
    ctx.am_launch.env[yarn_env::nodes] = places;
  if (auto handler = constraints_handler(conf); !handler.empty())
    ctx.am_launch.env[yarn_env::placement_constraints] = handler;
  if (!webhdfs.base.empty())
    ctx.am_launch.env[yarn_env::webhdfs_address] = webhdfs.base;
  if (!install_dir.empty())
    ctx.am_launch.env[yarn_env::install_dir] = install_dir;
  ctx.am_launch.env["HADOOP_USER_NAME"] = user;
  // Who may talk to the AM's tracking page directly (web/proxy_filter).
  std::string proxies;
  for (auto& p : yarn::web_proxies(conf))
    proxies += (proxies.empty() ? "" : ",") + p;
  ctx.am_launch.env[http::web_proxies_env] = proxies;
  // The job secret: a Credentials secret in the AM's tokens, which the
  // NodeManager writes to the container's token file (runtime/gate/job_secret),
  // beside the job's delegation tokens; the RM renews those it can and
  // cancels them at the end (cancel_tokens_when_complete).
  auto secret = gate::make_job_secret();
  if (secret.empty()) {
    complain("cannot generate the job secret (OpenSSL RAND_bytes failed)");
    (*stager)->remove_all();
    return exit_infra;
  }
  auto am_tokens = creds.tokens;
  am_tokens.add_secret(gate::secret_alias, secret);
  ctx.am_launch.tokens = hadoop::serialize_credentials(am_tokens);
  ctx.cancel_tokens_when_complete = true;
  // Where the AM keeps the event log when the job ends (doc/tracking.md).
  auto history_uri = where->history_uri;
  ctx.am_launch.env[yarn_env::history_uri] = history_uri;
  if (!where->history_webhdfs.empty())
    ctx.am_launch.env[yarn_env::history_webhdfs] = where->history_webhdfs;
  ctx.am_launch.commands = {"exec",       am_program, "--backend",          "yarn",
                            "--job",      "job.json", "--app-id",           app,
                            "--work-dir", ".",        "1><LOG_DIR>/am.log", "2>&1"};
  ctx.am_launch.env = escape_env(std::move(ctx.am_launch.env));
  auto submitted = rm->submit_application(ctx, hadoop::deadline_after(seconds(30)));
  if (!submitted) {
    complain("the ResourceManager refused " + app + ": " + submitted.error().message());
    (*stager)->remove_all();
    return exit_infra;
  }
  if (auto kept = gate::save_secret(app, secret); !kept)
    complain("--status will not show the tasks of " + app + ": " +
             describe(kept.error()));
  if (!opts.quiet)
    say("submitted " + app + " (" + job.name + ", " +
        base::plural(job.total_tasks(), "task") + ") to YARN queue " + job.queue +
        "; staged in " + staging_uri);
  if (opts.events)
    opts.events->submitted(app, "yarn", job.name, job.total_tasks(),
                           {{"queue", job.queue}, {"staging", staging_uri}});
  sweep_ended_jobs(*rm, staging_uri.substr(0, staging_uri.rfind('/')), webhdfs,
                   fresh->id.cluster_timestamp, app, opts.quiet);
  if (opts.detach) {
    say("detached; follow it with: tony-submit --status " + app);
    return exit_succeeded;
  }
  auto code = follow(*rm, fresh->id, &job, opts, secret, history_uri, auth);
  remove_own_staging(*rm, fresh->id, **stager);
  return code;
}

} // namespace tony
