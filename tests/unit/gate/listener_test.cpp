// The gate's server side on real sockets, without CAF: the session reads the
// proof in as many pieces as it comes and never a byte more, the listener
// passes only a connection that proved the secret, closes the silent ones
// at their deadline and the oldest waiting one at its cap.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <random>
#include <vector>

#include "messages/error.hpp"
#include "runtime/gate/gate_session.hpp"
#include "runtime/gate/listener.hpp"

namespace tony::gate {
namespace {

using namespace std::chrono_literals;

const auto secret = std::make_shared<const std::string>("the-job-secret");

// Every connection the listener passed, in order.
struct passed_fds {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<int> fds;

  listener::pass_handler handler() {
    return [this](int fd, std::unique_ptr<session>) {
      std::lock_guard<std::mutex> guard{mutex};
      fds.push_back(fd);
      cv.notify_all();
    };
  }

  bool wait_for(size_t n) {
    std::unique_lock<std::mutex> lock{mutex};
    return cv.wait_for(lock, 10s, [&] { return fds.size() >= n; });
  }

  ~passed_fds() {
    for (auto fd : fds)
      ::close(fd);
  }
};

std::unique_ptr<listener> gate_listener(passed_fds& out, size_t max_pending = 64,
                                        std::chrono::milliseconds deadline = 10s,
                                        std::chrono::milliseconds evict_after = 0ms) {
  listener_options opts;
  opts.name = "test gate";
  opts.max_pending = max_pending;
  opts.deadline = deadline;
  opts.evict_after = evict_after;
  auto l = std::make_unique<listener>(
      opts, [] { return make_gate_session(secret); }, out.handler());
  auto port = l->bind("127.0.0.1", 0);
  EXPECT_TRUE(port) << describe(port.error());
  l->start();
  return l;
}

int connect_to(uint16_t port) {
  auto fd = connect_tcp("127.0.0.1", port, 5s);
  EXPECT_TRUE(fd) << describe(fd.error());
  return fd ? *fd : -1;
}

// Waits up to 10 s for the peer to close `fd` (EOF or reset), reading past
// whatever it sent first (the hello).
bool closed_by_peer(int fd) {
  char buf[256];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0)
      return false;
    auto n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      return true;
  }
}

// Waits for the hello: the listener has admitted the connection.
bool greeted(int fd) {
  uint8_t hello[hello_size];
  size_t got = 0;
  while (got < sizeof(hello)) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0)
      return false;
    auto n = ::recv(fd, hello + got, sizeof(hello) - got, 0);
    if (n <= 0)
      return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

uint64_t wait_count(const listener& l, uint64_t listener_counts::*field, uint64_t n) {
  for (int i = 0; i < 1000 && l.counts().*field < n; ++i)
    ::poll(nullptr, 0, 10);
  return l.counts().*field;
}

TEST(gate_session, reads_the_proof_a_byte_at_a_time) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  auto s = make_gate_session(secret);
  auto hello = s->greeting();
  ASSERT_EQ(hello.size(), hello_size);
  hello_bytes hb{};
  std::copy(hello.begin(), hello.end(), hb.begin());
  nonce server{};
  ASSERT_EQ(decode_hello(hb, server), hello_check::ok);
  auto client = *random_nonce();
  auto proof = encode_proof(*secret, server, client);
  std::string reply;
  for (size_t i = 0; i < proof.size(); ++i) {
    ASSERT_EQ(::send(sv[1], proof.data() + i, 1, 0), 1);
    auto step = s->on_readable(sv[0], reply);
    if (i + 1 < proof.size())
      ASSERT_EQ(step, session::step::wait) << "after byte " << i;
    else
      ASSERT_EQ(step, session::step::pass);
  }
  ASSERT_EQ(reply.size(), verdict_size);
  verdict_bytes vb{};
  std::copy(reply.begin(), reply.end(), vb.begin());
  EXPECT_EQ(check_verdict(*secret, server, client, vb), verdict_check::accepted);
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(gate_session, never_reads_more_than_a_proof) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  auto s = make_gate_session(secret);
  s->greeting();
  // A BASP header claiming 512 MiB, then as much garbage as the socket takes.
  std::vector<uint8_t> junk(1 << 20, 0x5A);
  junk[0] = 0x01;
  junk[4] = 0x20;
  size_t sent = 0;
  while (sent < junk.size()) {
    auto n = ::send(sv[1], junk.data() + sent, junk.size() - sent, MSG_DONTWAIT);
    if (n <= 0)
      break;
    sent += static_cast<size_t>(n);
  }
  ASSERT_GT(sent, proof_size);
  std::string reply;
  auto step = session::step::wait;
  for (int i = 0; i < 100 && step == session::step::wait; ++i)
    step = s->on_readable(sv[0], reply);
  EXPECT_EQ(step, session::step::close);
  EXPECT_TRUE(reply.empty()) << "a stranger gets no verdict";
  int left = 0;
  ASSERT_EQ(::ioctl(sv[0], FIONREAD, &left), 0);
  EXPECT_EQ(sent - static_cast<size_t>(left), proof_size);
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(gate_session, a_wrong_secret_gets_deny_and_close) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  auto s = make_gate_session(secret);
  auto hello = s->greeting();
  hello_bytes hb{};
  std::copy(hello.begin(), hello.end(), hb.begin());
  nonce server{};
  decode_hello(hb, server);
  auto proof = encode_proof("wrong", server, *random_nonce());
  ASSERT_EQ(::send(sv[1], proof.data(), proof.size(), 0),
            static_cast<ssize_t>(proof.size()));
  std::string reply;
  EXPECT_EQ(s->on_readable(sv[0], reply), session::step::close);
  EXPECT_EQ(reply.substr(0, 4), "DENY");
  ::close(sv[0]);
  ::close(sv[1]);
}

// A session's answer to a right proof asking for `what`.
session::step answer_to(session& s, purpose what, std::string& reply) {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  auto hello = s.greeting();
  hello_bytes hb{};
  std::copy(hello.begin(), hello.end(), hb.begin());
  nonce server{};
  decode_hello(hb, server);
  auto proof = encode_proof(*secret, server, *random_nonce(), what);
  EXPECT_EQ(::send(sv[1], proof.data(), proof.size(), 0),
            static_cast<ssize_t>(proof.size()));
  auto step = s.on_readable(sv[0], reply);
  ::close(sv[0]);
  ::close(sv[1]);
  return step;
}

TEST(gate_session, the_spec_channel_passes_only_where_it_is_offered) {
  std::string reply;
  auto offered = make_gate_session(secret, true);
  EXPECT_EQ(answer_to(*offered, purpose::spec_channel, reply), session::step::pass);
  EXPECT_EQ(reply.substr(0, 4), "OKAY");
  EXPECT_EQ(purpose_of(*offered), purpose::spec_channel);
  // Where it is not (a gate without a channel): closed, no verdict.
  reply.clear();
  auto plain = make_gate_session(secret);
  EXPECT_EQ(answer_to(*plain, purpose::spec_channel, reply), session::step::close);
  EXPECT_TRUE(reply.empty());
  // BASP passes either way.
  auto basp = make_gate_session(secret, true);
  EXPECT_EQ(answer_to(*basp, purpose::basp, reply), session::step::pass);
  EXPECT_EQ(purpose_of(*basp), purpose::basp);
}

TEST(gate_listener, passes_a_proven_connection_with_nothing_read_beyond_the_proof) {
  passed_fds passed;
  auto l = gate_listener(passed);
  int fd = connect_to(l->port());
  ASSERT_TRUE(client_handshake(fd, *secret, "test", 5s));
  ASSERT_EQ(::send(fd, "after", 5, 0), 5);
  ASSERT_TRUE(passed.wait_for(1));
  char buf[8] = {};
  int server_fd = passed.fds.front();
  ::fcntl(server_fd, F_SETFL, ::fcntl(server_fd, F_GETFL) & ~O_NONBLOCK);
  size_t got = 0;
  while (got < 5) {
    auto n = ::recv(server_fd, buf + got, 5 - got, 0);
    ASSERT_GT(n, 0);
    got += static_cast<size_t>(n);
  }
  EXPECT_EQ(std::string(buf, 5), "after");
  EXPECT_EQ(wait_count(*l, &listener_counts::passed, 1), 1u);
  ::close(fd);
}

TEST(gate_listener, refuses_a_wrong_secret_with_a_clear_error) {
  passed_fds passed;
  auto l = gate_listener(passed);
  int fd = connect_to(l->port());
  auto ok = client_handshake(fd, "another job's secret", "127.0.0.1:x", 5s);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), errc::bad_secret);
  EXPECT_NE(describe(ok.error()).find("refused the job secret"), std::string::npos);
  EXPECT_TRUE(closed_by_peer(fd));
  EXPECT_EQ(l->counts().passed, 0u);
  ::close(fd);
}

TEST(gate_listener, a_silent_connection_is_closed_at_its_deadline) {
  passed_fds passed;
  auto l = gate_listener(passed, 64, 200ms);
  int fd = connect_to(l->port());
  ASSERT_TRUE(greeted(fd));
  EXPECT_TRUE(closed_by_peer(fd));
  EXPECT_EQ(wait_count(*l, &listener_counts::expired, 1), 1u);
  EXPECT_EQ(wait_count(*l, &listener_counts::accepted, 1), 1u);
  EXPECT_EQ(l->counts().pending, 0u);
  ::close(fd);
}

TEST(gate_listener, the_cap_drops_the_oldest_waiting_never_a_passed_one) {
  passed_fds passed;
  auto l = gate_listener(passed, 4);
  // One connection passes first: the cap must never touch it.
  int proven = connect_to(l->port());
  ASSERT_TRUE(client_handshake(proven, *secret, "test", 5s));
  ASSERT_TRUE(passed.wait_for(1));
  std::vector<int> silent;
  for (int i = 0; i < 6; ++i) {
    silent.push_back(connect_to(l->port()));
    ASSERT_TRUE(greeted(silent.back())) << "connection " << i;
  }
  EXPECT_TRUE(closed_by_peer(silent[0]));
  EXPECT_TRUE(closed_by_peer(silent[1]));
  EXPECT_EQ(wait_count(*l, &listener_counts::evicted, 2), 2u);
  EXPECT_EQ(wait_count(*l, &listener_counts::pending, 4), 4u);
  // The proven connection still carries bytes both ways.
  ASSERT_EQ(::send(proven, "x", 1, 0), 1);
  char c = 0;
  int server_fd = passed.fds.front();
  pollfd p{server_fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  ASSERT_EQ(::recv(server_fd, &c, 1, 0), 1);
  EXPECT_EQ(c, 'x');
  // And a newcomer that proves the secret still gets in.
  int late = connect_to(l->port());
  EXPECT_TRUE(client_handshake(late, *secret, "test", 5s));
  EXPECT_TRUE(passed.wait_for(2));
  for (auto fd : silent)
    ::close(fd);
  ::close(proven);
  ::close(late);
}

// At the open-files edge the cap leaves few waiting slots while thousands
// of executors connect at once: with evict_after they take turns from the
// kernel's backlog instead of closing each other (without it, the eight
// oldest here would be closed before they could prove anything).
TEST(gate_listener, at_the_cap_a_burst_of_honest_clients_takes_turns) {
  passed_fds passed;
  auto l = gate_listener(passed, 4, 10s, 5s);
  std::vector<int> burst;
  for (int i = 0; i < 12; ++i)
    burst.push_back(connect_to(l->port())); // all in before anyone proves
  for (size_t i = 0; i < burst.size(); ++i)
    EXPECT_TRUE(client_handshake(burst[i], *secret, "test", 5s)) << "client " << i;
  EXPECT_TRUE(passed.wait_for(12));
  auto c = l->counts();
  EXPECT_EQ(c.evicted, 0u);
  EXPECT_EQ(c.passed, 12u);
  for (auto fd : burst)
    ::close(fd);
}

// ... while silent ones still give way, once they have waited evict_after.
TEST(gate_listener, at_the_cap_a_silent_connection_gives_way_after_evict_after) {
  passed_fds passed;
  auto l = gate_listener(passed, 2, 10s, 300ms);
  int a = connect_to(l->port());
  int b = connect_to(l->port());
  ASSERT_TRUE(greeted(a));
  ASSERT_TRUE(greeted(b));
  auto t0 = std::chrono::steady_clock::now();
  int honest = connect_to(l->port());
  EXPECT_TRUE(client_handshake(honest, *secret, "test", 5s));
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, 200ms) << "taken in before the oldest had waited evict_after";
  EXPECT_LT(waited, 5s);
  EXPECT_TRUE(closed_by_peer(a));
  EXPECT_EQ(wait_count(*l, &listener_counts::evicted, 1), 1u);
  EXPECT_TRUE(passed.wait_for(1));
  ::close(a);
  ::close(b);
  ::close(honest);
}

TEST(gate_listener, random_bytes_in_small_connections_get_nowhere) {
  passed_fds passed;
  auto l = gate_listener(passed);
  std::mt19937 rng{42};
  // 1 MiB in 256 connections of 4 KiB.
  std::vector<char> junk(4096);
  for (int i = 0; i < 256; ++i) {
    int fd = connect_to(l->port());
    for (auto& b : junk)
      b = static_cast<char>(rng());
    ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    EXPECT_TRUE(closed_by_peer(fd)) << "connection " << i;
    ::close(fd);
  }
  EXPECT_EQ(l->counts().passed, 0u);
  EXPECT_EQ(wait_count(*l, &listener_counts::closed_by_session, 256), 256u);
}

TEST(gate_client, a_peer_that_is_no_gate_is_named) {
  // A server that speaks first but not the gate's hello: CAF's own BASP
  // listener does exactly that.
  listener_options opts;
  struct chatty : session {
    std::string greeting() override { return std::string(hello_size, '\0'); }
    step on_readable(int, std::string&) override { return step::wait; }
  };
  passed_fds passed;
  listener l{opts, [] { return std::make_unique<chatty>(); }, passed.handler()};
  ASSERT_TRUE(l.bind("127.0.0.1", 0));
  l.start();
  auto fd = connect_through_gate("127.0.0.1", l.port(), *secret, 5s);
  ASSERT_FALSE(fd);
  EXPECT_EQ(fd.error().code(), errc::protocol);
  EXPECT_NE(describe(fd.error()).find("not a tony AM"), std::string::npos)
      << describe(fd.error());
}

TEST(gate_client, nothing_listening_is_an_infrastructure_error) {
  passed_fds passed;
  uint16_t port = 0;
  {
    auto l = gate_listener(passed);
    port = l->port();
  }
  auto fd = connect_through_gate("127.0.0.1", port, *secret, 2s);
  ASSERT_FALSE(fd);
  EXPECT_EQ(fd.error().code(), errc::infrastructure);
}

} // namespace
} // namespace tony::gate
