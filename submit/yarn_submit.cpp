#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/actor_types.hpp"
#include "config/job_json.hpp"
#include "messages/error.hpp"
#include "runtime/hadoop/configuration.hpp"
#include "runtime/hadoop/ipc_client.hpp"
#include "runtime/hadoop/user.hpp"
#include "runtime/history/history_store.hpp"
#include "runtime/staging/stager.hpp"
#include "runtime/status_printer.hpp"
#include "runtime/yarn/am_env.hpp"
#include "runtime/yarn/application_client.hpp"
#include "runtime/yarn/protocols.hpp"
#include "submit/am_watcher.hpp"
#include "submit/submit.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct client_config : caf::actor_system_config {
  client_config() {
    load<caf::io::middleman>();
    add_all_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
  }
};

void say(const std::string& line) {
  std::cout << "tony: " << line << std::endl;
}

void complain(const std::string& line) {
  std::cerr << "tony-submit: " << line << std::endl;
}

// The Hadoop configuration directory and its contents.
struct hadoop_setup {
  std::string dir;
  hadoop::configuration conf;
};

// Exit code and message when the configuration cannot be had.
std::variant<hadoop_setup, int> load_hadoop(const std::string& from_cli,
                                            const std::string& from_job) {
  std::string dir = from_cli;
  if (dir.empty())
    if (auto env = std::getenv("HADOOP_CONF_DIR"))
      dir = env;
  if (dir.empty())
    dir = from_job;
  if (dir.empty()) {
    complain("the yarn backend needs the cluster's Hadoop configuration: pass "
             "--hadoop-conf DIR, set HADOOP_CONF_DIR, or set [cluster] hadoop_conf");
    return exit_usage;
  }
  auto conf = hadoop::configuration::load_dir(dir);
  if (!conf) {
    complain(conf.error().message());
    return exit_usage;
  }
  // WebHDFS staging needs the NameNode's HTTP address.
  if (fs::exists(dir + "/hdfs-site.xml"))
    if (auto ok = conf->add_file(dir + "/hdfs-site.xml"); !ok) {
      complain(ok.error().message());
      return exit_usage;
    }
  return hadoop_setup{dir, std::move(*conf)};
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

// The NameNode's WebHDFS address for a directory on HDFS; empty elsewhere.
std::string webhdfs_for(const std::string& uri, const hadoop::configuration& conf) {
  if (uri.rfind("hdfs://", 0) != 0)
    return {};
  auto authority = uri.substr(7, uri.find('/', 7) - 7);
  auto nn_host = authority.substr(0, authority.find(':'));
  auto webhdfs = conf.get_or("dfs.namenode.http-address", nn_host + ":9870");
  if (webhdfs.rfind("0.0.0.0:", 0) == 0)
    webhdfs = nn_host + webhdfs.substr(7);
  return webhdfs;
}

// Where a job's files go, derived here once: the AM gets them in its
// environment (runtime/yarn/am_env.hpp) and derives nothing itself.
struct job_locations {
  std::string staging_uri;
  std::string staging_webhdfs;
  std::string history_uri;
  std::string history_webhdfs;
};

job_locations locate_job(const job_spec& job, const hadoop::configuration& conf,
                         const std::string& app_id, const std::string& user) {
  auto default_fs = conf.get_or("fs.defaultFS", "file:///");
  std::string root = job.cluster.staging_dir;
  if (root.empty()) {
    if (default_fs.rfind("hdfs://", 0) == 0) {
      auto authority = default_fs.substr(7);
      while (!authority.empty() && authority.back() == '/')
        authority.pop_back();
      root = "hdfs://" + authority + "/user/" + user + "/.tony";
    } else {
      auto home = std::getenv("HOME");
      root = "file://" + std::string(home ? home : "/tmp") + "/.tony/staging";
    }
  } else if (root[0] == '/') {
    root = (default_fs.rfind("hdfs://", 0) == 0 ? default_fs : std::string{"file://"}) +
           root;
  }
  while (!root.empty() && root.back() == '/')
    root.pop_back();
  job_locations result;
  result.staging_uri = root + "/" + app_id;
  result.staging_webhdfs = webhdfs_for(root, conf);
  result.history_uri =
      history::history_location(job.cluster.history_dir, default_fs, user);
  result.history_webhdfs = webhdfs_for(result.history_uri, conf);
  return result;
}

// Follows the application to its end; returns tony-submit's exit code.
int follow(yarn::application_client& rm, const yarn::application_id& id,
           const job_spec* job, const submit_options& opts,
           const std::string& history_uri = {}) {
  auto quiet = opts.quiet;
  auto interrupted = [&opts] {
    return opts.interrupted && opts.interrupted->load() != 0;
  };
  client_config cfg;
  caf::actor_system sys{cfg};
  am_watcher watcher{sys};
  status_view view{std::cout, !quiet && status_view::stdout_is_terminal(), quiet};
  auto app = yarn::to_string(id);
  std::string last_yarn_state;
  bool kill_sent = false;
  auto last_report_ok = clock_type::now();
  std::optional<job_status> last_status;
  for (;;) {
    if (interrupted() && !kill_sent) {
      kill_sent = true;
      view.note("interrupted: killing " + app);
      auto killed = rm.force_kill_application(id, "killed by tony-submit (interrupted)",
                                              hadoop::deadline_after(seconds(15)));
      if (!killed)
        complain("could not kill " + app + ": " + killed.error().message());
    }
    auto report = rm.get_application_report(id, hadoop::deadline_after(seconds(5)));
    if (!report) {
      if (clock_type::now() - last_report_ok > seconds(60)) {
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
      view.note("YARN: " + app + " " + state +
                (report->tracking_url.empty() ? "" : " (" + report->tracking_url + ")"));
    }
    // The RM's web proxy URL: it works wherever the RM's UI does.
    if (report->state == yarn::application_state::running)
      view.tracking_url(report->tracking_url);
    if (report->state == yarn::application_state::running && report->rpc_port > 0 &&
        !report->host.empty() && report->host != "N/A")
      if (watcher.connect(report->host, static_cast<uint16_t>(report->rpc_port)))
        watcher.watch_end();
    // The final status comes from the AM itself (it waits for us to have
    // it); until then the polls show the job.
    if (auto st = watcher.final_status(); st || (st = watcher.poll(seconds(2)))) {
      last_status = *st;
      view.show(*st);
    }
    if (yarn::is_terminal(report->state)) {
      if (last_status)
        view.leave(*last_status);
      auto final = yarn::to_string(report->final);
      say("job " + app + (job ? " (" + job->name + ")" : std::string{}) + " " + state +
          "/" + final);
      if (!report->diagnostics.empty())
        say("diagnostics: " + report->diagnostics);
      say("logs: yarn logs -applicationId " + app);
      if (!quiet && !history_uri.empty())
        say("event log: " + history_uri + "/" + app + ".jsonl (tony-history --dir " +
            history_uri + " show " + app + ")");
      return report->state == yarn::application_state::finished &&
                     report->final == yarn::final_status::succeeded
                 ? exit_succeeded
                 : exit_failed;
    }
    std::this_thread::sleep_for(milliseconds(watcher.connected() ? 250 : 100));
  }
}

// Writes `content` to a fresh file in `dir`.
std::string write_temp(const std::string& dir, const std::string& name,
                       const std::string& content) {
  auto path = dir + "/" + name;
  std::ofstream out(path, std::ios::trunc);
  out << content;
  return out ? path : std::string{};
}

} // namespace

int submit_yarn(const job_spec& job, const submit_options& opts) {
  auto setup = load_hadoop(opts.hadoop_conf, job.cluster.hadoop_conf);
  if (auto code = std::get_if<int>(&setup))
    return *code;
  auto& [conf_dir, conf] = std::get<hadoop_setup>(setup);
  auto ipc = std::make_shared<hadoop::ipc_client>();
  auto user = hadoop::current_user();
  auto rm = yarn::application_client::from_configuration(ipc, conf, user);
  if (!rm) {
    complain(rm.error().message());
    return exit_usage;
  }
  auto fresh = rm->get_new_application(hadoop::deadline_after(seconds(20)));
  if (!fresh) {
    complain("cannot reach the ResourceManager: " + fresh.error().message() +
             " (is it running? check yarn.resourcemanager.address in " + conf_dir +
             "/yarn-site.xml)");
    return exit_infra;
  }
  auto app = yarn::to_string(fresh->id);
  // Asks the cluster can never grant fail here, before anything is submitted.
  auto max = fresh->max_capability;
  for (auto& type : job.tasks) {
    if (!fits(type.capability, max)) {
      complain("tasks." + type.name + " asks for " + to_string(type.capability) +
               " per task, but the largest container this cluster grants is " +
               to_string(max) + "; lower the request or use a larger queue/cluster");
      return exit_usage;
    }
  }
  if (!fits(job.am.capability, max)) {
    complain("[am] asks for " + to_string(job.am.capability) +
             ", but the largest container this cluster grants is " + to_string(max));
    return exit_usage;
  }

  // Stage what the job ships.
  auto where = locate_job(job, conf, app, user);
  auto& staging_uri = where.staging_uri;
  auto& webhdfs = where.staging_webhdfs;
  auto stager = staging::make_stager(staging_uri, webhdfs, user);
  if (!stager) {
    complain(describe(stager.error()));
    return exit_usage;
  }
  auto scratch = fs::temp_directory_path() / ("tony-submit-" + app);
  std::error_code ec;
  fs::create_directories(scratch, ec);
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
  std::string am_program = "./tony-am";
  std::string install_dir = job.cluster.install_dir;
  if (install_dir.empty()) {
    // Binaries are staged once per content under <root>/bin/<hash>/ and
    // reused by every later job: most submissions upload only the job.
    auto root = staging_uri.substr(0, staging_uri.rfind('/'));
    struct binary {
      const char* name;
      bool for_am;
      bool optional; // tony-guard: without it executors guard with a shell
    };
    for (auto [bin, for_am, optional] :
         {binary{"tony-am", true, false}, binary{"tony-executor", false, false},
          binary{"tony-guard", false, true}}) {
      auto path = opts.bin_dir + "/" + bin;
      if (optional && ::access(path.c_str(), X_OK) != 0)
        continue;
      auto hash = staging::content_hash(path);
      if (hash.empty())
        return fail_staging(make_error(errc::infrastructure, "cannot read " + path));
      auto cache = staging::make_stager(root + "/bin/" + hash, webhdfs, user);
      if (!cache)
        return fail_staging(cache.error());
      std::error_code size_ec;
      auto size = static_cast<int64_t>(fs::file_size(path, size_ec));
      auto res = (*cache)->stat(bin, false);
      if (!res || res->size != size)
        res = (*cache)->put(path, bin, false);
      if (!res)
        return fail_staging(res.error());
      (for_am ? am_resources : executor_resources).push_back(*res);
    }
  } else {
    am_program = install_dir + "/tony-am";
  }
  auto job_file = write_temp(scratch.string(), "job.json", to_json(job));
  if (job_file.empty())
    return fail_staging(
        make_error(errc::infrastructure, "cannot write " + scratch.string()));
  if (auto ok = stage(job_file, "job.json", false, true, false); !ok)
    return fail_staging(ok.error());
  auto src_archive = (scratch / "src.tgz").string();
  if (auto ok = staging::make_archive(job.src_dir, src_archive); !ok)
    return fail_staging(ok.error());
  if (auto ok = stage(src_archive, "src.tgz", true, false, true); !ok)
    return fail_staging(ok.error());
  executor_resources.back().name = "src";
  if (!job.python_venv.empty()) {
    if (auto ok = stage(job.python_venv, fs::path(job.python_venv).filename().string(),
                        true, false, true);
        !ok)
      return fail_staging(ok.error());
    executor_resources.back().name = "venv";
  }
  cleanup_scratch();

  // The AM's container.
  yarn::submission_context ctx;
  ctx.id = fresh->id;
  ctx.name = job.name;
  ctx.queue = job.queue;
  ctx.application_type = application_type(job.framework);
  ctx.am_resource = job.am.capability;
  ctx.max_app_attempts = job.am.max_app_attempts;
  ctx.tags = job.tags;
  ctx.am_launch.resources = am_resources;
  auto scheduler = yarn::scheduler_address(conf);
  if (!scheduler) {
    complain(scheduler.error().message());
    (*stager)->remove_all();
    return exit_usage;
  }
  ctx.am_launch.env[yarn_env::scheduler] = hadoop::to_string(*scheduler);
  ctx.am_launch.env[yarn_env::executor_resources] = resources_to_json(executor_resources);
  ctx.am_launch.env[yarn_env::staging_uri] = staging_uri;
  if (auto nodes = rm->get_cluster_nodes(hadoop::deadline_after(seconds(10)))) {
    std::string places;
    size_t running = 0;
    for (auto& node : *nodes)
      if (node.state == "RUNNING") {
        places += (places.empty() ? "" : ",") + node.host + "=" + node.rack;
        ++running;
      }
    if (running > 0 && running <= yarn_env::nodes_in_asks_limit)
      ctx.am_launch.env[yarn_env::nodes] = places;
  }
  if (!webhdfs.empty())
    ctx.am_launch.env[yarn_env::webhdfs_address] = webhdfs;
  if (!install_dir.empty())
    ctx.am_launch.env[yarn_env::install_dir] = install_dir;
  ctx.am_launch.env["HADOOP_USER_NAME"] = user;
  // Where the AM keeps the event log when the job ends (doc/tracking.md).
  auto history_uri = where.history_uri;
  ctx.am_launch.env[yarn_env::history_uri] = history_uri;
  if (!where.history_webhdfs.empty())
    ctx.am_launch.env[yarn_env::history_webhdfs] = where.history_webhdfs;
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
  if (!opts.quiet)
    say("submitted " + app + " (" + job.name + ", " + std::to_string(job.total_tasks()) +
        " tasks) to YARN queue " + job.queue + "; staged in " + staging_uri);
  if (opts.detach) {
    say("detached; follow it with: tony-submit --status " + app);
    return exit_succeeded;
  }
  return follow(*rm, fresh->id, &job, opts, history_uri);
}

namespace {

// What --kill and --status work with: the application and a client of its
// ResourceManager; or tony-submit's exit code when either cannot be had.
struct rm_target {
  yarn::application_id id;
  yarn::application_client rm;
};

std::variant<rm_target, int> rm_for_application(const std::string& app_id,
                                                const submit_options& opts) {
  auto id = yarn::parse_application_id(app_id);
  if (!id) {
    complain(id.error().message());
    return exit_usage;
  }
  auto setup = load_hadoop(opts.hadoop_conf, {});
  if (auto code = std::get_if<int>(&setup))
    return *code;
  auto ipc = std::make_shared<hadoop::ipc_client>();
  auto rm = yarn::application_client::from_configuration(
      ipc, std::get<hadoop_setup>(setup).conf);
  if (!rm) {
    complain(rm.error().message());
    return exit_usage;
  }
  return rm_target{*id, std::move(*rm)};
}

} // namespace

int kill_yarn_application(const std::string& app_id, const submit_options& opts) {
  auto target = rm_for_application(app_id, opts);
  if (auto code = std::get_if<int>(&target))
    return *code;
  auto& [id, rm] = std::get<rm_target>(target);
  auto deadline = clock_type::now() + seconds(30);
  for (;;) {
    auto done = rm.force_kill_application(id, "killed by tony-submit --kill",
                                          hadoop::deadline_after(seconds(10)));
    if (!done) {
      complain("cannot kill " + app_id + ": " + done.error().message());
      return exit_infra;
    }
    if (*done) {
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

int status_yarn_application(const std::string& app_id, const submit_options& opts) {
  auto target = rm_for_application(app_id, opts);
  if (auto code = std::get_if<int>(&target))
    return *code;
  auto& [id, rm] = std::get<rm_target>(target);
  auto report = rm.get_application_report(id, hadoop::deadline_after(seconds(10)));
  if (!report) {
    complain("cannot get the report of " + app_id + ": " + report.error().message());
    return report.error().is_remote("ApplicationNotFoundException") ? exit_usage
                                                                    : exit_infra;
  }
  std::cout << "application: " << app_id << "\nname: " << report->name
            << "\ntype: " << report->application_type << "\nqueue: " << report->queue
            << "\nstate: " << yarn::to_string(report->state)
            << "\nfinal status: " << yarn::to_string(report->final)
            << "\ntracking url: " << report->tracking_url << "\n";
  if (!report->diagnostics.empty())
    std::cout << "diagnostics: " << report->diagnostics << "\n";
  if (report->state == yarn::application_state::running && report->rpc_port > 0) {
    client_config cfg;
    caf::actor_system sys{cfg};
    am_watcher watcher{sys};
    if (watcher.connect(report->host, static_cast<uint16_t>(report->rpc_port)))
      if (auto st = watcher.poll(seconds(5)))
        for (auto& t : st->tasks)
          std::cout << "task " << to_string(t.task) << ": " << t.state << " " << t.host
                    << ":" << t.port << " " << t.container_id << "\n";
  }
  return exit_succeeded;
}

} // namespace tony
