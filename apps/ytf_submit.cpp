// ytf-submit: YARN-DTF's command line for tony (doc/migrating.md).
//
//   ytf-submit [OPTIONS] -r <cluster_requirement> <task_command>
//
// Translates the options into a job (compat/ytf_cli.hpp) and runs it the way
// tony-submit does: the same follow output and exit codes.

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "compat/ytf_cli.hpp"
#include "runtime/process/process.hpp"
#include "runtime/process/signal_watcher.hpp"
#include "submit/front.hpp"

int main(int argc, char** argv) {
  tony::process::signal_watcher signals;
  std::atomic<int> interrupted{0};
  signals.start([&interrupted](int sig) { interrupted = sig; });
  CLI::App app{"ytf-submit: submit a TensorFlow session to YARN (or this machine) with "
               "YARN-DTF's command line\n  ytf-submit [OPTIONS] -r <cluster_requirement> "
               "<task_command>"};
  tony::ytf_args y;
  tony::front_request req;
  req.program = "ytf-submit";
  req.front = tony::front_end::ytf;
  auto& opts = req.opts;
  app.add_option("-r,--cluster_requirement", y.cluster_requirement,
                 "job_name:num_tasks,..., e.g. \"ps:2,worker:4\"")
      ->required();
  app.add_option("-c,--task_vcores", y.task_vcores,
                 "vcores per task: N, job_name:N or job_name[index]:N (repeatable; "
                 "default 1)")
      ->allow_extra_args(false);
  app.add_option("-m,--task_memory", y.task_memory,
                 "memory per task in MB: N, job_name:N or job_name[index]:N (repeatable; "
                 "default 8192)")
      ->allow_extra_args(false);
  app.add_option("-i,--input", y.input, "input path, as DTF_INPUT_PATH");
  app.add_option("-o,--output", y.output, "output path, as DTF_OUTPUT_PATH");
  app.add_option("-s,--script", y.script,
                 "a local script shipped to every task, named by "
                 "DTF_TASK_SCRIPT");
  app.add_flag("-t,--tensorboard", y.tensorboard,
               "run TensorBoard on the output path (needs -o)");
  app.add_option("--docker_image", y.docker_image, "run the tasks in this Docker image");
  app.add_option("-q,--queue", y.queue, "YARN queue (default: default)");
  app.add_option("-n,--name", y.name, "application name (default: TensorFlow)");
  app.add_flag("--client", y.client,
               "also run the command here as client:0, outside the cluster spec");
  std::vector<std::string> command;
  app.add_option("task_command", command,
                 "the command of every task, one quoted argument; ${DTF_*} are expanded "
                 "in the task");
  app.add_option("--backend", req.backend,
                 "local | yarn (default: yarn when a Hadoop configuration is found: "
                 "--hadoop-conf, "
                 "HADOOP_CONF_DIR, YARN_CONF_DIR or the hadoop command's; else local)")
      ->check(CLI::IsMember({"local", "yarn"}));
  app.add_option("--hadoop-conf", opts.hadoop_conf,
                 "Hadoop configuration directory (default: $HADOOP_CONF_DIR)");
  app.add_option("--set", req.set_items, "override a job.toml key (repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--detach", opts.detach, "submit and return without following the job");
  app.add_flag("--quiet", opts.quiet, "print only the outcome");
  app.add_flag("--print-toml", req.print_toml, "print the job as job.toml and exit");
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
  for (auto& part : command)
    y.task_command += (y.task_command.empty() ? "" : " ") + part;
  req.base_dir = std::filesystem::current_path().string();
  auto job = tony::translate_ytf(y, req.base_dir);
  req.draft = &job.draft;
  req.draft_name = "ytf-submit";
  if (job.client)
    req.client = std::make_pair(job.client_command, job.client_env);
  return tony::run_front(req);
}
