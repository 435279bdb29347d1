#define CAF_TEST_NO_MAIN
#include <caf/test/unit_test_impl.hpp>

#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  return caf::test::main(argc, argv);
}
