// tony-am: the ApplicationMaster. Started by tony-submit (local backend) or
// by a YARN NodeManager; see doc/architecture.md.

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "am/am_host.hpp"
#include "runtime/process/process.hpp"

int main(int argc, char** argv) {
  CLI::App app{"tony-am: the ApplicationMaster of a tony job"};
  tony::am_options opts;
  opts.backend = "local";
  opts.host.clear();
  app.add_option("--job", opts.job_json, "resolved job spec (JSON)")->required();
  app.add_option("--backend", opts.backend, "local | yarn")
      ->check(CLI::IsMember({"local", "yarn"}));
  app.add_option("--app-id", opts.app_id, "application id")->required();
  app.add_option("--work-dir", opts.work_dir, "job dir (local) or container dir (yarn)")
      ->required();
  app.add_option("--host", opts.host,
                 "address executors and clients reach this AM at (default: 127.0.0.1 "
                 "locally, $NM_HOST on YARN)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  auto self = tony::process::self_executable();
  opts.executor_path = self.substr(0, self.rfind('/') + 1) + "tony-executor";
  return tony::run_am(opts);
}
