// tony-executor: runs in every task container; configured entirely by its
// container environment (doc/task-environment.md).

#include <unistd.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "executor/executor_host.hpp"

namespace {

// tony-guard lies beside tony-executor as it was started: in a YARN container
// both are localized links in the working directory (./tony-executor), with
// [cluster] install_dir both are in that dir, locally both are in tony's bin
// dir. Not there (an older install): empty, and a shell guards the command.
std::string guard_beside(const char* argv0) {
  std::string self = argv0 == nullptr ? "" : argv0;
  auto slash = self.rfind('/');
  if (slash == std::string::npos)
    return {};
  auto guard = self.substr(0, slash + 1) + "tony-guard";
  if (guard[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr)
      return {};
    guard = std::string{cwd} + "/" + guard;
  }
  return ::access(guard.c_str(), X_OK) == 0 ? guard : std::string{};
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 1 &&
      (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::cout << "tony-executor: started by tony-am in each task container; takes no "
                 "arguments (its configuration is the container environment)\n";
    return 0;
  }
  if (argc > 1) {
    std::cerr << "tony-executor: unexpected argument '" << argv[1]
              << "'; it takes none (see --help)\n";
    return 2;
  }
  // The log goes to stdout (executor.log); its warnings and errors also to
  // stderr, which stays the container's own: the NodeManager (and the local
  // pool) put its tail into the diagnostics of a container that fails, so
  // an executor that cannot start is reported with its reason.
  auto out = std::make_shared<spdlog::sinks::stdout_sink_mt>();
  auto err = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  err->set_level(spdlog::level::warn);
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "tony-executor", spdlog::sinks_init_list{std::move(out), std::move(err)}));
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  return tony::run_executor(guard_beside(argv[0]));
}
