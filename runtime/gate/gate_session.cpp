#include "runtime/gate/gate_session.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "messages/error.hpp"

namespace tony::gate {

namespace {

using clock_type = std::chrono::steady_clock;

class gate_session : public session {
public:
  gate_session(std::shared_ptr<const std::string> secret, bool offer_spec_channel)
      : secret_(std::move(secret))
      , offer_spec_channel_(offer_spec_channel) {
    // nop
  }

  purpose asked() const { return asked_; }

  std::string greeting() override {
    auto n = random_nonce();
    if (!n)
      return {}; // no hello: the peer times out, the deadline closes it
    server_ = *n;
    greeted_ = true;
    auto hello = encode_hello(server_);
    return {hello.begin(), hello.end()};
  }

  step on_readable(int fd, std::string& reply) override {
    if (!greeted_)
      return step::close;
    auto n = ::recv(fd, in_.data() + got_, proof_size - got_, 0);
    if (n < 0)
      return errno == EAGAIN || errno == EINTR ? step::wait : step::close;
    if (n == 0)
      return step::close;
    got_ += static_cast<size_t>(n);
    if (got_ < proof_size)
      return step::wait;
    nonce client{};
    auto check = check_proof(*secret_, server_, in_, client, asked_);
    if (check == proof_check::ok && asked_ == purpose::spec_channel &&
        !offer_spec_channel_)
      return step::close;
    if (check == proof_check::ok) {
      auto v = encode_verdict(true, *secret_, server_, client);
      reply.assign(v.begin(), v.end());
      return step::pass;
    }
    if (check == proof_check::bad_secret) {
      auto v = encode_verdict(false, *secret_, server_, client);
      reply.assign(v.begin(), v.end());
    }
    return step::close;
  }

private:
  std::shared_ptr<const std::string> secret_;
  bool offer_spec_channel_;
  purpose asked_ = purpose::basp;
  nonce server_{};
  bool greeted_ = false;
  proof_bytes in_{};
  size_t got_ = 0;
};

int ms_left(clock_type::time_point deadline) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now())
          .count();
  return static_cast<int>(std::max<int64_t>(0, left));
}

// 1: ready, 0: deadline passed, -1: error.
int wait_for(int fd, short events, clock_type::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    auto rc = ::poll(&p, 1, ms_left(deadline));
    if (rc < 0 && errno == EINTR)
      continue;
    return rc < 0 ? -1 : rc;
  }
}

error dropped(const std::string& where, const char* phase) {
  return make_error(errc::infrastructure, "the connection to the AM at " + where +
                                              " dropped during the " + phase +
                                              " (is this the AM's registry port?)");
}

error too_slow(const std::string& where, const char* phase) {
  return make_error(errc::timeout, "the AM at " + where + " did not complete the " +
                                       phase + " in time (overloaded or not a tony AM)");
}

// Reads exactly `n` bytes before `deadline`.
expected<void> read_exactly(int fd, uint8_t* out, size_t n,
                            clock_type::time_point deadline, const std::string& where,
                            const char* phase) {
  size_t got = 0;
  while (got < n) {
    auto ready = wait_for(fd, POLLIN, deadline);
    if (ready == 0)
      return too_slow(where, phase);
    if (ready < 0)
      return dropped(where, phase);
    auto k = ::recv(fd, out + got, n - got, 0);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
      continue;
    if (k <= 0)
      return dropped(where, phase);
    got += static_cast<size_t>(k);
  }
  return ok;
}

expected<void> write_all(int fd, const uint8_t* data, size_t n,
                         clock_type::time_point deadline, const std::string& where) {
  size_t done = 0;
  while (done < n) {
    auto ready = wait_for(fd, POLLOUT, deadline);
    if (ready == 0)
      return too_slow(where, "handshake");
    if (ready < 0)
      return dropped(where, "handshake");
    auto k = ::send(fd, data + done, n - done, MSG_NOSIGNAL);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
      continue;
    if (k <= 0)
      return dropped(where, "handshake");
    done += static_cast<size_t>(k);
  }
  return ok;
}

// One connect attempt to `ai` before `deadline`: the socket, or -1 with errno.
int try_connect(const addrinfo* ai, clock_type::time_point deadline, bool& timed_out) {
  int fd = ::socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -1;
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
    return fd;
  if (errno != EINPROGRESS) {
    auto saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  auto ready = wait_for(fd, POLLOUT, deadline);
  int err = 0;
  socklen_t len = sizeof(err);
  if (ready == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
    return fd;
  timed_out = ready == 0;
  ::close(fd);
  errno = ready == 0 ? ETIMEDOUT : (err != 0 ? err : EIO);
  return -1;
}

} // namespace

std::unique_ptr<session> make_gate_session(std::shared_ptr<const std::string> secret,
                                           bool offer_spec_channel) {
  return std::make_unique<gate_session>(std::move(secret), offer_spec_channel);
}

purpose purpose_of(const session& s) {
  auto gs = dynamic_cast<const gate_session*>(&s);
  return gs ? gs->asked() : purpose::basp;
}

expected<int> connect_tcp(const std::string& host, uint16_t port,
                          std::chrono::milliseconds timeout) {
  auto where = host + ":" + std::to_string(port);
  auto deadline = clock_type::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  auto service = std::to_string(port);
  if (auto rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return make_error(errc::infrastructure,
                      "cannot resolve the AM's host " + host + ": " + ::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard{found, ::freeaddrinfo};
  std::string why = "no address";
  bool timed_out = false;
  for (auto ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = try_connect(ai, deadline, timed_out);
    if (fd >= 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return fd;
    }
    why = std::strerror(errno);
  }
  if (timed_out)
    return make_error(errc::timeout, "connecting to the AM at " + where + " timed out");
  return make_error(errc::infrastructure,
                    "cannot connect to the AM at " + where + ": " + why);
}

expected<void> client_handshake(int fd, const std::string& secret,
                                const std::string& where,
                                std::chrono::milliseconds timeout, purpose what) {
  auto deadline = clock_type::now() + timeout;
  hello_bytes hello{};
  if (auto ok =
          read_exactly(fd, hello.data(), hello.size(), deadline, where, "gate handshake");
      !ok)
    return ok.error();
  nonce server{};
  if (auto check = decode_hello(hello, server); check != hello_check::ok)
    return make_error(errc::protocol, "the peer at " + where + " is " + to_string(check) +
                                          "; check the AM's address and port");
  auto client = random_nonce();
  if (!client)
    return make_error(errc::infrastructure,
                      "cannot draw a nonce (OpenSSL RAND_bytes failed)");
  auto proof = encode_proof(secret, server, *client, what);
  if (auto ok = write_all(fd, proof.data(), proof.size(), deadline, where); !ok)
    return ok.error();
  verdict_bytes verdict{};
  if (auto ok = read_exactly(fd, verdict.data(), verdict.size(), deadline, where,
                             "gate verdict");
      !ok)
    return ok.error();
  switch (check_verdict(secret, server, *client, verdict)) {
  case verdict_check::accepted:
    return ok;
  case verdict_check::denied:
    return make_error(errc::bad_secret,
                      "the AM at " + where +
                          " refused the job secret (the secret belongs to another job, "
                          "or the job was restarted with a new one)");
  case verdict_check::impostor:
    return make_error(errc::protocol, "the peer at " + where +
                                          " accepted the handshake without knowing "
                                          "the job secret: it is not this job's AM");
  case verdict_check::not_a_gate:
    break;
  }
  return make_error(errc::protocol,
                    "the peer at " + where + " answered the gate handshake with garbage");
}

expected<int> connect_through_gate(const std::string& host, uint16_t port,
                                   const std::string& secret,
                                   std::chrono::milliseconds timeout, purpose what) {
  auto start = clock_type::now();
  auto fd = connect_tcp(host, port, timeout);
  if (!fd)
    return fd.error();
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      timeout - (clock_type::now() - start));
  if (left.count() < 1)
    left = std::chrono::milliseconds(1);
  if (auto ok =
          client_handshake(*fd, secret, host + ":" + std::to_string(port), left, what);
      !ok) {
    ::close(*fd);
    return ok.error();
  }
  return *fd;
}

} // namespace tony::gate
