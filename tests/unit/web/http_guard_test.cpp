// The HTTP server under clients that do not play along (web/
// http_server.hpp): slow headers and silent connections wait in the
// listener, never on a worker, and are closed at their deadline or at the
// cap; oversized headers get 431, a full queue 503; keep-alive and the
// filter in front of the handler work.

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <string>
#include <vector>

#include "messages/error.hpp"
#include "runtime/gate/gate_session.hpp"
#include "web/http_server.hpp"

namespace tony::http {
namespace {

using namespace std::chrono_literals;

int open_connection(int port) {
  auto fd = gate::connect_tcp("127.0.0.1", static_cast<uint16_t>(port), 5s);
  EXPECT_TRUE(fd) << describe(fd.error());
  return fd ? *fd : -1;
}

// Reads until the server closes or 10 s pass; what it sent.
std::string read_until_closed(int fd) {
  std::string got;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0)
      return got + "<no close within 10 s>";
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0)
      return got;
    got.append(buf, static_cast<size_t>(n));
  }
}

struct served {
  http_limits limits;
  http_server server;
  int port = 0;

  explicit served(http_limits l, http_server::handler h = nullptr)
      : limits(l)
      , server(l) {
    auto p = server.bind("127.0.0.1", 0);
    EXPECT_TRUE(p);
    port = p ? *p : 0;
    if (!h)
      h = [](const httplib::Request& req, const std::string&, httplib::Response& res) {
        res.set_content("hello " + req.path, "text/plain");
      };
    server.start(std::move(h));
  }

  httplib::Result get(const std::string& path) {
    httplib::Client client{"127.0.0.1", port};
    client.set_connection_timeout(5s);
    client.set_read_timeout(10s);
    return client.Get(path.c_str());
  }
};

TEST(http_guard, slow_headers_never_hold_a_worker) {
  http_limits limits;
  limits.workers = 2;
  limits.header_timeout = 500ms;
  served s{limits};
  // Ten clients start a request and never finish its header: more than
  // there are workers.
  std::vector<int> slow;
  for (int i = 0; i < 10; ++i) {
    slow.push_back(open_connection(s.port));
    ::send(slow.back(), "GET / HTTP/1.1\r\nHost: x\r\n", 25, MSG_NOSIGNAL);
  }
  auto res = s.get("/page");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "hello /page");
  for (auto fd : slow) {
    EXPECT_EQ(read_until_closed(fd), "") << "a slow header got an answer";
    ::close(fd);
  }
  EXPECT_GE(s.server.counts().expired, 10u);
}

TEST(http_guard, the_cap_closes_the_oldest_silent_connection) {
  http_limits limits;
  limits.max_pending = 4;
  limits.header_timeout = 60s; // only the cap closes anything here
  served s{limits};
  std::vector<int> silent;
  for (int i = 0; i < 6; ++i)
    silent.push_back(open_connection(s.port));
  // The listener admits them in order; the first two are closed for the
  // last two.
  EXPECT_EQ(read_until_closed(silent[0]), "");
  EXPECT_EQ(read_until_closed(silent[1]), "");
  auto res = s.get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_GE(s.server.counts().evicted, 2u);
  for (auto fd : silent)
    ::close(fd);
}

TEST(http_guard, an_oversized_header_gets_431) {
  http_limits limits;
  limits.max_header_bytes = 4096;
  served s{limits};
  int fd = open_connection(s.port);
  std::string request = "GET / HTTP/1.1\r\nX-Big: " + std::string(8000, 'a') + "\r\n\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  auto answer = read_until_closed(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 431", 0), 0u) << answer;
  ::close(fd);
}

TEST(http_guard, a_full_queue_answers_503) {
  http_limits limits;
  limits.workers = 1;
  limits.max_queued = 1;
  std::promise<void> release;
  auto released = release.get_future().share();
  std::atomic<int> entered{0};
  served s{limits,
           [&](const httplib::Request&, const std::string&, httplib::Response& res) {
             ++entered;
             released.wait();
             res.set_content("done", "text/plain");
           }};
  auto first = std::async(std::launch::async, [&] { return s.get("/1"); });
  for (int i = 0; i < 1000 && entered.load() == 0; ++i)
    ::poll(nullptr, 0, 10);
  ASSERT_EQ(entered.load(), 1);
  // The worker is busy: one request may queue, the next is turned away.
  int queued = open_connection(s.port);
  ::send(queued, "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n", 29, MSG_NOSIGNAL);
  for (int i = 0; i < 1000 && s.server.counts().passed < 2; ++i)
    ::poll(nullptr, 0, 10);
  ASSERT_EQ(s.server.counts().passed, 2u);
  int turned_away = open_connection(s.port);
  ::send(turned_away, "GET /3 HTTP/1.1\r\nHost: x\r\n\r\n", 29, MSG_NOSIGNAL);
  auto answer = read_until_closed(turned_away);
  EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
  release.set_value();
  auto res = first.get();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  ::close(queued);
  ::close(turned_away);
}

TEST(http_guard, keep_alive_serves_several_requests_on_one_connection) {
  served s{http_limits{}};
  httplib::Client client{"127.0.0.1", s.port};
  client.set_keep_alive(true);
  for (int i = 0; i < 3; ++i) {
    auto res = client.Get(("/r" + std::to_string(i)).c_str());
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->body, "hello /r" + std::to_string(i));
  }
  EXPECT_EQ(s.server.counts().accepted, 1u);
  // The server counts a request once its handler has returned, which can be
  // a moment after the client read the answer: wait for it (bounded).
  for (int i = 0; i < 200 && s.server.counts().passed < 3u; ++i)
    ::poll(nullptr, 0, 10);
  EXPECT_EQ(s.server.counts().passed, 3u);
}

TEST(http_guard, the_filter_answers_before_the_handler) {
  http_limits limits;
  http_server server{limits};
  auto port = server.bind("127.0.0.1", 0);
  ASSERT_TRUE(port);
  server.set_filter([](const httplib::Request& req, httplib::Response& res) {
    if (req.path != "/private")
      return false;
    res.status = 302;
    res.set_header("Location", "http://elsewhere/private");
    return true;
  });
  std::atomic<int> handled{0};
  server.start([&](const httplib::Request&, const std::string&, httplib::Response& res) {
    ++handled;
    res.set_content("open", "text/plain");
  });
  httplib::Client client{"127.0.0.1", *port};
  auto moved = client.Get("/private");
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->status, 302);
  EXPECT_EQ(moved->get_header_value("Location"), "http://elsewhere/private");
  EXPECT_EQ(handled.load(), 0);
  auto open = client.Get("/public");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->body, "open");
  EXPECT_EQ(handled.load(), 1);
}

} // namespace
} // namespace tony::http
