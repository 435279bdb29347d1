// The gate in front of CAF's middleman, with two real actor systems in this
// process: an actor published behind the gate answers a peer that proved
// the secret, over the very socket the handshake ran on; a wrong secret, a
// wrong interface and a crafted BASP header each get nowhere, and the header
// that makes CAF's own listener allocate what it claims costs nothing here;
// a peer asking for the spec channel gets there through the same port.

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "messages/error.hpp"
#include "runtime/gate/caf_bridge.hpp"
#include "runtime/gate/gate_session.hpp"

namespace tony::gate {
namespace {

using namespace std::chrono_literals;

using adder_actor = caf::typed_actor<caf::replies_to<int32_t>::with<int32_t>>;
using other_actor = caf::typed_actor<caf::replies_to<std::string>::with<std::string>>;

adder_actor::behavior_type adder(int32_t step) {
  return {[step](int32_t x) { return x + step; }};
}

struct net_config : caf::actor_system_config {
  net_config() {
    load<caf::io::middleman>();
    set("logger.verbosity", caf::atom("quiet"));
  }
};

long rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::atol(line.c_str() + 6);
  return -1;
}

struct fixture : ::testing::Test {
  net_config server_cfg;
  caf::actor_system server{server_cfg};
  net_config client_cfg;
  caf::actor_system client{client_cfg};
  adder_actor published = server.spawn(adder, 1);
  std::unique_ptr<published_gate> door;

  void SetUp() override {
    auto p = publish(server, published, "127.0.0.1", 0, "s3cret");
    ASSERT_TRUE(p) << describe(p.error());
    door = std::move(*p);
  }

  void TearDown() override {
    door.reset();
    caf::anon_send_exit(published, caf::exit_reason::user_shutdown);
  }

  int32_t ask(const adder_actor& hdl, int32_t x) {
    int32_t result = -1;
    caf::scoped_actor self{client};
    self->request(hdl, 5s, x)
        .receive([&](int32_t y) { result = y; }, [&](caf::error&) {});
    return result;
  }
};

TEST_F(fixture, a_peer_with_the_secret_reaches_the_published_actor) {
  auto hdl = remote_actor<adder_actor>(client, "127.0.0.1", door->port(), "s3cret", 10s);
  ASSERT_TRUE(hdl) << describe(hdl.error());
  EXPECT_EQ(ask(*hdl, 41), 42);
  EXPECT_EQ(door->counts().passed, 1u);
}

TEST_F(fixture, a_wrong_secret_is_refused_for_good) {
  auto hdl = remote_actor<adder_actor>(client, "127.0.0.1", door->port(), "guess", 10s);
  ASSERT_FALSE(hdl);
  EXPECT_TRUE(is_refusal(hdl.error())) << describe(hdl.error());
  EXPECT_TRUE(is_final(hdl.error()));
  EXPECT_EQ(door->counts().passed, 0u);
}

TEST_F(fixture, another_interface_is_a_protocol_error) {
  auto hdl = remote_actor<other_actor>(client, "127.0.0.1", door->port(), "s3cret", 10s);
  ASSERT_FALSE(hdl);
  EXPECT_EQ(hdl.error().code(), errc::protocol) << describe(hdl.error());
}

TEST_F(fixture, a_crafted_basp_header_allocates_nothing) {
  auto before = rss_kb();
  // A BASP header claiming a 512 MiB payload: CAF's own listener would
  // allocate and zero-fill that much at once.
  uint8_t header[32] = {};
  header[0] = 0x01; // direct_message
  header[4] = 0x20; // payload_len 0x20000000, big-endian
  for (int i = 0; i < 8; ++i) {
    auto fd = connect_tcp("127.0.0.1", door->port(), 5s);
    ASSERT_TRUE(fd);
    ::send(*fd, header, sizeof(header), MSG_NOSIGNAL);
    // The gate waits for the rest of a proof; give up on it here.
    ::close(*fd);
  }
  auto hdl = remote_actor<adder_actor>(client, "127.0.0.1", door->port(), "s3cret", 10s);
  ASSERT_TRUE(hdl) << describe(hdl.error());
  EXPECT_EQ(ask(*hdl, 1), 2);
  auto after = rss_kb();
  EXPECT_LT(after - before, 64 * 1024)
      << "RSS grew from " << before << " to " << after << " kB";
}

// A gate that also offers the spec channel: one port, two services.
struct spec_channel_gate : fixture {
  std::shared_ptr<spec_channel> specs = std::make_shared<spec_channel>();

  void SetUp() override {
    ASSERT_TRUE(specs->start());
    gate_options opts;
    opts.specs = specs;
    auto p = publish(server, published, "127.0.0.1", 0, "s3cret", opts);
    ASSERT_TRUE(p) << describe(p.error());
    door = std::move(*p);
  }
};

TEST_F(spec_channel_gate, a_peer_asking_for_the_spec_channel_reads_specs_there) {
  specs->publish(std::make_shared<const std::string>("the spec"));
  auto fd = connect_through_gate("127.0.0.1", door->port(), "s3cret", 10s,
                                 purpose::spec_channel);
  ASSERT_TRUE(fd) << describe(fd.error());
  auto frame = read_spec_frame(*fd, 1024);
  ASSERT_TRUE(frame) << describe(frame.error());
  EXPECT_EQ(*frame, "the spec");
  EXPECT_EQ(specs->counts().connections, 1u);
  // The same port still serves the published actor over BASP.
  auto hdl = remote_actor<adder_actor>(client, "127.0.0.1", door->port(), "s3cret", 10s);
  ASSERT_TRUE(hdl) << describe(hdl.error());
  EXPECT_EQ(ask(*hdl, 1), 2);
  EXPECT_EQ(specs->counts().connections, 1u);
  ::close(*fd);
}

TEST_F(spec_channel_gate, the_spec_channel_needs_the_secret_too) {
  auto fd = connect_through_gate("127.0.0.1", door->port(), "guess", 10s,
                                 purpose::spec_channel);
  ASSERT_FALSE(fd);
  EXPECT_TRUE(is_refusal(fd.error())) << describe(fd.error());
  EXPECT_EQ(specs->counts().connections, 0u);
}

TEST_F(fixture, a_gate_without_a_spec_channel_closes_a_peer_asking_for_it) {
  auto fd = connect_through_gate("127.0.0.1", door->port(), "s3cret", 10s,
                                 purpose::spec_channel);
  ASSERT_FALSE(fd);
  EXPECT_EQ(fd.error().code(), errc::infrastructure) << describe(fd.error());
  EXPECT_EQ(door->counts().passed, 0u);
}

} // namespace
} // namespace tony::gate
