// tony-submit: validate, stage, submit and follow a job; query, kill and
// read the logs of one by its application id (doc/job-toml.md,
// doc/operations.md). Also takes TonY's command line and tony.xml
// (doc/migrating.md).

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "compat/tony_cli.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/signal_watcher.hpp"
#include "submit/front.hpp"
#include "submit/job_control.hpp"

namespace {

// TonY's ClusterSubmitter options, single or double dash.
void add_tony_options(CLI::App& app, tony::tony_cli_args& t) {
  auto group = "TonY's options (doc/migrating.md)";
  app.add_option("--executes", t.executes, "TonY: the entry point, relative to --src_dir")
      ->group(group);
  app.add_option("--task_params", t.task_params, "TonY: arguments of the entry point")
      ->group(group);
  app.add_option("--python_venv", t.python_venv, "TonY: a zipped Python environment")
      ->group(group);
  app.add_option("--python_binary_path", t.python_binary_path,
                 "TonY: the interpreter, relative to the unpacked venv or absolute")
      ->group(group);
  app.add_option("--src_dir", t.src_dir, "TonY: the directory shipped to every task")
      ->group(group);
  app.add_option("--shell_env", t.shell_env,
                 "TonY: NAME=VALUE for the tasks (repeatable)")
      ->allow_extra_args(false)
      ->group(group);
  app.add_option("--container_env", t.container_env,
                 "TonY: NAME=VALUE for the containers (repeatable)")
      ->allow_extra_args(false)
      ->group(group);
  app.add_option("--conf_file", t.conf_file, "TonY: a tony.xml")->group(group);
  app.add_option("--conf", t.conf, "TonY: tony.KEY=VALUE, over --conf_file (repeatable)")
      ->allow_extra_args(false)
      ->group(group);
  app.add_option("--hdfs_classpath", t.hdfs_classpath, "TonY: not supported")
      ->group(group);
  app.add_option("--sidecar_tensorboard_log_dir", t.sidecar_tensorboard_log_dir,
                 "TonY: run TensorBoard beside the job on this directory")
      ->group(group);
}

bool ends_with_xml(const std::string& path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".xml") == 0;
}

struct control_line {
  std::string kill_id;
  std::string status_id;
  std::string logs_id;
  tony::logs_request logs;
};

// --status, --kill, --logs: one application id and nothing else.
int control(const control_line& cl, const tony::front_request& req,
            const std::string& job_file) {
  int given = !cl.kill_id.empty() + !cl.status_id.empty() + !cl.logs_id.empty();
  if (!job_file.empty() || given > 1 || req.dry_run) {
    std::cerr << "tony-submit: --kill, --status and --logs take an application id and "
                 "nothing else\n";
    return tony::exit_usage;
  }
  auto opts = req.opts;
  opts.backend = req.backend;
  if (!cl.status_id.empty())
    return tony::status_command(cl.status_id, opts, req.output == "json");
  if (!cl.logs_id.empty())
    return tony::logs_command(cl.logs_id, opts, cl.logs);
  return tony::kill_command(cl.kill_id, opts);
}

void add_control_options(CLI::App& app, control_line& cl, tony::front_request& req) {
  app.add_option("--output", req.output,
                 "human | json: json prints one JSON event per line on stdout "
                 "(doc/operations.md); with --status, one JSON object")
      ->check(CLI::IsMember({"human", "json"}));
  app.add_flag_callback(
      "--json", [&req] { req.output = "json"; }, "same as --output json");
  app.add_flag("--dry-run", req.dry_run,
               "check the job and print its resolved spec as JSON; submit nothing");
  app.add_option("--kill", cl.kill_id, "kill application APP_ID and exit");
  app.add_option("--status", cl.status_id, "print application APP_ID's state and exit");
  app.add_option("--logs", cl.logs_id,
                 "print the task logs of application APP_ID (on YARN from the "
                 "NodeManagers while it runs, from the aggregated logs after it ended)");
  app.add_option("--task", cl.logs.task, "with --logs: only this task, e.g. worker:1");
  app.add_option("--file", cl.logs.file,
                 "with --logs: this file of the task's log dir instead of stdout and "
                 "stderr (with --task: its bytes alone)");
  app.add_option("--jobs-dir", req.opts.jobs_dir,
                 "the local backend's jobs dir for --status/--kill/--logs (default "
                 "~/.tony/jobs)");
}

// Who tony-submit logs in as on a secure cluster, and whom it submits for.
void add_login_options(CLI::App& app, tony::submit_options& opts) {
  app.add_option("--principal", opts.principal,
                 "Kerberos principal to log in as (overrides [security] principal)");
  app.add_option("--keytab", opts.keytab,
                 "keytab of --principal: log in from it instead of the ticket cache "
                 "(overrides [security] keytab)");
  app.add_option("--proxy-user", opts.proxy_user,
                 "submit for this user, who then owns the job, as Hadoop's proxy users "
                 "(the cluster's hadoop.proxyuser.<you>.* must allow it; default "
                 "$HADOOP_PROXY_USER; YARN only)");
}

} // namespace

int main(int argc, char** argv) {
  // Before any thread starts: Ctrl-C becomes a flag the follow loops read.
  tony::process::signal_watcher signals;
  std::atomic<int> interrupted{0};
  signals.start([&interrupted](int sig) { interrupted = sig; });
  CLI::App app{"tony-submit: run a distributed job described by a job.toml, or by "
               "TonY's command line and tony.xml"};
  tony::front_request req;
  req.program = "tony-submit";
  std::string job_file;
  control_line cl;
  tony::tony_cli_args tony_args;
  auto& opts = req.opts;
  app.add_option("job", job_file, "the job.toml (or a TonY tony.xml)");
  app.add_option("--set", req.set_items,
                 "override a job.toml key, e.g. --set tasks.worker.instances=4 "
                 "(repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--backend", req.backend, "local | yarn (see doc/migrating.md)")
      ->check(CLI::IsMember({"local", "yarn"}));
  app.add_option("--hadoop-conf", opts.hadoop_conf,
                 "Hadoop configuration directory (default: $HADOOP_CONF_DIR)");
  add_login_options(app, opts);
  app.add_flag("--detach", opts.detach, "submit and return without following the job");
  app.add_flag("-q,--quiet", opts.quiet, "print only the outcome");
  app.add_option("--follow", opts.follow,
                 "stream this task's stdout and stderr while the job runs, e.g. worker:1 "
                 "(default on a terminal: the chief, or worker:0)");
  app.add_flag_callback(
      "--no-follow", [&opts] { opts.follow = "none"; },
      "do not stream any task's output");
  app.add_flag("--print-toml", req.print_toml,
               "print the job as job.toml (e.g. what a TonY command line amounts to) "
               "and exit");
  add_control_options(app, cl, req);
  add_tony_options(app, tony_args);
  try {
    std::vector<std::string> args{argv + 1, argv + argc};
    args = tony::normalize_tony_dashes(args);
    std::reverse(args.begin(), args.end()); // CLI11 takes them last to first
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    auto code = app.exit(e);
    return code == 0 ? 0 : tony::exit_usage;
  }
  spdlog::set_level(spdlog::level::warn);
  auto self = tony::process::self_executable();
  opts.bin_dir = self.substr(0, self.rfind('/'));
  opts.interrupted = &interrupted;
  if (cl.logs_id.empty() && (!cl.logs.task.empty() || !cl.logs.file.empty())) {
    std::cerr << "tony-submit: --task and --file go with --logs APP_ID\n";
    return tony::exit_usage;
  }
  if (!cl.kill_id.empty() || !cl.status_id.empty() || !cl.logs_id.empty())
    return control(cl, req, job_file);
  if (ends_with_xml(job_file) && tony_args.conf_file.empty()) {
    tony_args.conf_file = job_file; // tony-submit tony.xml: TonY's configuration
    job_file.clear();
  }
  if (tony_args.any() && !job_file.empty()) {
    std::cerr << "tony-submit: TonY's options describe the whole job; give them without "
                 "a job.toml, or use --set with the job.toml (doc/migrating.md)\n";
    return tony::exit_usage;
  }
  tony::job_draft draft;
  if (tony_args.any()) {
    req.base_dir = std::filesystem::current_path().string();
    draft = tony::translate_tony(tony_args, req.base_dir);
    req.draft = &draft;
    req.draft_name = tony_args.conf_file.empty() ? "TonY job" : tony_args.conf_file;
  } else if (job_file.empty()) {
    std::cerr << "tony-submit: which job? usage: tony-submit [options] job.toml, or "
                 "TonY's options (see --help)\n";
    return tony::exit_usage;
  }
  req.job_file = job_file;
  return tony::run_front(req);
}
