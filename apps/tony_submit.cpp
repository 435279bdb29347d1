// tony-submit: validate, stage, submit and follow a job (doc/job-toml.md).

#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "config/job_config.hpp"
#include "runtime/process/process.hpp"
#include "runtime/submit/submit.hpp"

int main(int argc, char** argv) {
  CLI::App app{"tony-submit: run a distributed job described by a job.toml"};
  std::string job_file;
  std::vector<std::string> overrides;
  std::string backend;
  tony::submit_options opts;
  app.add_option("job", job_file, "the job.toml")->required();
  app.add_option("--set", overrides,
                 "override a job.toml key: --set tasks.worker.instances=4")
      ->take_all();
  app.add_option("--backend", backend, "local | yarn (overrides [cluster] backend)")
      ->check(CLI::IsMember({"local", "yarn"}));
  app.add_option("--hadoop-conf", opts.hadoop_conf, "Hadoop configuration directory");
  app.add_flag("--detach", opts.detach, "submit and return without following the job");
  app.add_flag("-q,--quiet", opts.quiet, "print only the outcome");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    auto code = app.exit(e);
    return code == 0 ? 0 : tony::exit_usage;
  }
  spdlog::set_level(spdlog::level::warn);
  if (!backend.empty())
    overrides.push_back("cluster.backend=\"" + backend + "\"");
  auto job = tony::load_job(job_file, overrides);
  if (!job) {
    for (auto& err : job.error())
      std::cerr << err.to_string() << "\n";
    return tony::exit_usage;
  }
  auto self = tony::process::self_executable();
  opts.bin_dir = self.substr(0, self.rfind('/'));
  if (job->cluster.backend == "local")
    return tony::submit_local(*job, opts);
  std::cerr << "tony-submit: the yarn backend is not available in this build\n";
  return tony::exit_infra;
}
