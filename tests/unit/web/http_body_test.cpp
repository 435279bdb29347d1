// The HTTP server's body policy over loopback (web/http_server.hpp,
// web/request_body.hpp): a body the route does not take is refused before
// it is read, whatever its framing; a body taken arrives whole and raw
// (multipart included), within its cap; slow bodies wait in the listener,
// never on a worker.

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
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

void send_all(int fd, const std::string& bytes) {
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
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

// Routes under /up take bodies of up to 1 KiB; nothing else takes one. The
// handler records what it got.
struct body_server {
  http_server server;
  int port = 0;
  std::mutex mutex;
  std::vector<std::string> bodies;
  std::vector<std::string> types;

  explicit body_server(http_limits limits = {})
      : server(limits) {
    auto p = server.bind("127.0.0.1", 0);
    EXPECT_TRUE(p);
    port = p ? *p : 0;
    server.set_body_policy([](const std::string&, const std::string& path) {
      body_rule rule;
      if (path.rfind("/up", 0) == 0)
        rule.max_bytes = 1024;
      return rule;
    });
    server.start([this](const httplib::Request& req, const std::string& body,
                        httplib::Response& res) {
      {
        std::lock_guard<std::mutex> guard{mutex};
        bodies.push_back(body);
        types.push_back(req.get_header_value("Content-Type"));
      }
      res.set_content(req.method + " " + req.path + " " + std::to_string(body.size()),
                      "text/plain");
    });
  }

  size_t served() {
    std::lock_guard<std::mutex> guard{mutex};
    return bodies.size();
  }
};

TEST(http_body, a_body_the_route_does_not_take_is_refused_unread_whatever_its_framing) {
  body_server s;
  for (std::string head :
       {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 629145600\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        "PUT /page HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n"}) {
    int fd = open_connection(s.port);
    send_all(fd, head); // the header alone: the answer comes without the body
    auto answer = read_until_closed(fd);
    EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << head << answer;
    EXPECT_NE(answer.find("takes no request body"), std::string::npos) << answer;
    ::close(fd);
  }
  EXPECT_EQ(s.served(), 0u);
  EXPECT_EQ(s.server.body_bytes_held(), 0u);
}

TEST(http_body, a_request_without_a_length_is_never_read_to_the_end_of_the_stream) {
  body_server s;
  int fd = open_connection(s.port);
  // No Content-Length, no chunks: no body; what follows is no request.
  send_all(fd, "POST /up HTTP/1.1\r\nHost: x\r\n\r\n" + std::string(64 << 10, 'a'));
  auto answer = read_until_closed(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer.substr(0, 200);
  EXPECT_NE(answer.find("POST /up 0"), std::string::npos) << answer.substr(0, 300);
  // The rest is a header that never ends: refused at the header cap.
  EXPECT_NE(answer.find("HTTP/1.1 431"), std::string::npos) << answer.substr(0, 300);
  ::close(fd);
}

TEST(http_body, a_compressed_body_is_refused_not_inflated) {
  body_server s;
  int fd = open_connection(s.port);
  send_all(fd, "POST /up HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\n"
               "Content-Length: 20\r\n\r\n");
  auto answer = read_until_closed(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 415", 0), 0u) << answer;
  ::close(fd);
  EXPECT_EQ(s.served(), 0u);
}

TEST(http_body, a_chunked_body_within_the_cap_arrives_dechunked) {
  body_server s;
  int fd = open_connection(s.port);
  send_all(fd, "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
               "Connection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  auto answer = read_until_closed(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  ASSERT_EQ(s.served(), 1u);
  EXPECT_EQ(s.bodies[0], "hello world");
  ::close(fd);
  EXPECT_EQ(s.server.body_bytes_held(), 0u);
}

TEST(http_body, a_chunked_body_past_the_cap_is_refused_at_the_cap) {
  body_server s;
  int fd = open_connection(s.port);
  send_all(fd, "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  std::string chunk = "200\r\n" + std::string(0x200, 'x') + "\r\n";
  for (int i = 0; i < 3; ++i)
    send_all(fd, chunk);
  auto answer = read_until_closed(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
  ::close(fd);
  EXPECT_EQ(s.served(), 0u);
}

TEST(http_body, a_multipart_form_passes_raw_with_its_content_type) {
  body_server s;
  httplib::Client client{"127.0.0.1", s.port};
  httplib::MultipartFormDataItems items = {
      {"requests", R"([{"plugin":"scalars","tag":"loss"}])", "", ""}};
  auto res = client.Post("/up/data/plugin/timeseries/timeSeries", items);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  ASSERT_EQ(s.served(), 1u);
  EXPECT_EQ(s.types[0].rfind("multipart/form-data; boundary=", 0), 0u) << s.types[0];
  EXPECT_NE(s.bodies[0].find(R"([{"plugin":"scalars","tag":"loss"}])"), std::string::npos)
      << s.bodies[0];
  EXPECT_NE(s.bodies[0].find("Content-Disposition: form-data; name=\"requests\""),
            std::string::npos)
      << s.bodies[0];
}

TEST(http_body, expect_continue_gets_100_before_the_body) {
  body_server s;
  int fd = open_connection(s.port);
  send_all(fd, "PUT /up/k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
               "Expect: 100-continue\r\nConnection: close\r\n\r\n");
  char buf[256];
  pollfd p{fd, POLLIN, 0};
  ASSERT_GT(::poll(&p, 1, 5000), 0);
  auto n = ::recv(fd, buf, sizeof(buf), 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
  send_all(fd, "hello");
  auto answer = read_until_closed(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  ::close(fd);
}

TEST(http_body, slow_bodies_never_hold_a_worker) {
  http_limits limits;
  limits.workers = 2;
  limits.header_timeout = 1500ms;
  body_server s{limits};
  // More clients than workers send a header and the first byte of a body.
  std::vector<int> slow;
  for (int i = 0; i < 10; ++i) {
    slow.push_back(open_connection(s.port));
    send_all(slow.back(),
             "PUT /up/k HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\na");
  }
  httplib::Client client{"127.0.0.1", s.port};
  client.set_read_timeout(1s);
  auto start = std::chrono::steady_clock::now();
  auto res = client.Get("/page");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  for (auto fd : slow) {
    EXPECT_EQ(read_until_closed(fd), "") << "a slow body got an answer";
    ::close(fd);
  }
  EXPECT_GE(s.server.counts().expired, 10u);
  EXPECT_EQ(s.server.body_bytes_held(), 0u);
}

TEST(http_body, pipelined_requests_with_bodies_are_all_served) {
  body_server s;
  int fd = open_connection(s.port);
  send_all(fd, "PUT /up/a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
               "PUT /up/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               "2\r\nde\r\n0\r\n\r\n"
               "GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto answer = read_until_closed(fd);
  EXPECT_NE(answer.find("PUT /up/a 3"), std::string::npos) << answer;
  EXPECT_NE(answer.find("PUT /up/b 2"), std::string::npos) << answer;
  EXPECT_NE(answer.find("GET /c 0"), std::string::npos) << answer;
  ::close(fd);
  ASSERT_EQ(s.served(), 3u);
  EXPECT_EQ(s.bodies[0], "abc");
  EXPECT_EQ(s.bodies[1], "de");
}

TEST(http_body, the_bodies_held_at_once_share_a_budget) {
  http_limits limits;
  limits.max_body_bytes_held = 1500;
  body_server s{limits};
  // One client holds 1000 bytes of an unfinished body; the next one's
  // body would pass the budget: 503.
  int first = open_connection(s.port);
  send_all(first, "PUT /up/a HTTP/1.1\r\nHost: x\r\nContent-Length: 1024\r\n\r\n" +
                      std::string(1000, 'a'));
  for (int i = 0; i < 200 && s.server.body_bytes_held() < 1000; ++i)
    ::poll(nullptr, 0, 10);
  ASSERT_EQ(s.server.body_bytes_held(), 1000u);
  int second = open_connection(s.port);
  send_all(second, "PUT /up/b HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" +
                       std::string(1000, 'b'));
  auto answer = read_until_closed(second);
  EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
  ::close(second);
  ::close(first);
}

} // namespace
} // namespace tony::http
