// tony-submit on YARN: checks the job against the cluster, stages it,
// submits it to the ResourceManager, and follows it to its end (the rules
// in submit/follow_core.hpp; the loop here carries them out). --status,
// --kill and --logs are submit/yarn_query.cpp's.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include <caf/all.hpp>

#include "base/access_list.hpp"
#include "base/text.hpp"
#include "config/job_json.hpp"
#include "config/setting_names.hpp"
#include "hadoop/configuration.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/webhdfs.hpp"
#include "hadoop/yarn/application_client.hpp"
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
#include "submit/follow_core.hpp"
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
int usage_error(const error& err) {
  complain(describe(err));
  return exit_usage;
}

// The message for a ResourceManager that did not answer a first call.
std::string rm_failure(const hadoop::error& err, const std::string& conf_dir) {
  // Authentication problems carry their own what-to-do; a refused proxy
  // user is the cluster's word (hadoop.proxyuser.*).
  if (err.code() == hadoop::error_code::auth || err.is_remote("AccessControlException") ||
      err.is_remote("AuthorizationException"))
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

// The steady clock in milliseconds: the follow core's time.
int64_t now_ms() {
  return std::chrono::duration_cast<milliseconds>(clock_type::now().time_since_epoch())
      .count();
}

// Carries out the follow core's commands (submit/follow_core.hpp) with the
// RM, the AM watcher and the terminal, and turns what they answer into the
// core's events.
class follow_io {
public:
  follow_io(yarn::application_client& rm, const yarn::application_id& id,
            am_watcher& watcher, status_view& view, const submit_options& opts,
            std::unique_ptr<log_follower> follower)
      : rm_(rm)
      , id_(id)
      , app_(yarn::to_string(id))
      , watcher_(watcher)
      , view_(view)
      , opts_(opts)
      , follower_(std::move(follower))
      , hook_{opts.client} {
    // nop
  }

  /// Gives `e` to `core` with each answer it leads to, carrying out every
  /// command; the round's last command says how long to wait, or the exit.
  void feed(submit_core::follow_core& core, submit_core::event e) {
    std::vector<submit_core::event> todo{std::move(e)};
    for (size_t i = 0; i < todo.size(); ++i)
      for (auto& cmd : core.handle(todo[i], now_ms()))
        std::visit([&](const auto& x) { run(x, todo); }, cmd);
  }

  std::optional<int> exit_code;
  milliseconds next_wait{0};

private:
  using answers = std::vector<submit_core::event>;

  // What the watcher knows now, said before every answer; am_link last.
  void sync(answers& out) const {
    if (!watcher_.refusal().empty())
      out.emplace_back(submit_core::am_refused{watcher_.refusal()});
    if (auto end = watcher_.final_status())
      out.emplace_back(submit_core::am_final{std::move(*end)});
    out.emplace_back(submit_core::am_link{watcher_.connected(), watcher_.lost()});
  }

  void run(const submit_core::kill_app& c, answers& out) {
    auto killed =
        rm_.force_kill_application(id_, c.reason, hadoop::deadline_after(c.timeout));
    sync(out);
    out.emplace_back(submit_core::kill_result{killed ? "" : killed.error().message()});
  }

  void run(const submit_core::ask_rm& c, answers& out) {
    auto report = rm_.get_application_report(id_, hadoop::deadline_after(c.timeout));
    sync(out);
    if (report)
      out.emplace_back(submit_core::rm_report{std::move(*report)});
    else
      out.emplace_back(submit_core::rm_error{
          report.error().message(),
          report.error().is_remote("ApplicationNotFoundException")});
  }

  void run(const submit_core::connect_am& c, answers& out) {
    if (watcher_.connect(c.host, c.port))
      watcher_.watch_end();
    sync(out);
  }

  void run(const submit_core::poll_am& c, answers& out) {
    auto st = watcher_.poll(c.timeout);
    sync(out);
    out.emplace_back(submit_core::am_status{std::move(st)});
  }

  void run(const submit_core::await_final& c, answers& out) {
    auto until = clock_type::now() + c.up_to;
    while (!watcher_.final_status() && !watcher_.lost() && clock_type::now() < until)
      std::this_thread::sleep_for(milliseconds(20));
    sync(out);
  }

  void run(const submit_core::show& c, answers&) {
    view_.show(c.status);
    if (!c.pass_on)
      return;
    if (follower_)
      for (auto& line : follower_->poll(c.status))
        view_.output(line);
    if (opts_.events)
      opts_.events->show(c.status);
    hook_.on_status(c.status);
  }

  void run(const submit_core::drain_logs& c, answers&) {
    if (follower_)
      for (auto& line : follower_->drain(c.status))
        view_.output(line);
  }

  void run(const submit_core::yarn_state& c, answers&) {
    if (opts_.events)
      opts_.events->yarn_state(app_, c.state, c.tracking_url);
  }

  void run(const submit_core::finished& c, answers&) {
    if (opts_.events)
      opts_.events->finished(c.status, c.code);
  }

  void run(const submit_core::stop_client& c, answers&) {
    if (opts_.client != nullptr)
      opts_.client->stop(c.grace);
  }

  void run(const submit_core::next_round& c, answers&) { next_wait = c.interval; }
  void run(const submit_core::exit_with& c, answers&) { exit_code = c.code; }
  void run(const submit_core::note& c, answers&) { view_.note(c.line); }
  void run(const submit_core::say& c, answers&) { say(c.line); }
  void run(const submit_core::complain& c, answers&) { complain(c.line); }
  void run(const submit_core::tracking_url& c, answers&) { view_.tracking_url(c.url); }
  void run(const submit_core::leave& c, answers&) { view_.leave(c.status); }
  void run(const submit_core::forget_secret&, answers&) { gate::forget_secret(app_); }

  yarn::application_client& rm_;
  const yarn::application_id& id_;
  std::string app_;
  am_watcher& watcher_;
  status_view& view_;
  const submit_options& opts_;
  std::unique_ptr<log_follower> follower_;
  client_hook hook_;
};

// Follows the application to its end; returns tony-submit's exit code. The
// rules are the follow core's; this loop begins each round, and sleeps
// between rounds as long as the core says.
int follow(yarn::application_client& rm, const yarn::application_id& id,
           const job_spec* job, const submit_options& opts, const std::string& secret,
           const std::string& history_uri = {}, const webhdfs::http_auth& auth = {}) {
  client_config cfg;
  caf::actor_system sys{cfg};
  am_watcher watcher{sys, secret};
  status_view view{std::cout, !opts.quiet && status_view::stdout_is_terminal(),
                   opts.quiet};
  view.tensorboard_probe(&http::tensorboard_address);
  auto follower = make_follower(opts, node_manager_log_reader(auth));
  follow_io io{rm, id, watcher, view, opts, std::move(follower)};
  client_hook hook{opts.client};
  submit_core::follow_core core{{yarn::to_string(id), job, history_uri, opts.quiet},
                                now_ms()};
  for (;;) {
    if (opts.interrupted && opts.interrupted->load() != 0)
      io.feed(core, submit_core::interrupt{});
    if (auto why = hook.stop_reason(); !why.empty())
      io.feed(core, submit_core::client_stop{why, opts.client->ended().value_or(1)});
    io.feed(core, submit_core::tick{});
    if (io.exit_code)
      return *io.exit_code;
    std::this_thread::sleep_for(io.next_wait);
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
result<job_credentials, int> credentials_for(const rm_connection& c,
                                             const hadoop_setup& setup,
                                             const job_spec& job, bool quiet) {
  auto creds =
      gather_job_credentials(setup.conf, job.security, c.ipc, c.kerberos, c.proxy_user);
  if (!creds) {
    complain(describe(creds.error()));
    return creds.error().code() == errc::invalid_config ? exit_usage : exit_infra;
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
expected<void> stage_security(const rm_connection& c, const job_credentials& creds,
                              const webhdfs::http_auth& auth, staging::stager& stager,
                              yarn::container_launch& am) {
  if (!auth.ca_file.empty()) {
    auto ca = stager.put(auth.ca_file, yarn_env::ca_resource, false);
    if (!ca)
      return ca.error();
    am.resources.push_back(*ca);
    am.env[yarn_env::ca_file] = yarn_env::ca_resource;
  }
  if (c.keytab.empty() || creds.plan.namenodes.empty())
    return ok;
  auto keytab = stager.put_private(c.keytab, yarn_env::keytab_resource);
  if (!keytab)
    return keytab.error();
  am.resources.push_back(*keytab);
  hdfs::renewal_plan plan{creds.plan, c.kerberos->principal(), yarn_env::keytab_resource};
  am.env[yarn_env::token_renewal] = hdfs::to_json(plan);
  return ok;
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

// The application's VIEW_APP and MODIFY_APP ACLs (doc/operations.md "View
// ACLs"): for the RM, in the AM's launch context, and for the AM, which
// enforces them on its page when the cluster enables ACLs and gives them to
// every executor container for the NodeManagers.
void set_acls(const security_spec& security, const hadoop::configuration& conf,
              yarn::container_launch& am_launch) {
  base::access_list view{security.view_acl};
  base::access_list modify{security.modify_acl};
  am_launch.acls = {{"VIEW_APP", view.to_string()}, {"MODIFY_APP", modify.to_string()}};
  if (!view.nobody())
    am_launch.env[yarn_env::view_acl] = view.to_string();
  if (!modify.nobody())
    am_launch.env[yarn_env::modify_acl] = modify.to_string();
  if (base::lower(base::trim(conf.get_or("yarn.acl.enable", "false"))) == "true") {
    am_launch.env[yarn_env::acls_enabled] = "true";
    am_launch.env[yarn_env::admin_acl] = conf.get_or("yarn.admin.acl", "*");
  }
}

// -- the submission's phases ----------------------------------------------------

// One submission as submit_yarn's phases fill it in, in order: the
// application the RM granted, its tokens, where it is staged, and what the
// AM and the executors localize from there.
struct submission {
  const job_spec& job;
  const submit_options& opts;
  rm_connection& client;
  const hadoop::configuration& conf;
  yarn::application_id id;
  std::string app;
  const job_credentials& creds;
  webhdfs::http_auth auth;
  job_locations where{};
  webhdfs::namenode_http webhdfs{};
  std::unique_ptr<staging::stager> stager{};
  std::string am_program{};
  std::vector<local_resource> am_resources{};
  std::vector<local_resource> executor_resources{};
  std::map<std::string, std::vector<local_resource>> type_resources{};
};

// A failed staging: said, the staging dir removed, and exit 3.
int staging_failed(submission& s, const error& err) {
  complain("staging to " + s.where.staging_uri + " failed: " + describe(err));
  s.stager->remove_all();
  return exit_infra;
}

// The job's staging dir and its stager; else said, and exit 2.
std::optional<int> open_staging(submission& s) {
  auto where = locate_job(s.job, s.conf, s.app, s.client.user);
  if (!where)
    return usage_error(where.error());
  s.where = std::move(*where);
  s.webhdfs = webhdfs::namenode_http{s.where.staging_webhdfs, s.auth};
  auto stager = staging::make_stager(s.where.staging_uri, s.webhdfs);
  if (!stager)
    return usage_error(stager.error());
  s.stager = std::move(*stager);
  return std::nullopt;
}

// Stages what the job ships: the binaries (unless [cluster] install_dir has
// them), job.json, the environment and the job's files. On failure said,
// the staging dir and the scratch dir removed, and the exit code.
std::optional<int> stage_job(submission& s) {
  auto& staging_uri = s.where.staging_uri;
  fs::path scratch = private_scratch(s.app, to_json(s.job));
  if (scratch.empty())
    return exit_infra;
  std::error_code ec;
  auto cleanup_scratch = [&] { fs::remove_all(scratch, ec); };
  auto fail_staging = [&](const error& err) {
    auto code = staging_failed(s, err);
    cleanup_scratch();
    return code;
  };
  auto stage = [&](const std::string& path, const std::string& name, bool archive,
                   bool for_am, bool for_executor) -> expected<void> {
    auto res = s.stager->put(path, name, archive);
    if (!res)
      return res.error();
    if (for_am)
      s.am_resources.push_back(*res);
    if (for_executor)
      s.executor_resources.push_back(*res);
    return ok;
  };
  cache_use cache;
  cache.user = s.client.user;
  cache.nn = s.webhdfs;
  cache.own = s.stager.get();
  cache.warn = complain;
  cache.shared_root = s.where.shared_cache_uri;
  cache.shared_nn = webhdfs::namenode_http{s.where.shared_cache_webhdfs, s.auth};
  s.am_program = std::string{"./"} + yarn_env::bundle_link + "/bin/tony-am";
  const std::string& install_dir = s.job.cluster.install_dir;
  if (install_dir.empty()) {
    auto root = staging_uri.substr(0, staging_uri.rfind('/'));
    auto res = stage_node_bundle(root + "/bin", s.opts.bin_dir, scratch.string(), cache);
    if (!res)
      return fail_staging(res.error());
    s.am_resources.push_back(*res);
    s.executor_resources.push_back(*res);
  } else {
    s.am_program = install_dir + "/tony-am";
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
  auto shipped =
      ship_job_files(s.job, *s.stager, scratch.string(), s.conf, s.auth, stage_env);
  if (!shipped) {
    if (shipped.error().code() != errc::unsatisfiable)
      return fail_staging(shipped.error());
    complain(describe(shipped.error()));
    s.stager->remove_all();
    cleanup_scratch();
    return exit_usage;
  }
  s.executor_resources.insert(s.executor_resources.end(), shipped->common.begin(),
                              shipped->common.end());
  s.type_resources = std::move(shipped->by_type);
  cleanup_scratch();
  return std::nullopt;
}

// The AM's container but for its tokens and command: its resources, the
// security it needs, and the environment that tells it the cluster. On
// failure said, the staging dir removed, and the exit code.
std::optional<int> prepare_launch(submission& s, yarn::submission_context& ctx) {
  auto& job = s.job;
  ctx.id = s.id;
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
  ctx.am_launch.resources = s.am_resources;
  if (auto ok = stage_security(s.client, s.creds, s.auth, *s.stager, ctx.am_launch); !ok)
    return staging_failed(s, ok.error());
  auto scheduler = yarn::rm_peers(s.conf, "yarn.resourcemanager.scheduler.address", 8030);
  if (!scheduler) {
    complain(scheduler.error().message());
    s.stager->remove_all();
    return exit_usage;
  }
  auto& env = ctx.am_launch.env;
  env[yarn_env::scheduler] = yarn::format_rm_peers(*scheduler);
  env[yarn_env::executor_resources] = resources_to_json(s.executor_resources);
  if (!s.type_resources.empty())
    env[yarn_env::type_resources] = type_resources_to_json(s.type_resources);
  env[yarn_env::staging_uri] = s.where.staging_uri;
  if (auto places = node_places(s.client.rm, job); !places.empty())
    env[yarn_env::nodes] = places;
  if (auto handler = constraints_handler(s.conf); !handler.empty())
    env[yarn_env::placement_constraints] = handler;
  if (!s.webhdfs.base.empty())
    env[yarn_env::webhdfs_address] = s.webhdfs.base;
  if (!job.cluster.install_dir.empty())
    env[yarn_env::install_dir] = job.cluster.install_dir;
  env["HADOOP_USER_NAME"] = s.client.user;
  // Who may talk to the AM's tracking page directly (web/proxy_filter).
  std::string proxies;
  for (auto& p : yarn::web_proxies(s.conf))
    proxies += (proxies.empty() ? "" : ",") + p;
  env[http::web_proxies_env] = proxies;
  set_acls(s.job.security, s.conf, ctx.am_launch);
  return std::nullopt;
}

// Gives the AM its tokens and command, submits the application, and
// follows it (unless --detach); tony-submit's exit code.
int submit_and_follow(submission& s, yarn::submission_context& ctx) {
  auto& job = s.job;
  auto& opts = s.opts;
  auto& app = s.app;
  auto& staging_uri = s.where.staging_uri;
  // The job secret: a Credentials secret in the AM's tokens, which the
  // NodeManager writes to the container's token file (runtime/gate/job_secret),
  // beside the job's delegation tokens; the RM renews those it can and
  // cancels them at the end (cancel_tokens_when_complete).
  auto secret = gate::make_job_secret();
  if (secret.empty()) {
    complain("cannot generate the job secret (OpenSSL RAND_bytes failed)");
    s.stager->remove_all();
    return exit_infra;
  }
  auto am_tokens = s.creds.tokens;
  am_tokens.add_secret(gate::secret_alias, secret);
  ctx.am_launch.tokens = hadoop::serialize_credentials(am_tokens);
  ctx.cancel_tokens_when_complete = true;
  // Where the AM keeps the event log when the job ends (doc/tracking.md).
  auto history_uri = s.where.history_uri;
  ctx.am_launch.env[yarn_env::history_uri] = history_uri;
  if (!s.where.history_webhdfs.empty())
    ctx.am_launch.env[yarn_env::history_webhdfs] = s.where.history_webhdfs;
  ctx.am_launch.commands = {"exec",       s.am_program, "--backend",          "yarn",
                            "--job",      "job.json",   "--app-id",           app,
                            "--work-dir", ".",          "1><LOG_DIR>/am.log", "2>&1"};
  ctx.am_launch.env = escape_env(std::move(ctx.am_launch.env));
  auto& rm = s.client.rm;
  auto submitted = rm.submit_application(ctx, hadoop::deadline_after(seconds(30)));
  if (!submitted) {
    complain("the ResourceManager refused " + app + ": " + submitted.error().message());
    s.stager->remove_all();
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
  sweep_ended_jobs(rm, staging_uri.substr(0, staging_uri.rfind('/')), s.webhdfs,
                   s.id.cluster_timestamp, app, opts.quiet);
  if (opts.detach) {
    say("detached; follow it with: tony-submit --status " + app);
    return exit_succeeded;
  }
  auto code = follow(rm, s.id, &job, opts, secret, history_uri, s.auth);
  remove_own_staging(rm, s.id, *s.stager);
  return code;
}

} // namespace

int submit_yarn(const job_spec& job, const submit_options& opts) {
  auto setup = load_hadoop(opts.hadoop_conf, job.cluster.hadoop_conf);
  if (!setup)
    return setup.error();
  auto& [conf_dir, conf] = *setup;
  auto connection = connect_rm(*setup, opts, job.security);
  if (!connection)
    return connection.error();
  auto& client = *connection;
  auto fresh = client.rm.get_new_application(hadoop::deadline_after(seconds(20)));
  if (!fresh) {
    auto why = rm_failure(fresh.error(), conf_dir);
    if (!client.token_file.empty() && fresh.error().code() == hadoop::error_code::auth)
      why += " (the RM delegation token of HADOOP_TOKEN_FILE_LOCATION (" +
             client.token_file +
             ") is not valid: cancelled, or expired since its last renewal; the workflow "
             "scheduler must fetch new tokens)";
    complain(why);
    return exit_infra;
  }
  if (auto unfit = unfit_ask(job, fresh->max_capability); !unfit.empty()) {
    complain(unfit);
    return exit_usage;
  }
  // Tokens before staging: a cluster that refuses them costs no upload.
  auto got_creds = credentials_for(client, *setup, job, opts.quiet);
  if (!got_creds)
    return got_creds.error();
  submission s{job,        opts,
               client,     conf,
               fresh->id,  yarn::to_string(fresh->id),
               *got_creds, http_auth_of(client, job.security)};
  if (auto code = open_staging(s))
    return *code;
  if (auto code = stage_job(s))
    return *code;
  yarn::submission_context ctx;
  if (auto code = prepare_launch(s, ctx))
    return *code;
  return submit_and_follow(s, ctx);
}

} // namespace tony
