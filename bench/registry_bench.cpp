// Registry scale: N executors register with one AM registry over real
// loopback TCP connections and receive the cluster spec.
//
//   tony-bench-registry --executors N [--clients P] [--variant V] [--json]
//
// The AM side is this process: an actor system with the middleman, the real
// registry actor (actors/registry.hpp) published on 127.0.0.1, and a stand-in
// for the lifecycle monitor that sets the expectations, monitors every
// executor handle (as the real one does) and notes the barrier.
//
// The executor side is P forked client processes. Each holds N/P TCP
// connections, proves the job secret to the AM's gate on each
// (runtime/gate; --no-gate publishes with CAF's own listener instead, as
// tony-am did before the gate), and speaks CAF's BASP on each as a node of
// its own: server handshake in, client handshake out, one `register` request carrying an
// executor_hello and an executor handle, then it waits for the answer and the
// cluster spec. A real tony-executor is a whole actor system per process (three
// threads or more); 10,000 of those do not fit in this machine's pid space,
// and one actor system holding many executors would share one connection (CAF
// connects once per node). So the clients build every payload with CAF's own
// serializer (the bytes a real executor sends, with its node id swapped for a
// per-connection one) and only count what comes back; one connection per
// client process deserializes the spec it receives to check it.
//
//   connect ──▶ all handshakes done ──go──▶ register ×N ──▶ barrier ──▶ spec ×N
//   t_start      t_connected               t_go           t_barrier   t_delivered
//
// Variants (what the AM sends at the barrier):
//   tony      tony-am's registry door (am/registry_door.hpp): the real
//             registry with the spec channel behind the same gate; the
//             executors say they read it, the ack tells them to open it,
//             each opens a second connection through the gate after its ack
//             (asking for the spec channel) and reads the spec there
//   basp      the real registry without a spec channel (tony-am's fallback,
//             and tony before the channel): one shared message over BASP
//   shared    prototype: one message built once, the encoded spec
//             (equal to basp now; kept to compare)
//   compact   prototype: the spec pre-encoded once as one string
//             (host table + ports), sent as the same shared message
//   slim      prototype: only what a PyTorch/Horovod executor needs
//             (task 0's address and the world size)
//   paced     prototype: the spec as a request over BASP, W at a time
// The prototypes answer registrations exactly like the registry does; they
// exist to measure the fixes proposed for actors/registry.cpp.

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/tcp.h> // tcp_info with byte counters (glibc's lacks them)
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <fstream>
#include <future>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/io/all.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/io/basp/message_type.hpp>
#include <caf/scoped_execution_unit.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "actors/actor_types.hpp"
#include "actors/executor.hpp"
#include "actors/lifecycle_monitor.hpp"
#include "actors/registry.hpp"
#include "am/registry_door.hpp"
#include "messages/atoms.hpp"
#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/gate/caf_bridge.hpp"
#include "runtime/gate/gate_session.hpp"
#include "runtime/gate/listener.hpp"
#include "runtime/gate/spec_channel.hpp"

namespace {

using namespace tony;
using caf::io::basp::header;
using caf::io::basp::message_type;

constexpr const char* secret = "bench-secret-0123456789abcdef";

int64_t now_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

struct options {
  int executors = 100;
  int clients = 0; // 0: chosen from executors
  std::string variant = "tony";
  bool json = false;
  bool gate = true; // the registry behind the gate, as tony-am publishes it
  int window = 64;  // `paced`: specs in progress at once
};

struct bench_config : caf::actor_system_config {
  explicit bench_config(bool with_middleman) {
    if (with_middleman)
      load<caf::io::middleman>();
    tony::add_all_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
  }
};

std::string task_host() {
  return "127.0.0.1";
}

// -- reading and writing whole buffers ----------------------------------------

bool write_all(int fd, const void* data, size_t n) {
  auto p = static_cast<const char*>(data);
  while (n > 0) {
    auto k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool read_all(int fd, void* data, size_t n) {
  auto p = static_cast<char*>(data);
  while (n > 0) {
    auto k = ::read(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// -- the client processes -----------------------------------------------------

/// What a client process reports once every spec arrived.
struct client_report {
  int64_t connected_ns = 0;  // last handshake done
  int64_t last_spec_ns = 0;  // last spec fully received
  int64_t first_spec_ns = 0; // first spec fully received
  int64_t bytes_in = 0;      // bytes read after go
  int64_t bytes_out = 0;     // bytes written after go
  int64_t spec_bytes = 0;    // BASP frame size of one spec (header + payload)
  int32_t specs = 0;
  int32_t failures = 0;
  int32_t checked_entries = -1; // entries in the spec one connection decoded
  int32_t retries = 0;          // connections the gate closed, made again
};

// tony-executor makes a connection the gate closed again, 50 ms later and
// doubling to 1 s, for 30 s (executor_host.cpp, spec_channel.cpp): the AM's
// gate closes the oldest waiting connection when more wait than its cap,
// which follows the open-file limit (am/registry_door.cpp). The clients do
// the same, so a run near the limit measures what executors would see.
constexpr std::chrono::milliseconds first_backoff{50};
constexpr std::chrono::milliseconds most_backoff{1000};
constexpr std::chrono::seconds retry_for{30};

// The executor handle every fake executor sends. Its behaviour never runs:
// the AM's messages to it arrive on the fake connections, not here.
// (It takes an argument: CAF 0.17 spawns a function of none through a null
// argument tuple, which UBSan rejects.)
executor_actor::behavior_type dummy_executor(int) {
  return {
      [](spec_atom, const cluster_spec&) {},
      [](stop_atom, const std::string&) {},
      [](tokens_atom, const job_tokens&) {},
  };
}

std::vector<char> serialize_node(caf::execution_unit* ctx, caf::node_id nid) {
  std::vector<char> buf;
  caf::binary_serializer sink{ctx, buf};
  sink(nid);
  return buf;
}

void replace_bytes(std::vector<char>& buf, const std::vector<char>& from,
                   const std::vector<char>& to) {
  auto i = std::search(buf.begin(), buf.end(), from.begin(), from.end());
  while (i != buf.end()) {
    std::copy(to.begin(), to.end(), i);
    i = std::search(i + static_cast<ptrdiff_t>(to.size()), buf.end(), from.begin(),
                    from.end());
  }
}

std::vector<char> frame(caf::execution_unit* ctx, header hdr,
                        const std::vector<char>& payload) {
  hdr.payload_len = static_cast<uint32_t>(payload.size());
  std::vector<char> out;
  caf::binary_serializer sink{ctx, out};
  sink(hdr);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

struct connection {
  int fd = -1;
  int index = 0;         // task index
  caf::node_id node;     // this connection's node
  std::vector<char> in;  // unparsed input
  std::vector<char> out; // pending output
  bool handshaken = false;
  bool acked = false;
  bool spec = false;
  bool decode = false; // decode the spec (one per client)
  caf::actor_id registry = 0;
  // The `tony` variant: a second socket, opened after the ack, on which the
  // AM pushes the spec (an 8-byte length, then the frame), after the gate's
  // handshake (run without blocking: phase, its bytes, its nonces).
  int channel_fd = -1;
  int channel_phase = 0; // 0 none, 1 connecting, 2 hello, 3 verdict, 4 frames
  std::string channel_hs;
  gate::nonce channel_server{};
  gate::nonce channel_client{};
  uint64_t channel_len = 0;      // length of the spec being received
  uint64_t channel_got = 0;      // bytes of it received (length prefix included)
  std::string channel_spec;      // kept only where the spec is decoded
  std::string channel_done;      // the last complete one
  uint64_t channel_done_len = 0; // its length
  // The channel's retries: the backoff, when its first try began.
  std::chrono::milliseconds channel_backoff = first_backoff;
  std::chrono::steady_clock::time_point channel_since{};
};

// Marks an epoll id as a connection's channel socket.
constexpr uint32_t channel_bit = 0x40000000;

// Each client process connects from a loopback address of its own
// (127.1.0.1 + its number), as executors connect from their own hosts: from
// one address, 20,000 connections to one port make the kernel search the
// ephemeral ports of that address at every connect, which is the bench's
// cost, not the AM's (bench/notes.md). 0: the default source.
in_addr_t client_source = 0;

void bind_source(int fd) {
  if (client_source == 0)
    return;
  int one = 1;
  ::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
  sockaddr_in src{};
  src.sin_family = AF_INET;
  src.sin_addr.s_addr = client_source;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0)
    std::fprintf(stderr, "client: bind to its source address: %s\n",
                 std::strerror(errno));
}

// Starts opening connection `c`'s spec channel (the `tony` variant, after
// its ack said so): a non-blocking connect, watched for writability; the
// handshake follows in channel_input.
bool open_channel(connection& c, uint16_t port, int ep, int i) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (c.channel_since == std::chrono::steady_clock::time_point{})
    c.channel_since = std::chrono::steady_clock::now();
  c.channel_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  bind_source(c.channel_fd);
  if (::connect(c.channel_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 &&
      errno != EINPROGRESS) {
    std::fprintf(stderr, "client: connect to the spec channel: %s\n",
                 std::strerror(errno));
    return false;
  }
  c.channel_phase = 1;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT;
  ev.data.u32 = static_cast<uint32_t>(i) | channel_bit;
  ::epoll_ctl(ep, EPOLL_CTL_ADD, c.channel_fd, &ev);
  return true;
}

// The channel's socket is writable: connected (or failed).
bool channel_connected(connection& c, int ep, int i) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(c.channel_fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    std::fprintf(stderr, "client: connect to the spec channel: %s\n", std::strerror(err));
    return false;
  }
  c.channel_phase = 2;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = static_cast<uint32_t>(i) | channel_bit;
  ::epoll_ctl(ep, EPOLL_CTL_MOD, c.channel_fd, &ev);
  return true;
}

// Takes what the handshake needs of `n` bytes (hello: send the proof;
// verdict: check it); the rest are spec frames. -1: the handshake failed.
ptrdiff_t channel_handshake(connection& c, const char* data, size_t n) {
  size_t used = 0;
  while (used < n && (c.channel_phase == 2 || c.channel_phase == 3)) {
    auto want = c.channel_phase == 2 ? gate::hello_size : gate::verdict_size;
    auto k = std::min(n - used, want - c.channel_hs.size());
    c.channel_hs.append(data + used, k);
    used += k;
    if (c.channel_hs.size() < want)
      break;
    if (c.channel_phase == 2) {
      gate::hello_bytes hello{};
      std::copy(c.channel_hs.begin(), c.channel_hs.end(), hello.begin());
      auto client = gate::random_nonce();
      if (gate::decode_hello(hello, c.channel_server) != gate::hello_check::ok || !client)
        return -1;
      c.channel_client = *client;
      auto proof = gate::encode_proof(secret, c.channel_server, c.channel_client,
                                      gate::purpose::spec_channel);
      if (::send(c.channel_fd, proof.data(), proof.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(proof.size()))
        return -1;
      c.channel_phase = 3;
    } else {
      gate::verdict_bytes verdict{};
      std::copy(c.channel_hs.begin(), c.channel_hs.end(), verdict.begin());
      if (gate::check_verdict(secret, c.channel_server, c.channel_client, verdict) !=
          gate::verdict_check::accepted)
        return -1;
      c.channel_phase = 4;
    }
    c.channel_hs.clear();
  }
  return static_cast<ptrdiff_t>(used);
}

// Consumes `n` bytes of connection `c`'s spec channel; true when they
// completed a spec (then in c.channel_done if c.decode).
bool channel_bytes(connection& c, const char* data, size_t n) {
  bool complete = false;
  while (n > 0) {
    if (c.channel_got < 8) {
      auto k = std::min<size_t>(n, 8 - c.channel_got);
      for (size_t j = 0; j < k; ++j)
        c.channel_len |= uint64_t{static_cast<uint8_t>(data[j])}
                         << (8 * (c.channel_got + j));
      c.channel_got += k;
      data += k;
      n -= k;
      continue;
    }
    auto k = std::min<uint64_t>(n, 8 + c.channel_len - c.channel_got);
    if (c.decode)
      c.channel_spec.append(data, k);
    c.channel_got += k;
    data += k;
    n -= k;
    if (c.channel_got == 8 + c.channel_len) {
      complete = true;
      c.channel_done_len = c.channel_len;
      c.channel_done = std::move(c.channel_spec);
      c.channel_spec.clear();
      c.channel_len = 0;
      c.channel_got = 0;
    }
  }
  return complete;
}

// Runs in a forked child: connects `count` fake executors starting at task
// `first`, then follows the parent's commands on `ctl` (port, go, quit) and
// reports on `report`.
int run_client(int ctl, int report, int first, int count, bool gated,
               bool reads_channel) {
  uint16_t port = 0;
  if (!read_all(ctl, &port, sizeof(port)))
    return 2;
  // With the middleman, so the system has a node id to swap out.
  bench_config cfg{true};
  caf::actor_system sys{cfg};
  caf::scoped_execution_unit ctx{&sys};
  auto dummy = sys.spawn(dummy_executor, 0);
  auto own_node = serialize_node(&ctx, sys.node());
  if (own_node.size() != serialize_node(&ctx, caf::make_node_id(1, {{1}})).size()) {
    std::fprintf(stderr, "client: node ids of different sizes; cannot swap them\n");
    return 2;
  }
  std::mt19937_64 rng{static_cast<uint64_t>(::getpid()) * 7919 + first};
  client_report rep;

  int ep = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<connection> conns(static_cast<size_t>(count));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < count; ++i) {
    auto& c = conns[static_cast<size_t>(i)];
    c.index = first + i;
    caf::node_id::default_data::host_id_type host;
    for (auto& b : host)
      b = static_cast<uint8_t>(rng());
    host[0] |= 1; // never all zero
    c.node = caf::make_node_id(static_cast<uint32_t>(100000 + c.index), host);
    c.decode = i == 0;
    auto backoff = first_backoff;
    auto give_up = std::chrono::steady_clock::now() + retry_for;
    for (;;) {
      c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      int one = 1;
      ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      bind_source(c.fd);
      if (::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        std::fprintf(stderr, "client: connect: %s\n", std::strerror(errno));
        std::_Exit(3);
      }
      if (!gated)
        break;
      auto ok =
          gate::client_handshake(c.fd, secret, "the bench AM", std::chrono::seconds(30));
      if (ok)
        break;
      if (gate::is_final(ok.error()) || std::chrono::steady_clock::now() >= give_up) {
        std::fprintf(stderr, "client: %s\n", describe(ok.error()).c_str());
        std::_Exit(3);
      }
      ::close(c.fd);
      ++rep.retries;
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, most_backoff);
    }
    ::fcntl(c.fd, F_SETFL, ::fcntl(c.fd, F_GETFL) | O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    ::epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
  }
  {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = UINT32_MAX;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, ctl, &ev);
  }

  bool counting = false;
  int handshakes = 0;
  int specs = 0;
  bool reported_ready = false;
  bool reported_done = false;

  auto flush = [&](connection& c) {
    while (!c.out.empty()) {
      auto k = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (k < 0) {
        if (errno == EAGAIN || errno == EINTR) {
          epoll_event ev{};
          ev.events = EPOLLIN | EPOLLOUT;
          ev.data.u32 = static_cast<uint32_t>(&c - conns.data());
          ::epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
          return;
        }
        ++rep.failures;
        c.out.clear();
        return;
      }
      if (counting)
        rep.bytes_out += k;
      c.out.erase(c.out.begin(), c.out.begin() + k);
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(&c - conns.data());
    ::epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
  };

  auto send_register = [&](connection& c) {
    executor_hello hello;
    hello.task = {"worker", c.index};
    hello.attempt = 0;
    char cid[64];
    std::snprintf(cid, sizeof(cid), "container_1700000000000_0001_01_%06d", c.index + 2);
    hello.container_id = cid;
    hello.host = task_host();
    hello.port = 20000 + c.index % 40000;
    hello.secret = secret;
    hello.pid = 100000 + c.index;
    hello.reads_spec_channel = reads_channel;
    auto msg = caf::make_message(register_atom_v, std::move(hello), dummy);
    std::vector<char> payload;
    {
      caf::binary_serializer sink{&ctx, payload};
      std::vector<caf::strong_actor_ptr> stack;
      sink(stack, msg);
    }
    replace_bytes(payload, own_node, serialize_node(&ctx, c.node));
    header hdr{message_type::direct_message,
               0,
               0,
               caf::make_message_id(1).integer_value(),
               dummy.id(),
               c.registry};
    auto bytes = frame(&ctx, hdr, payload);
    c.out.insert(c.out.end(), bytes.begin(), bytes.end());
    flush(c);
  };

  auto note_spec = [&](connection& c, int64_t frame_bytes) {
    c.spec = true;
    ++specs;
    auto t = now_ns();
    rep.last_spec_ns = std::max(rep.last_spec_ns, t);
    if (rep.first_spec_ns == 0)
      rep.first_spec_ns = t;
    rep.spec_bytes = frame_bytes;
  };

  // What an executor answers a spec sent as a request: `true`.
  std::vector<char> answer_payload;
  {
    caf::binary_serializer sink{&ctx, answer_payload};
    std::vector<caf::strong_actor_ptr> stack;
    auto msg = caf::make_message(true);
    sink(stack, msg);
  }
  auto answer = [&](connection& c, const header& request) {
    header hdr{message_type::direct_message,
               0,
               0,
               caf::message_id{request.operation_data}.response_id().integer_value(),
               request.dest_actor,
               request.source_actor};
    auto bytes = frame(&ctx, hdr, answer_payload);
    c.out.insert(c.out.end(), bytes.begin(), bytes.end());
    flush(c);
  };

  // The `tony` variant: the spec arrives on the connection's second socket,
  // after the gate's handshake there.
  auto on_channel = [&](connection& c, const char* data, size_t n) {
    auto used = channel_handshake(c, data, n);
    if (used < 0) {
      std::fprintf(stderr, "client: the spec channel's handshake failed\n");
      ++rep.failures;
      return;
    }
    data += used;
    n -= static_cast<size_t>(used);
    if (n == 0 || !channel_bytes(c, data, n) || c.spec)
      return;
    note_spec(c, static_cast<int64_t>(8 + c.channel_done_len));
    if (c.decode) {
      int entries = 0;
      auto spec = from_channel_frame(c.channel_done);
      if (auto cluster = spec ? decode_cluster(spec->encoded) : std::nullopt)
        for (auto& [type, addrs] : *cluster)
          entries += static_cast<int>(addrs.size());
      else
        ++rep.failures;
      rep.checked_entries = entries;
    }
  };

  auto on_frame = [&](connection& c, const header& hdr, const char* payload, size_t len) {
    if (std::getenv("TONY_BENCH_DEBUG"))
      std::fprintf(stderr, "client: task %d got %s, %zu bytes, data %llx, to %llu\n",
                   c.index, caf::io::basp::to_string(hdr.operation).c_str(), len,
                   static_cast<unsigned long long>(hdr.operation_data),
                   static_cast<unsigned long long>(hdr.dest_actor));
    switch (hdr.operation) {
    case message_type::server_handshake: {
      caf::binary_deserializer src{&ctx, payload, len};
      caf::node_id server;
      std::vector<std::string> app_ids;
      caf::actor_id aid = 0;
      std::set<std::string> ifs;
      if (src(server, app_ids, aid, ifs)) {
        ++rep.failures;
        return;
      }
      c.registry = aid;
      std::vector<char> hs;
      {
        caf::binary_serializer sink{&ctx, hs};
        sink(c.node);
      }
      auto bytes =
          frame(&ctx,
                header{message_type::client_handshake, header::select_connection_flag, 0,
                       0, caf::invalid_actor_id, caf::invalid_actor_id},
                hs);
      c.out.insert(c.out.end(), bytes.begin(), bytes.end());
      flush(c);
      c.handshaken = true;
      ++handshakes;
      rep.connected_ns = now_ns();
      break;
    }
    case message_type::direct_message: {
      caf::message_id mid{hdr.operation_data};
      if (mid.is_response()) {
        c.acked = true;
        if (!reads_channel)
          break;
        // The ack: open the spec channel where it says so, as tony-executor does.
        caf::binary_deserializer src{&ctx, payload, len};
        std::vector<caf::strong_actor_ptr> stack;
        caf::message msg;
        if (src(stack, msg) || !msg.match_elements<registration_ack>()) {
          ++rep.failures;
          break;
        }
        if (msg.get_as<registration_ack>(0).spec_channel &&
            !open_channel(c, port, ep, static_cast<int>(&c - conns.data())))
          ++rep.failures;
        break;
      }
      if (mid.is_request()) // the `paced` variant: the AM waits for this answer
        answer(c, hdr);
      if (c.spec || !c.acked)
        break; // a spec before the ack would be a registry bug; not counted
      note_spec(c, static_cast<int64_t>(caf::io::basp::header_size + len));
      if (c.decode) {
        caf::binary_deserializer src{&ctx, payload, len};
        std::vector<caf::strong_actor_ptr> stack;
        caf::message msg;
        if (src(stack, msg)) {
          ++rep.failures;
        } else if (msg.match_elements<spec_atom, cluster_spec>()) {
          int n = 0;
          if (auto cluster = decode_cluster(msg.get_as<cluster_spec>(1).encoded))
            for (auto& [type, addrs] : *cluster)
              n += static_cast<int>(addrs.size());
          else
            ++rep.failures;
          rep.checked_entries = n;
        } else if (msg.match_elements<spec_atom, std::string>()) {
          rep.checked_entries =
              static_cast<int>(std::count(msg.get_as<std::string>(1).begin(),
                                          msg.get_as<std::string>(1).end(), ',')) +
              1;
        } else if (msg.match_elements<spec_atom, std::string, int32_t>()) {
          rep.checked_entries = msg.get_as<int32_t>(2);
        }
      }
      break;
    }
    default:
      break; // monitor messages for the AM's proxies, heartbeats
    }
  };

  // Channels the gate closed before their handshake ended, to open again:
  // (when, connection index).
  std::multimap<std::chrono::steady_clock::time_point, uint32_t> reopen;
  auto channel_closed = [&](connection& c, uint32_t index) {
    ::epoll_ctl(ep, EPOLL_CTL_DEL, c.channel_fd, nullptr);
    ::close(c.channel_fd);
    c.channel_fd = -1;
    auto now = std::chrono::steady_clock::now();
    if (c.channel_phase == 4 || now - c.channel_since >= retry_for) {
      if (!c.spec)
        ++rep.failures;
      return;
    }
    c.channel_phase = 0;
    c.channel_hs.clear();
    ++rep.retries;
    reopen.emplace(now + c.channel_backoff, index);
    c.channel_backoff = std::min(c.channel_backoff * 2, most_backoff);
  };

  std::vector<epoll_event> events(256);
  std::vector<char> chunk(1 << 16);
  for (;;) {
    for (auto now = std::chrono::steady_clock::now();
         !reopen.empty() && reopen.begin()->first <= now;) {
      auto index = reopen.begin()->second;
      reopen.erase(reopen.begin());
      if (!open_channel(conns[index], port, ep, static_cast<int>(index)))
        ++rep.failures;
    }
    if (!reported_ready && handshakes == count) {
      reported_ready = true;
      char r = 'R';
      write_all(report, &r, 1);
    }
    if (!reported_done && counting && specs == count) {
      reported_done = true;
      rep.specs = specs;
      write_all(report, &rep, sizeof(rep));
    }
    int wait_ms = 60000;
    if (!reopen.empty())
      wait_ms = static_cast<int>(std::clamp<int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(
              reopen.begin()->first - std::chrono::steady_clock::now())
                  .count() +
              1,
          0, 60000));
    auto n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), wait_ms);
    if ((n < 0 && errno == EINTR) || (n == 0 && !reopen.empty()))
      continue;
    if (n <= 0) {
      std::fprintf(stderr, "client: no progress for 60 s (%d of %d specs)\n", specs,
                   count);
      if (!reported_done) {
        rep.failures += count - specs;
        write_all(report, &rep, sizeof(rep));
      }
      std::_Exit(4);
    }
    for (int e = 0; e < n; ++e) {
      auto id = events[static_cast<size_t>(e)].data.u32;
      if (id == UINT32_MAX) {
        char cmd = 0;
        if (!read_all(ctl, &cmd, 1) || cmd == 'Q') {
          for (auto& c : conns)
            ::close(c.fd);
          // Leave without tearing down the actor system, which would wait
          // for the dummy executor forever.
          std::_Exit(0);
        }
        if (cmd == 'G') {
          counting = true;
          for (auto& c : conns)
            send_register(c);
        }
        continue;
      }
      if (id & channel_bit) {
        auto index = id & ~channel_bit;
        auto& c = conns[index];
        if (c.channel_phase == 1) {
          if (!(events[static_cast<size_t>(e)].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            continue;
          if (!channel_connected(c, ep, static_cast<int>(index))) {
            channel_closed(c, index);
            continue;
          }
        }
        for (;;) {
          auto k = ::recv(c.channel_fd, chunk.data(), chunk.size(), 0);
          if (k < 0 && (errno == EAGAIN || errno == EINTR))
            break;
          if (k <= 0) {
            channel_closed(c, index);
            break;
          }
          if (counting)
            rep.bytes_in += k;
          on_channel(c, chunk.data(), static_cast<size_t>(k));
        }
        continue;
      }
      auto& c = conns[id];
      if (events[static_cast<size_t>(e)].events & EPOLLOUT)
        flush(c);
      if (!(events[static_cast<size_t>(e)].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        continue;
      for (;;) {
        auto k = ::recv(c.fd, chunk.data(), chunk.size(), 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
          break;
        if (k <= 0) {
          ::epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
          if (!c.spec)
            ++rep.failures;
          break;
        }
        if (counting)
          rep.bytes_in += k;
        c.in.insert(c.in.end(), chunk.begin(), chunk.begin() + k);
      }
      size_t pos = 0;
      while (c.in.size() - pos >= caf::io::basp::header_size) {
        header hdr;
        {
          caf::binary_deserializer src{&ctx, c.in.data() + pos,
                                       caf::io::basp::header_size};
          src(hdr);
        }
        if (c.in.size() - pos - caf::io::basp::header_size < hdr.payload_len)
          break;
        on_frame(c, hdr, c.in.data() + pos + caf::io::basp::header_size, hdr.payload_len);
        pos += caf::io::basp::header_size + hdr.payload_len;
      }
      c.in.erase(c.in.begin(), c.in.begin() + static_cast<ptrdiff_t>(pos));
    }
  }
}

// -- the AM side ----------------------------------------------------------------

struct am_numbers {
  int64_t rss_kb = 0;
  int64_t hwm_kb = 0;
};

am_numbers am_memory() {
  am_numbers r;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      r.rss_kb = std::atoll(line.c_str() + 6);
    else if (line.rfind("VmHWM:", 0) == 0)
      r.hwm_kb = std::atoll(line.c_str() + 6);
  }
  return r;
}

/// Bytes this process's TCP sockets sent (handed to the network, without
/// retransmissions' repeats counted twice on loopback) and received, summed
/// over every open socket: the socket layer's own count.
std::pair<int64_t, int64_t> tcp_bytes() {
  int64_t sent = 0;
  int64_t received = 0;
  auto dir = ::opendir("/proc/self/fd");
  if (dir == nullptr)
    return {0, 0};
  while (auto ent = ::readdir(dir)) {
    int fd = std::atoi(ent->d_name);
    if (fd <= 2)
      continue;
    tcp_info info{};
    socklen_t len = sizeof(info);
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0) {
      sent += static_cast<int64_t>(info.tcpi_bytes_sent);
      received += static_cast<int64_t>(info.tcpi_bytes_received);
    }
  }
  ::closedir(dir);
  return {sent, received};
}

// Host table + ports: "h0,h1;type=i:p,i:p,...;type=..." — what a compact
// encoding of the cluster map costs (one string, built once).
std::string compact_spec(const cluster_map& cluster) {
  std::map<std::string, size_t> hosts;
  std::string table;
  std::string body;
  for (auto& [type, addrs] : cluster) {
    body += ";" + type + "=";
    bool first = true;
    for (auto& addr : addrs) {
      auto colon = addr.rfind(':');
      auto host = addr.substr(0, colon);
      auto [it, fresh] = hosts.emplace(host, hosts.size());
      if (fresh)
        table += (table.empty() ? "" : " ") + host;
      body +=
          (first ? "" : ",") + std::to_string(it->second) + ":" + addr.substr(colon + 1);
      first = false;
    }
  }
  return table + body;
}

// The `paced` prototype's sender: the spec goes out as a request, to at most
// `window` executors at a time; each answer (or its timeout) lets the next
// one have it, so at most `window` encoded specs wait in the AM's buffers.
struct paced_sends {
  caf::message msg;
  std::deque<caf::actor> queue;
  size_t in_flight = 0;
  size_t window = 64;
};

void pump_paced(caf::event_based_actor* self, std::shared_ptr<paced_sends> p) {
  while (p->in_flight < p->window && !p->queue.empty()) {
    auto exec = std::move(p->queue.front());
    p->queue.pop_front();
    ++p->in_flight;
    auto next = [self, p] {
      --p->in_flight;
      pump_paced(self, p);
    };
    self->request(exec, std::chrono::seconds(30), p->msg)
        .then([next](bool) { next(); }, [next](caf::error&) { next(); });
  }
}

struct proto_entry {
  executor_hello hello;
  caf::actor exec;
};

// What each prototype sends at the barrier.
void proto_barrier(caf::event_based_actor* self, const std::string& variant,
                   const std::map<task_id, proto_entry>& registered, size_t window) {
  std::vector<executor_hello> hellos;
  hellos.reserve(registered.size());
  for (auto& [task, e] : registered)
    hellos.push_back(e.hello);
  auto cluster = make_cluster_map(hellos);
  caf::message msg;
  if (variant == "shared" || variant == "paced") {
    msg = caf::make_message(spec_atom_v, cluster_spec{0, encode_cluster(cluster)});
  } else if (variant == "compact") {
    msg = caf::make_message(spec_atom_v, compact_spec(cluster));
  } else { // slim
    auto& first = cluster.begin()->second.front();
    msg = caf::make_message(spec_atom_v, first, static_cast<int32_t>(registered.size()));
  }
  if (variant == "paced") {
    auto p = std::make_shared<paced_sends>();
    p->msg = std::move(msg);
    p->window = window;
    for (auto& [task, e] : registered)
      p->queue.push_back(e.exec);
    pump_paced(self, p);
    return;
  }
  for (auto& [task, e] : registered)
    self->send(e.exec, msg);
}

// The prototype registry: same registration protocol and checks as the real
// one, a different delivery at the barrier.
caf::behavior proto_registry(caf::event_based_actor* self, std::string variant,
                             size_t window) {
  auto registered = std::make_shared<std::map<task_id, proto_entry>>();
  auto expected = std::make_shared<std::set<task_id>>();
  auto monitor = std::make_shared<caf::actor>();
  return {
      [=](expect_atom, std::vector<task_id>& tasks, int32_t) {
        *monitor = caf::actor_cast<caf::actor>(self->current_sender());
        expected->clear();
        expected->insert(tasks.begin(), tasks.end());
        registered->clear();
      },
      [=](register_atom, executor_hello& hello,
          executor_actor& exec) -> caf::result<registration_ack> {
        if (hello.secret != secret || expected->count(hello.task) == 0 ||
            registered->count(hello.task) > 0)
          return caf_error(errc::unknown_task, "refused");
        hello.secret.clear();
        spdlog::info("registry: {} registered at {}:{}", to_string(hello.task),
                     hello.host, hello.port);
        registered->emplace(hello.task,
                            proto_entry{hello, caf::actor_cast<caf::actor>(exec)});
        self->send(*monitor, registered_atom_v, hello, exec);
        auto rp = self->make_response_promise<registration_ack>();
        rp.deliver(registration_ack{"application_1700000000000_0001", 1000, {}});
        if (registered->size() == expected->size()) {
          self->send(*monitor, barrier_atom_v, int32_t{0});
          proto_barrier(self, variant, *registered, window);
        }
        return rp;
      },
      [](heartbeat_atom, const task_id&, int32_t, const task_sample&) {},
  };
}

// Stands in for the lifecycle monitor: expectations, monitoring, the barrier.
// The registry is spawned with it as supervisor and then handed to it.
caf::behavior fake_monitor(caf::event_based_actor* self, int executors,
                           std::shared_ptr<std::promise<int64_t>> done) {
  self->set_down_handler([](const caf::down_msg&) {});
  return {
      [=](const caf::actor& registry) {
        std::vector<task_id> tasks;
        tasks.reserve(static_cast<size_t>(executors));
        for (int i = 0; i < executors; ++i)
          tasks.push_back({"worker", i});
        self->send(registry, expect_atom_v, std::move(tasks), int32_t{0});
      },
      [=](registered_atom, const executor_hello&, const executor_actor& exec) {
        self->monitor(exec);
      },
      [=](barrier_atom, int32_t) { done->set_value(now_ns()); },
      [](heartbeat_atom, const task_id&, int32_t, const task_sample&) {},
  };
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --executors N [--clients P] [--variant "
               "tony|basp|shared|compact|slim|paced] [--window W] [--no-gate] "
               "[--json]\n",
               argv0);
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  options opts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--executors")
      opts.executors = std::atoi(next());
    else if (arg == "--clients")
      opts.clients = std::atoi(next());
    else if (arg == "--variant")
      opts.variant = next();
    else if (arg == "--json")
      opts.json = true;
    else if (arg == "--no-gate")
      opts.gate = false;
    else if (arg == "--window")
      opts.window = std::atoi(next());
    else
      return usage(argv[0]);
  }
  static const std::set<std::string> variants{"tony",    "basp", "shared",
                                              "compact", "slim", "paced"};
  if (opts.executors <= 0 || opts.window <= 0 || variants.count(opts.variant) == 0)
    return usage(argv[0]);
  // tony's spec channel needs tony's gate: the channel is behind it.
  bool reads_channel = opts.variant == "tony" && opts.gate;
  if (opts.clients <= 0)
    opts.clients = std::max(1, std::min(50, opts.executors / 100));
  opts.clients = std::min(opts.clients, opts.executors);
  ::signal(SIGPIPE, SIG_IGN);
  // One descriptor per connection on each side, two with the spec channel.
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &files);
  auto needed = static_cast<rlim_t>(opts.executors) * (reads_channel ? 2 : 1) + 64;
  if (files.rlim_cur < needed) {
    std::fprintf(stderr,
                 "%d executors need %llu open files in this process, the limit is %llu: "
                 "raise it (ulimit -Hn, as root) and rerun\n",
                 opts.executors, static_cast<unsigned long long>(needed),
                 static_cast<unsigned long long>(files.rlim_cur));
    return 2;
  }

  // Fork the clients before any thread exists.
  struct child {
    pid_t pid;
    int ctl;    // parent writes
    int report; // parent reads
  };
  // Gives up with the actor system running (its destructor would wait for
  // the registry for ever): the clients are killed, the process ends.
  auto abandon = [](const std::vector<child>& kids, int code) {
    for (auto& c : kids) {
      ::kill(c.pid, SIGKILL);
      ::waitpid(c.pid, nullptr, 0);
    }
    std::fflush(nullptr);
    std::_Exit(code);
  };
  std::vector<child> children;
  int per = opts.executors / opts.clients;
  int extra = opts.executors % opts.clients;
  int first = 0;
  for (int k = 0; k < opts.clients; ++k) {
    int count = per + (k < extra ? 1 : 0);
    int ctl[2];
    int rep[2];
    if (::pipe2(ctl, O_CLOEXEC) != 0 || ::pipe2(rep, O_CLOEXEC) != 0) {
      std::perror("pipe");
      return 3;
    }
    auto pid = ::fork();
    if (pid == 0) {
      ::close(ctl[1]);
      ::close(rep[0]);
      for (auto& c : children) {
        ::close(c.ctl);
        ::close(c.report);
      }
      client_source = htonl(0x7F010001u + static_cast<uint32_t>(k));
      std::_Exit(run_client(ctl[0], rep[1], first, count, opts.gate, reads_channel));
    }
    ::close(ctl[0]);
    ::close(rep[1]);
    children.push_back({pid, ctl[1], rep[0]});
    first += count;
  }

  // The AM's log lines cost what they cost in tony-am; they go nowhere here.
  if (std::getenv("TONY_BENCH_DEBUG") == nullptr)
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "bench", std::make_shared<spdlog::sinks::null_sink_mt>()));
  spdlog::set_level(spdlog::level::info);
  bench_config cfg{true};
  int exit_code = 0;
  {
    caf::actor_system sys{cfg};
    auto done = std::make_shared<std::promise<int64_t>>();
    auto barrier = done->get_future();
    auto monitor = sys.spawn(fake_monitor, opts.executors, done);
    // tony: the registry door as tony-am opens it (am/registry_door.hpp):
    // the spec channel started and wired into the registry, the gate sized
    // for the job. basp: the same registry without the channel.
    registry_config rcfg{"application_1700000000000_0001", secret, 1000};
    auto plan = plan_registry_door(rcfg, opts.executors, reads_channel);
    if (reads_channel && !plan.specs) {
      std::fprintf(stderr, "cannot start the spec channel\n");
      abandon(children, 3);
    }
    caf::actor registry;
    if (opts.variant == "tony" || opts.variant == "basp")
      registry = caf::actor_cast<caf::actor>(
          spawn_registry(sys, rcfg, caf::actor_cast<registry_supervisor_actor>(monitor)));
    else
      registry =
          sys.spawn(proto_registry, opts.variant, static_cast<size_t>(opts.window));
    caf::anon_send(monitor, registry);
    // tony-am's way (behind the gate), or CAF's own publish (--no-gate).
    std::unique_ptr<gate::published_gate> door;
    // The gate says a tony::error, CAF's publish a caf::error: rendered
    // by CAF alike.
    caf::expected<uint16_t> port = uint16_t{0};
    if (opts.gate) {
      auto published = gate::published_gate::publish(
          sys, caf::actor_cast<caf::strong_actor_ptr>(registry),
          sys.message_types<registry_actor>(), "127.0.0.1", 0, secret, plan.gate);
      if (published) {
        door = std::move(*published);
        port = door->port();
      } else {
        port = to_caf(published.error());
      }
    } else {
      port = sys.middleman().publish(registry, 0, "127.0.0.1", true);
    }
    if (!port) {
      std::fprintf(stderr, "cannot publish the registry: %s\n",
                   sys.render(port.error()).c_str());
      abandon(children, 3);
    }
    auto idle = am_memory();
    double load1 = -1; // the machine is shared: its load goes with every result
    if (auto* f = std::fopen("/proc/loadavg", "r")) {
      if (std::fscanf(f, "%lf", &load1) != 1)
        load1 = -1;
      std::fclose(f);
    }
    auto t_start = now_ns();
    uint16_t p = *port;
    for (auto& c : children)
      if (!write_all(c.ctl, &p, sizeof(p)))
        abandon(children, 4);
    for (auto& c : children) {
      char r = 0;
      if (!read_all(c.report, &r, 1) || r != 'R') {
        std::fprintf(stderr, "a client failed to connect\n");
        abandon(children, 4);
      }
    }
    auto t_connected = now_ns();
    auto connected_mem = am_memory();
    auto bytes_before = tcp_bytes();
    auto t_go = now_ns();
    for (auto& c : children)
      write_all(c.ctl, "G", 1);
    std::vector<client_report> reports(children.size());
    for (size_t k = 0; k < children.size(); ++k)
      if (!read_all(children[k].report, &reports[k], sizeof(client_report))) {
        std::fprintf(stderr, "client %zu died\n", k);
        exit_code = 5;
      }
    int64_t t_barrier = 0;
    if (barrier.wait_for(std::chrono::seconds(30)) == std::future_status::ready)
      t_barrier = barrier.get();
    else
      exit_code = 5;
    auto after_mem = am_memory();
    auto bytes_after = tcp_bytes();
    int64_t last_spec = 0;
    int64_t first_spec = INT64_MAX;
    int64_t in = 0;
    int64_t out = 0;
    int64_t spec_bytes = 0;
    int failures = 0;
    int retries = 0;
    int checked = -1;
    for (auto& r : reports) {
      last_spec = std::max(last_spec, r.last_spec_ns);
      if (r.first_spec_ns > 0)
        first_spec = std::min(first_spec, r.first_spec_ns);
      in += r.bytes_in;
      out += r.bytes_out;
      spec_bytes = std::max(spec_bytes, r.spec_bytes);
      failures += r.failures;
      retries += r.retries;
      if (r.checked_entries >= 0)
        checked = r.checked_entries;
    }
    for (auto& c : children)
      write_all(c.ctl, "Q", 1);
    for (auto& c : children) {
      int status = 0;
      ::waitpid(c.pid, &status, 0);
    }
    auto ms = [](int64_t ns) { return static_cast<double>(ns) / 1e6; };
    int64_t am_sent = bytes_after.first - bytes_before.first;
    int64_t am_received = bytes_after.second - bytes_before.second;
    char line[2048];
    std::snprintf(
        line, sizeof(line),
        "{\"variant\":\"%s\",\"gate\":%s,\"window\":%d,\"load1\":%.2f,\"executors\":%d,"
        "\"clients\":%d,"
        "\"connect_ms\":%.1f,\"go_to_barrier_ms\":%.1f,\"go_to_first_spec_ms\":%.1f,"
        "\"go_to_all_specs_ms\":%.1f,\"am_rss_idle_kb\":%lld,\"am_rss_connected_kb\":%"
        "lld,"
        "\"am_rss_after_kb\":%lld,\"am_hwm_kb\":%lld,\"am_bytes_sent\":%lld,"
        "\"am_bytes_received\":%lld,\"clients_bytes_in\":%lld,\"clients_bytes_out\":%lld,"
        "\"spec_frame_bytes\":%lld,\"spec_entries_checked\":%d,\"failures\":%d,"
        "\"retries\":%d}",
        opts.variant.c_str(), opts.gate ? "true" : "false", opts.window, load1,
        opts.executors, opts.clients, ms(t_connected - t_start), ms(t_barrier - t_go),
        ms(first_spec == INT64_MAX ? 0 : first_spec - t_go), ms(last_spec - t_go),
        static_cast<long long>(idle.rss_kb), static_cast<long long>(connected_mem.rss_kb),
        static_cast<long long>(after_mem.rss_kb),
        static_cast<long long>(after_mem.hwm_kb), static_cast<long long>(am_sent),
        static_cast<long long>(am_received), static_cast<long long>(in),
        static_cast<long long>(out), static_cast<long long>(spec_bytes), checked,
        failures, retries);
    if (opts.json) {
      std::printf("%s\n", line);
    } else {
      std::printf("%s: %d executors (%d client processes)%s\n", opts.variant.c_str(),
                  opts.executors, opts.clients, opts.gate ? "" : ", no gate");
      std::printf("  connect + handshake   %9.1f ms\n", ms(t_connected - t_start));
      std::printf("  go -> barrier         %9.1f ms\n", ms(t_barrier - t_go));
      std::printf("  go -> every spec in   %9.1f ms\n", ms(last_spec - t_go));
      std::printf("  AM RSS idle/after/HWM %lld / %lld / %lld kB\n",
                  static_cast<long long>(idle.rss_kb),
                  static_cast<long long>(after_mem.rss_kb),
                  static_cast<long long>(after_mem.hwm_kb));
      std::printf("  AM bytes sent         %lld (%.1f per executor), spec frame %lld\n",
                  static_cast<long long>(am_sent),
                  static_cast<double>(am_sent) / opts.executors,
                  static_cast<long long>(spec_bytes));
      std::printf("  spec entries checked  %d, failures %d, connections made again %d\n",
                  checked, failures, retries);
    }
    if (failures > 0 || checked != opts.executors)
      exit_code = exit_code ? exit_code : 6;
    caf::anon_send_exit(monitor, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
  }
  return exit_code;
}
