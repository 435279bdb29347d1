#include "runtime/am/am_host.hpp"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/actor_types.hpp"
#include "actors/lifecycle_monitor.hpp"
#include "actors/registry.hpp"
#include "actors/tensorboard_proxy.hpp"
#include "config/job_json.hpp"
#include "messages/error.hpp"
#include "messages/registration.hpp"
#include "messages/type_ids.hpp"
#include "runtime/am/backend.hpp"
#include "runtime/am/yarn_env.hpp"
#include "runtime/gate/caf_bridge.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/hadoop/user.hpp"
#include "runtime/history/event_log.hpp"
#include "runtime/history/history_store.hpp"
#include "runtime/http/http_server.hpp"
#include "runtime/http/proxy_filter.hpp"
#include "runtime/launch_context.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/signal_watcher.hpp"
#include "runtime/staging/stager.hpp"
#include "runtime/status_json.hpp"

namespace tony {

namespace {

struct am_config : caf::actor_system_config {
  am_config() {
    load<caf::io::middleman>();
    tony::add_all_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
  }
};

bool write_file(const std::string& path, const std::string& content) {
  auto tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out)
      return false;
    out << content;
    if (!out)
      return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The event log: the job dir on the local backend; on YARN the AM
// container's log dir, so it survives the container (`yarn logs`), and a
// copy in the history dir at the end (doc/tracking.md).
std::string event_log_path(const am_options& opts) {
  if (opts.backend == "yarn")
    if (auto dirs = std::getenv("LOG_DIRS"); dirs && *dirs) {
      std::string dir = dirs;
      return dir.substr(0, dir.find(',')) + "/events.jsonl";
    }
  return opts.work_dir + "/events.jsonl";
}

history::job_event submitted_event(const am_options& opts, const job_spec& job,
                                   const std::string& tracking_url) {
  history::job_event e;
  e.time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  e.kind = "job_submitted";
  e.job.app_id = opts.app_id;
  e.job.name = job.name;
  e.job.state = "NEW";
  e.job.attempt = 1;
  e.job.tracking_url = tracking_url;
  e.job.started_ms = e.time_ms;
  e.info = {{"user", hadoop::current_user()},
            {"backend", opts.backend},
            {"framework", job.framework},
            {"queue", job.queue},
            {"job_file", job.job_file}};
  for (auto& t : job.tasks)
    e.task_counts[t.name] = t.instances;
  return e;
}

// Copies the event log into the history dir (YARN): TONY_HISTORY_URI when
// set, else [cluster] history_dir or its default on the filesystem the job
// was staged on.
void keep_history(const std::string& log_path, const std::string& app_id,
                  const job_spec& job) {
  auto env = process::current_environment();
  auto user = hadoop::current_user();
  auto uri = env[history::history_uri_env];
  if (uri.empty()) {
    auto staging = env[yarn_env::staging_uri];
    std::string default_fs = "file:///";
    if (staging.rfind("hdfs://", 0) == 0)
      default_fs = staging.substr(0, staging.find('/', 7));
    uri = history::history_location(job.cluster.history_dir, default_fs, user);
  }
  auto webhdfs = env[yarn_env::webhdfs_address];
  if (webhdfs.empty() && uri.rfind("hdfs://", 0) == 0) // staged elsewhere: guess
    webhdfs = uri.substr(7, uri.find_first_of(":/", 7) - 7) + ":9870";
  auto stager = staging::make_stager(uri, webhdfs, user);
  if (!stager) {
    spdlog::warn("tony-am: cannot keep the event log in {}: {}", uri,
                 describe(stager.error()));
    return;
  }
  if (auto ok = (*stager)->put(log_path, app_id + ".jsonl", false); !ok)
    spdlog::warn("tony-am: cannot copy the event log to {}: {}", uri,
                 describe(ok.error()));
  else
    spdlog::info("tony-am: event log kept as {}/{}.jsonl", uri, app_id);
}

} // namespace

int run_am(const am_options& opts) {
  process::signal_watcher signals;
  auto text = read_file(opts.job_json);
  if (text.empty()) {
    spdlog::error("tony-am: cannot read the job spec {}", opts.job_json);
    return 2;
  }
  auto job = job_from_json(text);
  if (!job) {
    spdlog::error("tony-am: bad job spec {}: {}", opts.job_json, describe(job.error()));
    return 2;
  }
  auto secret = gate::job_secret_or_fresh(process::current_environment());
  if (secret.empty()) {
    spdlog::error("tony-am: cannot generate the job secret (OpenSSL RAND_bytes failed)");
    return 3;
  }
  am_config cfg;
  caf::actor_system sys{cfg};
  registry_config rcfg{opts.app_id, secret,
                       static_cast<int32_t>(job->policy.heartbeat_interval_ms)};
  auto registry = spawn_registry(sys, rcfg);
  // Only peers that prove the job secret reach CAF (runtime/gate).
  auto door = gate::publish(sys, registry,
                            opts.backend == "local" ? opts.host : "0.0.0.0", 0, secret);
  if (!door) {
    spdlog::error("tony-am: cannot publish the registry: {}", describe(door.error()));
    caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
    return 3;
  }
  auto port = (*door)->port();
  spdlog::info("tony-am: {} registry at {}:{}", opts.app_id, opts.host, port);
  am_endpoint endpoint{opts.app_id, opts.host, static_cast<int32_t>(port), secret};

  // The tracking URL: bound before the monitor registers it with the RM.
  auto web = std::make_shared<http::http_server>();
  std::string tracking_url;
  if (auto web_port = web->bind(opts.backend == "local" ? "127.0.0.1" : "0.0.0.0", 0))
    tracking_url = "http://" + opts.host + ":" + std::to_string(*web_port) + "/";
  else
    spdlog::warn("tony-am: no tracking page: {}", describe(web_port.error()));
  if (opts.backend == "yarn") // only the RM's web proxy is served (Hadoop's AmIpFilter)
    http::redirect_to_web_proxy(*web, process::current_environment());

  monitor_config mcfg;
  mcfg.job = *job;
  mcfg.app_id = opts.app_id;
  mcfg.am = {opts.host, static_cast<int32_t>(port), tracking_url};

  auto log_path = event_log_path(opts);
  std::shared_ptr<history::event_log_writer> events;
  if (auto w = history::event_log_writer::open(log_path)) {
    events = std::move(*w);
    events->write(submitted_event(opts, *job, tracking_url));
    mcfg.on_change = [events](const job_status& st) { events->observe(st); };
  } else {
    spdlog::warn("tony-am: no event log: {}", describe(w.error()));
  }

  auto backend =
      opts.backend == "local"
          ? make_local_backend(sys, *job, endpoint, opts.work_dir, opts.executor_path)
          : make_yarn_backend(sys, *job, endpoint);
  if (!backend) {
    spdlog::error("tony-am: cannot set up the {} backend: {}", opts.backend,
                  describe(backend.error()));
    caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
    return 3;
  }
  mcfg.log_dir_of = backend->log_dir_of;
  if (opts.backend == "local") {
    nlohmann::json am_info = {{"app_id", opts.app_id},
                              {"host", opts.host},
                              {"port", port},
                              {"pid", ::getpid()},
                              {"tracking_url", tracking_url}};
    write_file(opts.work_dir + "/am.json", am_info.dump());
  }
  auto rm = backend->rm;
  auto nm = backend->nm;
  auto monitor =
      spawn_lifecycle_monitor(sys, mcfg, registry, rm, nm, backend->make_launch);
  tensorboard_proxy_actor proxy;
  if (!tracking_url.empty()) {
    tracking_options topts;
    if (auto base = std::getenv("APPLICATION_WEB_PROXY_BASE"))
      topts.public_base = base;
    proxy = spawn_tensorboard_proxy(sys, web, monitor, topts);
    spdlog::info("tony-am: tracking URL {}", tracking_url);
  }
  signals.start([monitor](int sig) {
    caf::anon_send(monitor, kill_atom_v,
                   sig == SIGINT
                       ? std::string{"killed by the user (tony-submit was interrupted)"}
                       : std::string{"the ApplicationMaster received "} +
                             ::strsignal(sig) +
                             " (stopped by its NodeManager or by hand)");
  });
  job_status final_status;
  {
    caf::scoped_actor self{sys};
    self->request(monitor, caf::infinite, wait_atom_v)
        .receive([&](job_status& st) { final_status = std::move(st); },
                 [&](caf::error& err) {
                   final_status.state = "FAILED";
                   final_status.diagnostics =
                       "the lifecycle monitor failed: " + sys.render(err);
                 });
  }
  write_file(opts.work_dir + "/status.json", to_json(final_status, 2));
  // The event log first: tony-submit may end as soon as the RM reports the
  // end, and `tony-history show` should find the log then.
  if (events) {
    if (final_status.finished_ms == 0) { // the monitor itself failed
      history::job_event e;
      e.time_ms = final_status.finished_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count();
      e.kind = "job_finished";
      e.job = final_status;
      e.job.tasks.clear();
      events->write(e);
    }
    events.reset();
    if (opts.backend == "yarn")
      keep_history(log_path, opts.app_id, *job);
  }
  if (opts.backend == "yarn") {
    // tony-submit reads the final task states from the AM (it polls every
    // 250 ms); on the local backend it reads status.json instead.
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
  }
  // The page stays up through the linger.
  web->stop();
  (*door)->stop();
  spdlog::info("tony-am: registry port: {}", gate::summary((*door)->counts()));
  spdlog::info("tony-am: tracking page: {}", gate::summary(web->counts()));
  if (proxy)
    caf::anon_send_exit(proxy, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(monitor, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(rm, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(nm, caf::exit_reason::user_shutdown);
  if (backend->on_end)
    backend->on_end(final_status);
  return final_status.state == "SUCCEEDED" ? 0 : 1;
}

} // namespace tony
