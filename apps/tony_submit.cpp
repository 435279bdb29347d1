// tony-submit: validate, stage, submit and follow a job; query, kill and
// read the logs of one by its application id (doc/job-toml.md,
// doc/operations.md).

#include <atomic>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "config/job_config.hpp"
#include "config/job_json.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/signal_watcher.hpp"
#include "runtime/submit/event_output.hpp"
#include "runtime/submit/job_control.hpp"
#include "runtime/submit/submit.hpp"

namespace {

struct command_line {
  std::string job_file;
  std::vector<std::string> overrides;
  std::string kill_id;
  std::string status_id;
  std::string logs_id;
  tony::logs_request logs;
  std::string output = "human";
  bool dry_run = false;
};

// --status, --kill, --logs: one application id and nothing else.
int control(const command_line& cl, const tony::submit_options& opts) {
  int given = !cl.kill_id.empty() + !cl.status_id.empty() + !cl.logs_id.empty();
  if (!cl.job_file.empty() || given > 1 || cl.dry_run) {
    std::cerr << "tony-submit: --kill, --status and --logs take an application id and "
                 "nothing else\n";
    return tony::exit_usage;
  }
  if (!cl.status_id.empty())
    return tony::status_command(cl.status_id, opts, cl.output == "json");
  if (!cl.logs_id.empty())
    return tony::logs_command(cl.logs_id, opts, cl.logs);
  return tony::kill_command(cl.kill_id, opts);
}

void add_options(CLI::App& app, command_line& cl, tony::submit_options& opts) {
  app.add_option("job", cl.job_file, "the job.toml");
  app.add_option("--set", cl.overrides,
                 "override a job.toml key, e.g. --set tasks.worker.instances=4 "
                 "(repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--backend", opts.backend, "local | yarn (overrides [cluster] backend)")
      ->check(CLI::IsMember({"local", "yarn"}));
  app.add_option("--hadoop-conf", opts.hadoop_conf,
                 "Hadoop configuration directory (default: $HADOOP_CONF_DIR)");
  app.add_flag("--detach", opts.detach, "submit and return without following the job");
  app.add_flag("-q,--quiet", opts.quiet, "print only the outcome");
  app.add_option("--output", cl.output,
                 "human | json: json prints one JSON event per line on stdout "
                 "(doc/operations.md); with --status, one JSON object")
      ->check(CLI::IsMember({"human", "json"}));
  app.add_flag_callback(
      "--json", [&cl] { cl.output = "json"; }, "same as --output json");
  app.add_flag("--dry-run", cl.dry_run,
               "check the job and print its resolved spec as JSON; submit nothing");
  app.add_option("--kill", cl.kill_id, "kill application APP_ID and exit");
  app.add_option("--status", cl.status_id, "print application APP_ID's state and exit");
  app.add_option("--logs", cl.logs_id, "print the task logs of application APP_ID");
  app.add_option("--task", cl.logs.task, "with --logs: only this task, e.g. worker:1");
  app.add_option("--file", cl.logs.file,
                 "with --logs: this file of the task's log dir instead of stdout and "
                 "stderr (with --task: its bytes alone)");
  app.add_option("--jobs-dir", opts.jobs_dir,
                 "the local backend's jobs dir for --status/--kill/--logs (default "
                 "~/.tony/jobs)");
}

} // namespace

int main(int argc, char** argv) {
  // Before any thread starts: Ctrl-C becomes a flag the follow loops read.
  tony::process::signal_watcher signals;
  std::atomic<int> interrupted{0};
  signals.start([&interrupted](int sig) { interrupted = sig; });
  CLI::App app{"tony-submit: run a distributed job described by a job.toml"};
  command_line cl;
  tony::submit_options opts;
  add_options(app, cl, opts);
  try {
    app.parse(argc, argv);
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
    return control(cl, opts);
  if (cl.job_file.empty()) {
    std::cerr << "tony-submit: which job? usage: tony-submit [options] job.toml "
                 "(see --help)\n";
    return tony::exit_usage;
  }
  if (!opts.backend.empty())
    cl.overrides.push_back("cluster.backend=\"" + opts.backend + "\"");
  auto job = tony::load_job(cl.job_file, cl.overrides);
  if (!job) {
    for (auto& err : job.error())
      std::cerr << err.to_string() << "\n";
    return tony::exit_usage;
  }
  if (cl.dry_run) {
    std::cout << tony::to_json(*job) << std::endl;
    return tony::exit_succeeded;
  }
  // --output json: stdout carries the events alone; every human line goes
  // to stderr instead.
  std::ostream json_out(std::cout.rdbuf());
  tony::event_output events(json_out);
  if (cl.output == "json") {
    std::cout.rdbuf(std::cerr.rdbuf());
    opts.events = &events;
  }
  if (job->cluster.backend == "yarn")
    return tony::submit_yarn(*job, opts);
  return tony::submit_local(*job, opts);
}
