// tony-executor: runs in every task container; configured entirely by its
// container environment (doc/task-environment.md).

#include <cstring>
#include <iostream>

#include <spdlog/spdlog.h>

#include "runtime/am/executor_host.hpp"

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
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  return tony::run_executor();
}
