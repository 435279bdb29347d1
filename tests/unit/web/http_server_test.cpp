#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "web/http_server.hpp"

namespace {

// A server stopped right after it started must stop: cpp-httplib 0.11 ignores
// stop() until its listen loop runs, which once hung the AM at exit.
TEST(http_server, stops_right_after_starting) {
  for (int i = 0; i < 200; ++i) {
    auto done = std::async(std::launch::async, [] {
      tony::http::http_server server;
      auto port = server.bind("127.0.0.1", 0);
      if (!port)
        return false;
      server.start([](const auto&, const std::string&, auto& res) { res.status = 204; });
      server.stop();
      return true;
    });
    ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "stop() hung in round " << i;
    ASSERT_TRUE(done.get());
  }
}

} // namespace
