// The AM's Horovod rendezvous (web/horovod_rendezvous.hpp):
// the store's rules as calls, then the requests Horovod's own gloo client
// sends (horovod/common/gloo/http_store.cc over third_party HTTPRequest.hpp:
// one connection per request, "Host: <addr>", "Content-Length: <n>", no
// other header) as golden bytes over a real loopback socket.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "web/horovod_rendezvous.hpp"
#include "web/http_server.hpp"

namespace {

using tony::rendezvous::horovod_rendezvous;
using tony::rendezvous::horovod_token;
using tony::rendezvous::limits_for_world;

constexpr const char* secret = "0123456789abcdef0123456789abcdef";

std::string path(int attempt, const std::string& rest) {
  // What Horovod's client makes of ADDR "<host>:<port>/<token>" and PORT.
  return "/" + horovod_token(secret, attempt) + ":41000/" + rest;
}

TEST(horovod_rendezvous, token_is_an_hmac_of_the_attempt) {
  // hmac.new(b"0123...", b"tony-horovod/1 attempt 1", "sha256").hexdigest()[:32]
  EXPECT_EQ(horovod_token(secret, 1), "7a30234c4dac34bc5eefff78c107782d");
  EXPECT_NE(horovod_token(secret, 1), horovod_token(secret, 2));
  EXPECT_NE(horovod_token(secret, 1), horovod_token("another secret", 1));
  EXPECT_EQ(horovod_token(secret, 3).size(), 32u);
}

TEST(horovod_rendezvous, put_get_and_missing_keys_as_horovods_server) {
  horovod_rendezvous store{secret, 1, limits_for_world(3)};
  EXPECT_EQ(store.handle("GET", path(1, "global/rank_0"), "").status, 404);
  EXPECT_EQ(store.handle("PUT", path(1, "global/rank_0"), "node1").status, 200);
  auto got = store.handle("GET", path(1, "global/rank_0"), "");
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "node1");
  EXPECT_EQ(store.handle("GET", path(1, "local_node1/rank_0"), "").status, 404)
      << "scopes are apart";
  EXPECT_EQ(store.handle("PUT", path(1, "global/rank_0"), "node2").status, 200);
  EXPECT_EQ(store.handle("GET", path(1, "global/rank_0"), "").body, "node2");
}

TEST(horovod_rendezvous, delete_frees_the_ranks_key_and_empty_scopes) {
  horovod_rendezvous store{secret, 1, limits_for_world(2)};
  store.handle("PUT", path(1, "global/0"), std::string(200, 'a'));
  store.handle("PUT", path(1, "global/rank_0"), "node1");
  auto full = store.bytes();
  EXPECT_EQ(store.handle("DELETE", path(1, "global/0"), "").status, 200);
  EXPECT_EQ(store.handle("GET", path(1, "global/0"), "").status, 404);
  EXPECT_LT(store.bytes(), full);
  store.handle("DELETE", path(1, "global/rank_0"), "");
  EXPECT_EQ(store.bytes(), 0u);
  EXPECT_EQ(store.handle("DELETE", path(1, "nothing/0"), "").status, 200)
      << "Horovod's server answers 200 for what it does not hold";
}

TEST(horovod_rendezvous, a_stranger_is_refused_before_its_body) {
  horovod_rendezvous store{secret, 2, limits_for_world(2)};
  auto other = "/" + horovod_token("another job", 1) + ":41000/global/rank_0";
  for (auto p : {std::string{"/global/rank_0"}, other, std::string{"/"},
                 std::string{"/x:1/global/rank_0"}}) {
    auto [ok, refusal] = store.screen("PUT", p);
    EXPECT_FALSE(ok) << p;
    EXPECT_EQ(refusal.status, 403) << p;
    EXPECT_EQ(store.handle("PUT", p, "v").status, 403) << p;
  }
  EXPECT_EQ(store.bytes(), 0u);
  EXPECT_EQ(store.screen("POST", path(1, "global/rank_0")).second.status, 405);
  EXPECT_EQ(store.handle("GET", path(1, "global/rank_0/x"), "").status, 400);
  EXPECT_EQ(store.handle("GET", path(1, "global/a%20b"), "").status, 400);
}

TEST(horovod_rendezvous, each_attempt_starts_empty_and_older_ones_are_refused) {
  horovod_rendezvous store{secret, 3, limits_for_world(2)};
  store.handle("PUT", path(1, "global/rank_0"), "attempt-1");
  EXPECT_EQ(store.attempt(), 1);
  EXPECT_EQ(store.handle("GET", path(2, "global/rank_0"), "").status, 404)
      << "attempt 2 sees nothing of attempt 1";
  EXPECT_EQ(store.attempt(), 2);
  EXPECT_EQ(store.bytes(), 0u);
  EXPECT_EQ(store.handle("PUT", path(1, "global/rank_0"), "late").status, 410)
      << "a straggler of attempt 1";
  EXPECT_EQ(store.handle("GET", path(4, "global/rank_0"), "").status, 403)
      << "max_attempts is 3";
}

TEST(horovod_rendezvous, memory_is_bounded_by_the_world) {
  auto limits = limits_for_world(2);
  horovod_rendezvous store{secret, 1, limits};
  EXPECT_EQ(store
                .handle("PUT", path(1, "global/0"),
                        std::string(limits.max_value_bytes + 1, 'x'))
                .status,
            413);
  size_t puts = 0;
  for (; puts < 10 * limits.max_keys; ++puts)
    if (store
            .handle(
                "PUT",
                path(1, "s" + std::to_string(puts % 50) + "/k" + std::to_string(puts)),
                std::string(1000, 'v'))
            .status != 200)
      break;
  EXPECT_LE(puts, limits.max_keys);
  EXPECT_LE(store.bytes(), limits.max_bytes);
  EXPECT_EQ(store.handle("PUT", path(1, "global/more"), "v").status, 413);
  // Replacing a key costs no new key.
  EXPECT_EQ(store.handle("PUT", path(1, "s0/k0"), "small").status, 200);
}

// -- Horovod's client, byte for byte --------------------------------------------------

// Sends `request` on a fresh connection and reads until the server closes
// or the response's body arrived.
std::string round_trip(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return {};
  }
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (;;) {
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0)
      break;
    out.append(buf, static_cast<size_t>(n));
    auto end = out.find("\r\n\r\n");
    auto cl = out.find("Content-Length: ");
    if (end != std::string::npos && cl != std::string::npos && cl < end) {
      auto len = std::stoul(out.substr(cl + 16));
      if (out.size() >= end + 4 + len)
        break;
    }
  }
  ::close(fd);
  return out;
}

std::string horovod_request(const std::string& method, const std::string& p,
                            const std::string& body) {
  return method + " " + p + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST(horovod_rendezvous, horovods_client_requests_over_a_socket) {
  tony::http::http_server server;
  auto port = server.bind("127.0.0.1", 0);
  ASSERT_TRUE(port);
  auto store = std::make_shared<horovod_rendezvous>(secret, 1, limits_for_world(2));
  tony::rendezvous::serve(server, store);
  auto p = path(1, "global/rank_1");

  auto r = round_trip(*port, horovod_request("GET", p, ""));
  EXPECT_EQ(r.rfind("HTTP/1.1 404", 0), 0u) << r;

  r = round_trip(*port, horovod_request("PUT", p, "worker-host-1"));
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;

  r = round_trip(*port, horovod_request("GET", p, ""));
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Length: 13\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.substr(r.size() - 13), "worker-host-1");

  // Binary values (gloo's pair addresses) come back as they went.
  std::string bytes{"\x00\x01\xff\r\n\x02", 6};
  r = round_trip(*port, horovod_request("PUT", path(1, "global/1"), bytes));
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  r = round_trip(*port, horovod_request("GET", path(1, "global/1"), ""));
  EXPECT_EQ(r.substr(r.size() - 6), bytes);

  r = round_trip(*port, horovod_request("DELETE", path(1, "global/1"), ""));
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;

  // Without the token: 403 before the body is read, the store untouched.
  r = round_trip(*port,
                 horovod_request("PUT", "/global/rank_0", std::string(100000, 'x')));
  EXPECT_EQ(r.rfind("HTTP/1.1 403", 0), 0u) << r.substr(0, 80);
  EXPECT_EQ(store->handle("GET", path(1, "global/rank_0"), "").status, 404);
  server.stop();
}

} // namespace
