// tony-submit: validate, stage, submit and follow a job (doc/job-toml.md,
// doc/operations.md).

#include <atomic>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "config/job_config.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/signal_watcher.hpp"
#include "submit/submit.hpp"

int main(int argc, char** argv) {
  // Before any thread starts: Ctrl-C becomes a flag the follow loops read.
  tony::process::signal_watcher signals;
  std::atomic<int> interrupted{0};
  signals.start([&interrupted](int sig) { interrupted = sig; });
  CLI::App app{"tony-submit: run a distributed job described by a job.toml"};
  std::string job_file;
  std::vector<std::string> overrides;
  std::string backend;
  std::string kill_id;
  std::string status_id;
  tony::submit_options opts;
  app.add_option("job", job_file, "the job.toml");
  app.add_option("--set", overrides,
                 "override a job.toml key, e.g. --set tasks.worker.instances=4 "
                 "(repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--backend", backend, "local | yarn (overrides [cluster] backend)")
      ->check(CLI::IsMember({"local", "yarn"}));
  app.add_option("--hadoop-conf", opts.hadoop_conf,
                 "Hadoop configuration directory (default: $HADOOP_CONF_DIR)");
  app.add_flag("--detach", opts.detach, "submit and return without following the job");
  app.add_flag("-q,--quiet", opts.quiet, "print only the outcome");
  app.add_option("--kill", kill_id, "kill YARN application APP_ID and exit");
  app.add_option("--status", status_id, "print YARN application APP_ID's state and exit");
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
  if (!kill_id.empty() || !status_id.empty()) {
    if (!job_file.empty() || (!kill_id.empty() && !status_id.empty())) {
      std::cerr << "tony-submit: --kill and --status take an application id and "
                   "nothing else\n";
      return tony::exit_usage;
    }
    return kill_id.empty() ? tony::status_yarn_application(status_id, opts)
                           : tony::kill_yarn_application(kill_id, opts);
  }
  if (job_file.empty()) {
    std::cerr << "tony-submit: which job? usage: tony-submit [options] job.toml "
                 "(see --help)\n";
    return tony::exit_usage;
  }
  if (!backend.empty())
    overrides.push_back("cluster.backend=\"" + backend + "\"");
  auto job = tony::load_job(job_file, overrides);
  if (!job) {
    for (auto& err : job.error())
      std::cerr << err.to_string() << "\n";
    return tony::exit_usage;
  }
  if (job->cluster.backend == "yarn")
    return tony::submit_yarn(*job, opts);
  return tony::submit_local(*job, opts);
}
