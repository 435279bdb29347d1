#include "am/am_host.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <spdlog/spdlog.h>

#include "am/application_master.hpp"
#include "am/backend.hpp"
#include "am/registry_door.hpp"
#include "base/files.hpp"
#include "base/result.hpp"
#include "config/job_json.hpp"
#include "config/task_env.hpp"
#include "hadoop/user.hpp"
#include "messages/error.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/history/event_log.hpp"
#include "runtime/history/job_record.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/signal_watcher.hpp"
#include "runtime/status_json.hpp"
#include "runtime/yarn/am_env.hpp"
#include "web/horovod_rendezvous.hpp"
#include "web/http_server.hpp"
#include "web/tracking_routes.hpp"

namespace tony {

namespace {

using std::chrono::milliseconds;

// How long the AM waits at the end for clients that wait for the final
// status to confirm they have it.
constexpr milliseconds linger_limit{5000};

// How long a tracking page request waits for the job's status.
constexpr milliseconds page_status_timeout{3000};

int64_t wall_ms() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

history::job_event submitted_event(const am_options& opts, const job_spec& job,
                                   const std::string& tracking_url) {
  history::job_event e;
  e.time_ms = wall_ms();
  e.kind = "job_submitted";
  e.job.app_id = opts.app_id;
  e.job.name = job.name;
  e.job.state = job_state::fresh;
  e.job.attempt = 1;
  e.job.tracking_url = tracking_url;
  e.job.started_ms = e.time_ms;
  e.info = {{"user", hadoop::current_user()},
            {"backend", opts.backend},
            {"framework", job.framework},
            {"queue", job.queue},
            {"job_file", job.job_file}};
  // The application's view ACL, for tony-history serve's ACL check.
  if (auto* acl = std::getenv(yarn_env::view_acl))
    e.info["view_acl"] = acl;
  for (auto& t : job.tasks)
    e.task_counts[t.name] = t.instances;
  // The resolved job, for tony-history's page (and its TensorBoard log dir).
  e.config_json = to_json(job);
  return e;
}

// The tracking page's view of the job: the facade, bounded, and the
// recorder's timeline and metrics.
class am_job_source : public http::job_source {
public:
  am_job_source(application_master& am, std::shared_ptr<history::job_recorder> recorder)
      : am_(am)
      , recorder_(std::move(recorder)) {
    // nop
  }

  expected<job_status> status() override { return am_.status(page_status_timeout); }

  bool live() const override { return true; }

  bool read_record(const std::function<void(const history::job_record&)>& f) override {
    recorder_->read(f);
    return true;
  }

private:
  application_master& am_;
  std::shared_ptr<history::job_recorder> recorder_;
};

// The tracking page on `server` (bound already), served from the facade.
void serve_tracking_page(http::http_server& server, application_master& am,
                         std::shared_ptr<history::job_recorder> recorder,
                         const std::string& secret) {
  auto source = std::make_shared<am_job_source>(am, std::move(recorder));
  http::route_options routes;
  routes.tensorboard_token = gate::tensorboard_token(secret);
  if (auto base = std::getenv("APPLICATION_WEB_PROXY_BASE"))
    routes.public_base = base;
  server.set_body_policy(http::tracking_body_rule);
  server.start([source, routes](const httplib::Request& req, const std::string& body,
                                httplib::Response& res) {
    http::handle_job_request(source, req.path, req, body, res, routes);
  });
}

// Horovod's gloo rendezvous on a port of its own (horovod jobs only); its
// port, or 0 when the job needs none or it cannot listen.
int32_t serve_horovod_rendezvous(http::http_server& server, const job_spec& job,
                                 const std::string& secret,
                                 const std::string& bind_address) {
  if (job.framework != "horovod")
    return 0;
  int32_t world = 0;
  for (auto& t : job.tasks)
    if (is_world_type(t.name))
      world += t.instances;
  auto port = server.bind(bind_address, 0);
  if (!port) {
    spdlog::error("tony-am: no Horovod rendezvous: {}", describe(port.error()));
    return 0;
  }
  auto store = std::make_shared<rendezvous::horovod_rendezvous>(
      secret, job.policy.max_attempts, rendezvous::limits_for_world(world));
  rendezvous::serve(server, store);
  return static_cast<int32_t>(*port);
}

std::string kill_reason(int sig) {
  if (sig == SIGINT)
    return "killed by the user (tony-submit was interrupted)";
  return std::string{"the ApplicationMaster received "} + ::strsignal(sig) +
         " (stopped by its NodeManager or by hand)";
}

// The end, recorded: status.json, and the event log's last line when the
// monitor itself failed.
void record_end(const am_options& opts, job_status& final_status,
                std::shared_ptr<history::event_log_writer>& events) {
  write_file_atomically(opts.work_dir + "/status.json", to_json(final_status, 2));
  if (!events)
    return;
  if (final_status.finished_ms == 0) { // the monitor itself failed
    history::job_event e;
    e.time_ms = final_status.finished_ms = wall_ms();
    e.kind = "job_finished";
    e.job = final_status;
    e.job.tasks.clear();
    events->write(e);
  }
  events.reset();
}

struct loaded_job {
  job_spec job;
  std::string secret;
};

// The job spec and a fresh secret, or tony-am's exit code.
result<loaded_job, int> load(const am_options& opts) {
  auto text = base::read_file(opts.job_json).value_or("");
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
  return loaded_job{std::move(*job), std::move(secret)};
}

// Every executor holds two connections to the AM (its registry connection
// and its spec channel): the soft limit on open files goes up to the hard
// one (a NodeManager's containers often start at 1,024), and a hard limit
// below what the job needs is said once, up front.
void raise_open_files_limit(int64_t tasks) {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0)
    return;
  if (files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  auto needed = static_cast<rlim_t>(2 * tasks + 256);
  if (files.rlim_max != RLIM_INFINITY && files.rlim_max < needed)
    spdlog::warn("tony-am: {} tasks need about {} open files in the AM (two connections "
                 "each), its limit is {}: executors beyond it cannot connect; raise the "
                 "NodeManager's limit on open files (ulimit -n)",
                 tasks, needed, files.rlim_max);
}

struct http_ports {
  http::http_limits web;
  http::http_limits horovod;
};

// The limits of the AM's HTTP ports, with the open-files limit raised first:
// their waiting connections share what it leaves beyond the AM's own
// (am_reserved_files), the tracking page an eighth, the rendezvous a quarter.
http_ports size_http_ports(int64_t tasks) {
  raise_open_files_limit(tasks);
  auto files = base::open_files_limit();
  auto reserved = am_reserved_files(tasks);
  http_ports p;
  p.web.max_pending = base::pending_cap(p.web.max_pending, files, reserved, 12);
  // Every waiting rank polls every 10 ms, each request on a new connection,
  // and gives up after three refusals in a row: room for many waiting
  // connections (each costs a few hundred bytes) and a deep queue.
  p.horovod.max_pending = base::pending_cap(1024, files, reserved, 25);
  p.horovod.max_header_bytes = 4 << 10;
  p.horovod.max_queued = 512;
  return p;
}

// TONY_SPEC_CHANNEL=off in the AM's environment (local backend: tony-submit's)
// sends every cluster spec over the registry's connections, as tony did
// before the spec channel (doc/operations.md). Says so in the log when off.
bool spec_channel_wanted() {
  auto v = std::getenv("TONY_SPEC_CHANNEL");
  if (v == nullptr || std::string{v} != "off")
    return true;
  spdlog::info("tony-am: TONY_SPEC_CHANNEL=off: cluster specs go over the registry's "
               "connections");
  return false;
}

// The tracking page's port, bound before the AM registers its URL with the
// RM, and the backend's guard on it: the tracking URL, or "" when the page
// cannot listen.
std::string bind_tracking_page(http::http_server& web, const am_backend& backend,
                               const std::string& host) {
  std::string tracking_url;
  if (auto web_port = web.bind(backend.bind_address, 0))
    tracking_url = "http://" + host + ":" + std::to_string(*web_port) + "/";
  else
    spdlog::warn("tony-am: no tracking page: {}", describe(web_port.error()));
  if (backend.guard_page)
    backend.guard_page(web);
  return tracking_url;
}

// The job's event log, or none (said in the log) when it cannot be opened.
std::shared_ptr<history::event_log_writer> open_event_log(const am_backend& backend) {
  std::shared_ptr<history::event_log_writer> events;
  if (auto w = history::event_log_writer::open(backend.event_log))
    events = std::move(*w);
  else
    spdlog::warn("tony-am: no event log: {}", describe(w.error()));
  return events;
}

// The monitor's callbacks: status changes and samples go to the recorder,
// changes also to the backend's saved state (the next AM attempt's, YARN).
// The returned flag goes up when the RM no longer knows this attempt.
std::shared_ptr<std::atomic<bool>>
watch_monitor(monitor_config& mcfg,
              const std::shared_ptr<history::job_recorder>& recorder,
              const am_backend& backend) {
  auto save_state = backend.save_state;
  auto attempt_gone = std::make_shared<std::atomic<bool>>(false);
  mcfg.on_attempt_gone = [attempt_gone] { *attempt_gone = true; };
  mcfg.on_change = [recorder, save_state](const job_status& st) {
    recorder->observe(st);
    if (save_state)
      save_state(st);
  };
  mcfg.on_sample = [recorder](const task_id& task, int32_t attempt,
                              const task_sample& s) {
    recorder->sample(task, attempt, s);
  };
  // The end in the event log, and the log where clients read it, before the
  // RM hears of the end.
  mcfg.before_unregister = [recorder, keep = backend.keep_records](const job_status& st) {
    recorder->observe(st);
    if (keep)
      keep();
  };
  return attempt_gone;
}

// The registry's settings: the job's secret and heartbeat, and whether it
// takes over the executors of an earlier AM attempt.
registry_config registry_config_of(const am_options& opts, const std::string& secret,
                                   const job_spec& job, const am_backend& backend) {
  registry_config rcfg{opts.app_id, secret,
                       static_cast<int32_t>(job.policy.heartbeat_interval_ms)};
  // Executors of the AM before register again once it decided what it adopts.
  rcfg.takes_over = backend.am_attempt > 1 && !backend.restart_dir.empty();
  return rcfg;
}

monitor_config monitor_config_of(const job_spec& job, const am_options& opts,
                                 const std::string& tracking_url,
                                 const am_backend& backend) {
  monitor_config mcfg;
  mcfg.job = job;
  mcfg.app_id = opts.app_id;
  mcfg.tracking_url = tracking_url;
  mcfg.nodes = backend.nodes;
  mcfg.racks = backend.racks;
  mcfg.placement_constraints = backend.placement_constraints;
  mcfg.placement_processor = backend.placement_processor;
  mcfg.log_dir_of = backend.log_dir_of;
  mcfg.am_attempt = backend.am_attempt;
  mcfg.resume = backend.resume;
  return mcfg;
}

// The job's normal end: the records, the linger for waiting clients, the
// ports closed and counted, the backend's end. tony-am's exit code.
int end_job(application_master& am, const am_options& opts, job_status& final_status,
            std::shared_ptr<history::event_log_writer>& events, http::http_server& web,
            http::http_server& horovod, int32_t horovod_port, am_backend& backend) {
  // The records first: tony-submit may end as soon as it has the final
  // status, and `tony-history show` should find the log then.
  record_end(opts, final_status, events);
  // Clients waiting for the end get the final status before the AM goes.
  am.linger(linger_limit);
  web.stop(); // the page stays up through the linger
  horovod.stop();
  spdlog::info("tony-am: registry port: {}", am.close_door());
  spdlog::info("tony-am: tracking page: {}", gate::summary(web.counts()));
  if (horovod_port > 0)
    spdlog::info("tony-am: Horovod rendezvous: {}", gate::summary(horovod.counts()));
  if (backend.end_restarts)
    backend.end_restarts(); // nothing is saved after the staging dir is gone
  backend.on_end(final_status);
  return final_status.state == job_state::succeeded ? 0 : 1;
}

// The RM no longer knows this AM attempt (doc/operations.md, "Node loss"):
// the AM exits at once. Its clients read the end from the RM; the next
// attempt, if any, owns the staging dir and the records, so nothing is
// recorded, removed or lingered for.
int end_gone_attempt(const job_status& final_status, http::http_server& web,
                     http::http_server& horovod) {
  spdlog::error("tony-am: {}", final_status.diagnostics);
  web.stop();
  horovod.stop();
  return 1;
}

} // namespace

int run_am(const am_options& opts) {
  process::signal_watcher signals;
  auto loaded = load(opts);
  if (!loaded)
    return loaded.error();
  auto& [job, secret] = *loaded;
  auto make = am_backends().find(opts.backend);
  if (make == am_backends().end()) {
    spdlog::error("tony-am: unknown backend '{}'", opts.backend);
    return 2;
  }
  application_master am;
  auto backend = make->second(am.system(), job, opts);
  if (!backend) {
    spdlog::error("tony-am: cannot set up the {} backend: {}", opts.backend,
                  describe(backend.error()));
    return 3;
  }
  // Declared after `am`, so it runs first: the calls still out end before
  // the AM's actor system waits for the threads making them.
  struct calls_ender {
    std::function<void()> end;
    ~calls_ender() {
      if (end)
        end();
    }
  } end_calls{backend->end_calls};
  auto host = opts.host.empty() ? backend->host : opts.host;

  auto ports = size_http_ports(job.total_tasks());
  // The tracking URL: bound before the AM registers it with the RM.
  http::http_server web{ports.web};
  auto tracking_url = bind_tracking_page(web, *backend, host);

  auto mcfg = monitor_config_of(job, opts, tracking_url, *backend);
  auto events = open_event_log(*backend);
  // The recorder writes the event log and keeps the timeline and metrics
  // the tracking page draws (runtime/history/job_record.hpp).
  auto recorder = std::make_shared<history::job_recorder>(
      events, static_cast<size_t>(job.total_tasks()));
  recorder->submitted(submitted_event(opts, job, tracking_url));
  auto attempt_gone = watch_monitor(mcfg, recorder, *backend);
  auto rcfg = registry_config_of(opts, secret, job, *backend);
  auto specs_wanted = spec_channel_wanted();
  auto port = am.open(mcfg, rcfg, backend->bind_address, specs_wanted);
  if (!port) {
    spdlog::error("tony-am: {}", describe(port.error()));
    return 3;
  }
  spdlog::info("tony-am: {} registry at {}:{}", opts.app_id, host, *port);
  http::http_server horovod{ports.horovod};
  am_endpoint endpoint{
      opts.app_id, host, static_cast<int32_t>(*port), secret,
      serve_horovod_rendezvous(horovod, job, secret, backend->bind_address)};
  endpoint.restart_dir = backend->restart_dir;
  endpoint.restart_webhdfs = backend->restart_webhdfs;
  if (endpoint.horovod_port > 0)
    spdlog::info("tony-am: Horovod rendezvous at {}:{}", host, endpoint.horovod_port);
  am.start({backend->rm,
            backend->nm,
            backend->launcher(endpoint),
            {host, static_cast<int32_t>(*port), tracking_url}});
  if (backend->start_token_renewal)
    backend->start_token_renewal(
        [&am](const std::string& credentials) { am.publish_tokens(credentials); });
  if (!tracking_url.empty()) {
    serve_tracking_page(web, am, recorder, secret);
    spdlog::info("tony-am: tracking URL {}", tracking_url);
  }
  backend->announce(
      {opts.app_id, host, *port, static_cast<int32_t>(::getpid()), tracking_url});
  signals.start([&am](int sig) { am.kill(kill_reason(sig)); });
  auto final_status = am.wait();
  if (*attempt_gone) // the RM no longer knows this attempt
    return end_gone_attempt(final_status, web, horovod);
  return end_job(am, opts, final_status, events, web, horovod, endpoint.horovod_port,
                 *backend);
}

const std::map<std::string, backend_maker>& am_backends() {
  static const std::map<std::string, backend_maker> makers{{"local", &make_local_backend},
                                                           {"yarn", &make_yarn_backend}};
  return makers;
}

} // namespace tony
