#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "am/backend.hpp"
#include "am/token_renewer.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/endpoint.hpp"
#include "hadoop/hdfs/delegation_token.hpp"
#include "hadoop/hdfs/token_plan.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/user.hpp"
#include "hadoop/yarn/amrm_client.hpp"
#include "hadoop/yarn/nm_client.hpp"
#include "hadoop/yarn/protocols.hpp"
#include "messages/error.hpp"
#include "runtime/am_restart.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/process/process.hpp"
#include "runtime/staging/stager.hpp"
#include "runtime/status_json.hpp"
#include "runtime/yarn/am_env.hpp"
#include "runtime/yarn/yarn_nm_actor.hpp"
#include "runtime/yarn/yarn_rm_actor.hpp"
#include "web/proxy_filter.hpp"

namespace tony {

namespace {

using env_map = std::map<std::string, std::string>;

std::string get(const env_map& env, const char* key) {
  auto i = env.find(key);
  return i == env.end() ? std::string{} : i->second;
}

// The event log lives in the AM container's log dir, so it survives the
// container (`yarn logs`); a copy goes to the history dir at the end.
std::string event_log_path(const env_map& env, const std::string& work_dir) {
  auto dirs = get(env, "LOG_DIRS");
  if (dirs.empty())
    return work_dir + "/events.jsonl";
  return dirs.substr(0, dirs.find(',')) + "/events.jsonl";
}

// How the AM's WebHDFS calls at `webhdfs` (TONY_WEBHDFS or
// TONY_HISTORY_WEBHDFS) authenticate: with the job's HDFS delegation token
// for that NameNode when it has one (a Kerberos cluster: the AM has no
// ticket), else SIMPLE as `user`; HTTPS against the shipped CA.
webhdfs::namenode_http namenode_of(const env_map& env, const std::string& uri,
                                   const std::string& webhdfs, const std::string& user,
                                   const token_box& tokens) {
  return namenode_for(uri, webhdfs, user, tokens.current(), get(env, yarn_env::ca_file));
}

// The AM's last HDFS calls (the event log's copy, the staging dir's
// removal) when an HA nameservice's failover outlasts one call's rounds (a
// NameNode killed as the job ends): up to a minute more, asked every 2 s.
// The event log is the job's record.
template <class Call>
auto while_failing_over(const char* what, Call call) -> decltype(call()) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    auto result = call();
    if (result)
      return result;
    auto why = describe(result.error());
    if (why.find("no NameNode answered as active") == std::string::npos ||
        std::chrono::steady_clock::now() >= until)
      return result;
    spdlog::warn("tony-am: {} waits for an active NameNode: {}", what, why);
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

// Copies the event log into the history dir tony-submit named.
void keep_history(const env_map& env, const std::string& log_path,
                  const std::string& app_id, const std::string& user,
                  const token_box& tokens) {
  auto uri = get(env, yarn_env::history_uri);
  if (uri.empty()) {
    spdlog::warn("tony-am: {} is not set; the event log stays in {} only",
                 yarn_env::history_uri, log_path);
    return;
  }
  auto stager = staging::make_stager(
      uri, namenode_of(env, uri, get(env, yarn_env::history_webhdfs), user, tokens),
      staging::history_permissions);
  if (!stager) {
    spdlog::warn("tony-am: cannot keep the event log in {}: {}", uri,
                 describe(stager.error()));
    return;
  }
  auto ok = while_failing_over("the event log", [&] {
    return (*stager)->put(log_path, app_id + ".jsonl", false);
  });
  if (!ok)
    spdlog::warn("tony-am: cannot copy the event log to {}: {}", uri,
                 describe(ok.error()));
  else
    spdlog::info("tony-am: event log kept as {}/{}.jsonl", uri, app_id);
}

void remove_staging(const env_map& env, const std::string& user,
                    const token_box& tokens) {
  auto staging_uri = get(env, yarn_env::staging_uri);
  if (staging_uri.empty())
    return;
  auto stager = staging::make_stager(
      staging_uri,
      namenode_of(env, staging_uri, get(env, yarn_env::webhdfs_address), user, tokens));
  if (stager)
    if (auto ok = while_failing_over("the staging dir's removal",
                                     [&] { return (*stager)->remove_all(); });
        !ok)
      spdlog::warn("tony-am: could not remove the staging dir {}: {}", staging_uri,
                   describe(ok.error()));
}

// The job's tokens in the AM's container: everything but the AMRMToken,
// which is the AM's own (and the job secret, which travels apart).
hadoop::credentials job_tokens_of(const hadoop::credentials& container) {
  hadoop::credentials result;
  for (auto& [alias, tok] : container.tokens())
    if (tok.kind != hadoop::amrm_token_kind)
      result.add_token(alias, tok);
  for (auto& [alias, bytes] : container.secrets())
    if (alias != gate::secret_alias)
      result.add_secret(alias, bytes);
  return result;
}

// The renewer of a job submitted with a keytab (TONY_TOKEN_RENEWAL), or
// null; a malformed plan is logged and the job runs on its first tokens.
std::shared_ptr<token_renewer> renewer_of(const env_map& env, const std::string& work_dir,
                                          std::shared_ptr<token_box> box) {
  auto text = get(env, yarn_env::token_renewal);
  if (text.empty())
    return nullptr;
  auto plan = hdfs::renewal_plan_from_json(text);
  if (!plan) {
    spdlog::error("tony-am: {}: {}; the job keeps the tokens it started with",
                  yarn_env::token_renewal, plan.error().message());
    return nullptr;
  }
  return std::make_shared<token_renewer>(std::move(*plan), work_dir, std::move(box));
}

// -- AM restarts (doc/operations.md "AM restart") ----------------------------------

// Writes `content` as `name` in the staging dir (through a file in the AM's
// working directory: the stager uploads files).
bool put_text(staging::stager& dir, const std::string& work_dir, const std::string& name,
              const std::string& content) {
  auto local = work_dir + "/." + name;
  if (!write_file_atomically(local, content))
    return false;
  auto res = dir.put(local, name, false);
  if (!res)
    spdlog::warn("tony-am: cannot write {}/{}: {}", dir.uri(), name,
                 describe(res.error()));
  return static_cast<bool>(res);
}

// What the AM before this one saved of the job; nothing for the first AM,
// or when nothing (readable) was saved: the job then starts over.
std::optional<job_status> saved_job(staging::stager& dir, int32_t am_attempt) {
  if (am_attempt <= 1)
    return std::nullopt;
  auto text = dir.read(am_state_file);
  if (!text) {
    spdlog::warn("tony-am: AM attempt {}: no saved state of the job in {}: {}",
                 am_attempt, dir.uri(), describe(text.error()));
    return std::nullopt;
  }
  auto st = job_status_from_json(*text);
  if (!st) {
    spdlog::warn("tony-am: AM attempt {}: the saved state {}/{} is unreadable: {}",
                 am_attempt, dir.uri(), am_state_file, describe(st.error()));
    return std::nullopt;
  }
  return std::move(*st);
}

// Sets `result` up for a job whose AM may be restarted: the state the AM
// before saved, the journal of this AM's, and the address file executors
// read when their AM died.
void prepare_restarts(am_backend& result, const env_map& env, const job_spec& job,
                      const am_options& opts, std::shared_ptr<token_box> tokens) {
  result.am_attempt = std::max(attempt_of_container(get(env, "CONTAINER_ID")), 1);
  auto staging_uri = get(env, yarn_env::staging_uri);
  if (job.am.max_app_attempts < 2 || staging_uri.empty())
    return;
  auto webhdfs = get(env, yarn_env::webhdfs_address);
  auto nn = namenode_of(env, staging_uri, webhdfs, hadoop::current_user(), *tokens);
  auto opened = staging::make_stager(staging_uri, nn);
  if (!opened) {
    spdlog::warn("tony-am: AM restarts cannot adopt this job's tasks: {}",
                 describe(opened.error()));
    return;
  }
  std::shared_ptr<staging::stager> dir = std::move(*opened);
  result.resume = saved_job(*dir, result.am_attempt);
  result.restart_dir = staging_uri;
  result.restart_webhdfs = webhdfs;
  auto work_dir = opts.work_dir;
  auto journal = std::make_shared<state_journal>(
      [dir, work_dir](const std::string& json) {
        return put_text(*dir, work_dir, am_state_file, json);
      },
      std::chrono::milliseconds(250));
  result.save_state = [journal](const job_status& st) { journal->save(st); };
  auto am_attempt = result.am_attempt;
  result.announce = [dir, work_dir, am_attempt](const am_address& at) {
    am_location where{at.host, at.port, am_attempt};
    if (put_text(*dir, work_dir, am_address_file, to_json(where)))
      spdlog::info("tony-am: AM attempt {} at {}:{} written to {}/{}", am_attempt,
                   at.host, at.port, dir->uri(), am_address_file);
  };
  result.end_restarts = [journal] { journal->close(); };
}

using type_resource_map = std::map<std::string, std::vector<local_resource>>;

launch_factory yarn_launcher(const job_spec& job, const am_endpoint& am,
                             std::vector<local_resource> resources,
                             type_resource_map by_type, std::string executor,
                             std::vector<std::string> hadoop_mounts,
                             std::shared_ptr<token_box> tokens,
                             std::map<std::string, std::string> acls) {
  return [job, am, resources, by_type, executor, hadoop_mounts, tokens, acls](
             const task_id& task, int32_t attempt, int32_t restart, const container& c) {
    launch_spec spec;
    spec.target = c;
    // The job secret travels in the container's tokens, not in its launch
    // script (runtime/gate/job_secret.hpp), beside the job's current
    // delegation tokens (HADOOP_TOKEN_FILE_LOCATION in the container).
    auto without_secret = am;
    without_secret.secret.clear();
    auto env = executor_env(job, task, attempt, restart, without_secret);
    // YARN's Docker runtime runs the whole container, executor included,
    // in the image (the executor checks that it did).
    for (auto& [k, v] : yarn_docker_env(docker_of(job, task.type, hadoop_mounts)))
      env[k] = v;
    spec.env = escape_env(env);
    auto creds = tokens->current();
    creds.add_secret(gate::secret_alias, am.secret);
    spec.tokens = hadoop::serialize_credentials(creds);
    // The executor's log (stdout) is executor.log; its stderr stays the
    // launch script's, prelaunch.err, whose tail the NodeManager puts into
    // the diagnostics of a container that fails: an executor that cannot
    // start (a missing library, a failed exec, its own errors, which it
    // also writes to stderr) is reported with its reason, on a Kerberos
    // cluster too (the AM needs no access to the node's files).
    spec.command = {"exec", executor, "1><LOG_DIR>/executor.log"};
    spec.acls = acls;
    spec.resources = resources;
    if (auto own = by_type.find(task.type); own != by_type.end())
      spec.resources.insert(spec.resources.end(), own->second.begin(), own->second.end());
    return spec;
  };
}

// The nodes and racks every ask names (TONY_NODES), and whether capped
// types go as SchedulingRequests (TONY_PLACEMENT_CONSTRAINTS).
void set_placement(const env_map& env, yarn::amrm_client& amrm, am_backend& result) {
  for (auto& place : parse_nodes(get(env, yarn_env::nodes))) {
    result.nodes.push_back(place.host);
    if (!place.rack.empty() && std::find(result.racks.begin(), result.racks.end(),
                                         place.rack) == result.racks.end())
      result.racks.push_back(place.rack);
  }
  amrm.set_placement_constraints(get(env, yarn_env::placement_constraints));
  result.placement_constraints = amrm.placement_constraints();
  result.placement_processor = amrm.placement_processor();
}

// How executors are launched: tony-executor from the install dir or the
// bundle, with the job's resources and its type's.
void set_launcher(am_backend& result, const env_map& env, const job_spec& job,
                  const std::vector<local_resource>& resources,
                  const type_resource_map& type_resources,
                  std::shared_ptr<token_box> job_tokens) {
  auto install_dir = get(env, yarn_env::install_dir);
  auto executor = install_dir.empty()
                      ? std::string{"./"} + yarn_env::bundle_link + "/bin/tony-executor"
                      : install_dir + "/tony-executor";
  auto executor_resources = resources;
  // YARN-DTF's mounts: the node's Hadoop configuration, Java and Hadoop homes
  // (the NodeManager passes its own to the AM's container).
  std::vector<std::string> hadoop_mounts;
  for (auto name : {"HADOOP_CONF_DIR", "JAVA_HOME", "HADOOP_HOME"})
    if (auto dir = get(env, name); !dir.empty() && dir[0] == '/')
      hadoop_mounts.push_back(dir);
  // The application's ACLs go with every container: a NodeManager takes
  // them from the first it starts for the application (its log pages).
  auto acl_of = [&env](const char* name) {
    auto acl = get(env, name);
    return acl.empty() ? std::string{" "} : acl;
  };
  std::map<std::string, std::string> acls{{"VIEW_APP", acl_of(yarn_env::view_acl)},
                                          {"MODIFY_APP", acl_of(yarn_env::modify_acl)}};
  result.launcher = [job, executor_resources, by_type = type_resources, executor,
                     hadoop_mounts, job_tokens, acls](const am_endpoint& am) {
    return yarn_launcher(job, am, executor_resources, by_type, executor, hadoop_mounts,
                         job_tokens, acls);
  };
}

// The job's end on YARN (the renewal stops, the event log goes to the
// history dir, the staging dir goes) and the start of the token renewal,
// when there is one.
void set_job_end(am_backend& result, const env_map& env, const am_options& opts,
                 std::shared_ptr<token_box> job_tokens,
                 std::shared_ptr<token_renewer> renewer) {
  auto log_path = result.event_log;
  auto app_id = opts.app_id;
  // The event log goes to the history dir before the RM hears of the end
  // (tony-history finds a job as soon as tony-submit returns), or at the
  // end when the AM did not get there.
  auto kept = std::make_shared<std::once_flag>();
  result.keep_records = [env, log_path, app_id, job_tokens, kept] {
    std::call_once(*kept, [&] {
      keep_history(env, log_path, app_id, hadoop::current_user(), *job_tokens);
    });
  };
  result.on_end = [env, keep = result.keep_records, job_tokens,
                   renewer](const job_status&) {
    if (renewer)
      renewer->stop(); // the newest tokens stay in the box for the calls below
    keep();
    remove_staging(env, hadoop::current_user(), *job_tokens);
  };
  if (renewer)
    result.start_token_renewal =
        [renewer](std::function<void(const std::string&)> publish) {
          renewer->start(std::move(publish));
        };
}

} // namespace

expected<am_backend> make_yarn_backend(caf::actor_system& sys, const job_spec& job,
                                       const am_options& opts) {
  auto env = process::current_environment();
  auto creds = hadoop::credentials_from_environment();
  if (!creds)
    return make_error(errc::infrastructure,
                      "cannot read the container's tokens: " + creds.error().message());
  auto token = yarn::amrm_client::find_amrm_token(*creds);
  if (!token)
    return make_error(errc::infrastructure, token.error().message());
  auto scheduler = yarn::parse_rm_peers(get(env, yarn_env::scheduler), 8030);
  if (!scheduler)
    return make_error(
        errc::invalid_config,
        std::string{yarn_env::scheduler} + " is not host:port or rm-id=host:port,... ('" +
            get(env, yarn_env::scheduler) + "'): " + scheduler.error().message());
  auto resources = parse_resources(get(env, yarn_env::executor_resources));
  if (!resources)
    return resources.error();
  auto type_resources = parse_type_resources(get(env, yarn_env::type_resources));
  if (!type_resources)
    return type_resources.error();
  auto ipc = std::make_shared<hadoop::ipc_client>();
  auto nm_tokens = std::make_shared<yarn::nm_token_cache>();
  auto amrm = std::make_shared<yarn::amrm_client>(ipc, *scheduler, *token, nm_tokens);
  auto nm = std::make_shared<yarn::nm_client>(ipc, nm_tokens);
  auto job_tokens = std::make_shared<token_box>(job_tokens_of(*creds));
  auto renewer = renewer_of(env, opts.work_dir, job_tokens);
  std::chrono::milliseconds call_timeout{8000};
  am_backend result;
  result.rm = yarn::spawn_yarn_rm(sys, amrm, call_timeout);
  result.nm = yarn::spawn_yarn_nm(sys, nm, call_timeout);
  set_placement(env, *amrm, result);
  set_launcher(result, env, job, *resources, *type_resources, job_tokens);
  auto user = get(env, "USER");
  result.log_dir_of = [user](const container& c) {
    if (c.http_address.empty())
      return std::string{};
    return "http://" + c.http_address + "/node/containerlogs/" + c.id + "/" + user;
  };
  auto nm_host = get(env, "NM_HOST");
  result.host = nm_host.empty() ? "127.0.0.1" : nm_host;
  result.bind_address = "0.0.0.0";
  // Only the RM's web proxy is served (Hadoop's AmIpFilter), for the users
  // the application's view ACL admits when the cluster enables ACLs.
  result.guard_page = [env, app_id = opts.app_id](http::http_server& web) {
    http::redirect_to_web_proxy(web, env, app_id);
  };
  result.event_log = event_log_path(env, opts.work_dir);
  result.announce = [](const am_address&) {}; // the RM's report carries it
  prepare_restarts(result, env, job, opts, job_tokens);
  set_job_end(result, env, opts, job_tokens, renewer);
  struct kept {
    std::shared_ptr<hadoop::ipc_client> ipc;
    std::shared_ptr<token_renewer> renewer;
  };
  result.keep_alive = std::make_shared<kept>(kept{ipc, renewer});
  result.end_calls = [ipc] { ipc->shut_down(); };
  return result;
}

} // namespace tony
