#include "hadoop/tcp_socket.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tony::hadoop {

namespace {

std::string os_reason(int err) {
  switch (err) {
  case ECONNREFUSED:
    return "connection refused";
  case ECONNRESET:
    return "connection reset by peer";
  case EHOSTUNREACH:
    return "host unreachable";
  case ENETUNREACH:
    return "network unreachable";
  case ETIMEDOUT:
    return "connection timed out";
  case EPIPE:
    return "connection closed by peer";
  default:
    return std::strerror(err);
  }
}

int poll_ms(deadline until) {
  auto left = remaining(until).count();
  // Round up so that a deadline a fraction of a millisecond away still polls.
  return static_cast<int>(std::min<long long>(left + 1, 1 << 30));
}

// Waits for `events`; 1 ready, 0 deadline, -1 error (errno set).
int wait_for(int fd, short events, deadline until) {
  for (;;) {
    if (expired(until))
      return 0;
    pollfd p{fd, events, 0};
    auto rc = ::poll(&p, 1, poll_ms(until));
    if (rc < 0 && errno == EINTR)
      continue;
    if (rc < 0)
      return -1;
    if (rc == 0)
      continue; // re-check the deadline with the real clock
    return 1;
  }
}

} // namespace

tcp_socket::~tcp_socket() {
  if (fd_ >= 0)
    ::close(fd_);
}

tcp_socket::tcp_socket(tcp_socket&& other) noexcept
    : fd_(other.fd_) {
  other.fd_ = -1;
}

tcp_socket& tcp_socket::operator=(tcp_socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

expected<tcp_socket> tcp_socket::connect(const endpoint& to, deadline until) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addrs = nullptr;
  auto port = std::to_string(to.port);
  auto rc = ::getaddrinfo(to.host.c_str(), port.c_str(), &hints, &addrs);
  if (rc != 0)
    return error{error_code::connect_failed,
                 "cannot resolve host '" + to.host + "': " + gai_strerror(rc)};
  std::string last = "no address";
  auto last_code = error_code::connect_failed;
  for (auto* ai = addrs; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                      ai->ai_protocol);
    if (fd < 0) {
      last = os_reason(errno);
      continue;
    }
    tcp_socket sock{fd};
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
      ::freeaddrinfo(addrs);
      return sock;
    }
    if (errno != EINPROGRESS) {
      last = os_reason(errno);
      continue;
    }
    auto ready = wait_for(fd, POLLOUT, until);
    if (ready == 0) {
      last = "no answer before the deadline";
      last_code = error_code::timeout;
      break;
    }
    if (ready < 0) {
      last = os_reason(errno);
      continue;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err == 0) {
      ::freeaddrinfo(addrs);
      return sock;
    }
    last = os_reason(err);
  }
  ::freeaddrinfo(addrs);
  return error{last_code, last};
}

expected<void> tcp_socket::write_all(std::string_view data, deadline until) {
  size_t done = 0;
  while (done < data.size()) {
    auto n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto ready = wait_for(fd_, POLLOUT, until);
      if (ready == 0)
        return error{error_code::timeout, "write did not complete before the deadline"};
      if (ready < 0)
        return error{error_code::connection_closed, os_reason(errno)};
      continue;
    }
    return error{error_code::connection_closed, os_reason(errno)};
  }
  return {};
}

expected<void> tcp_socket::read_exact(char* buf, size_t n, deadline until) {
  size_t done = 0;
  while (done < n) {
    auto got = ::recv(fd_, buf + done, n - done, 0);
    if (got > 0) {
      done += static_cast<size_t>(got);
      continue;
    }
    if (got == 0)
      return error{error_code::connection_closed,
                   done == 0 ? std::string{"connection closed by peer"}
                             : "connection closed by peer in the middle of a frame (" +
                                   std::to_string(done) + " of " + std::to_string(n) +
                                   " bytes)"};
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      auto ready = wait_for(fd_, POLLIN, until);
      if (ready == 0)
        return error{error_code::timeout, "no data before the deadline"};
      if (ready < 0)
        return error{error_code::connection_closed, os_reason(errno)};
      continue;
    }
    return error{error_code::connection_closed, os_reason(errno)};
  }
  return {};
}

expected<bool> tcp_socket::wait_readable(deadline until) {
  auto ready = wait_for(fd_, POLLIN, until);
  if (ready < 0)
    return error{error_code::connection_closed, os_reason(errno)};
  return ready > 0;
}

void tcp_socket::shutdown() noexcept {
  if (fd_ >= 0)
    ::shutdown(fd_, SHUT_RDWR);
}

void tcp_socket::shutdown_write() noexcept {
  if (fd_ >= 0)
    ::shutdown(fd_, SHUT_WR);
}

} // namespace tony::hadoop
