#pragma once

// A non-blocking TCP socket whose every operation takes a deadline, so that
// no read, write or connect can hang past the caller's budget.

#include <string>
#include <string_view>

#include "hadoop/deadline.hpp"
#include "hadoop/endpoint.hpp"
#include "hadoop/expected.hpp"

namespace tony::hadoop {

class tcp_socket {
public:
  tcp_socket() = default;
  explicit tcp_socket(int fd)
      : fd_(fd) {
    // nop
  }
  ~tcp_socket();

  tcp_socket(tcp_socket&& other) noexcept;
  tcp_socket& operator=(tcp_socket&& other) noexcept;
  tcp_socket(const tcp_socket&) = delete;
  tcp_socket& operator=(const tcp_socket&) = delete;

  /// One connection attempt to every resolved address of `to`, in order.
  /// Errors (connect_failed, timeout) carry the OS reason only ("connection
  /// refused"); callers add who and where.
  static expected<tcp_socket> connect(const endpoint& to, deadline until);

  /// Writes all of `data` (MSG_NOSIGNAL: a closed peer is an error, not a
  /// signal).
  expected<void> write_all(std::string_view data, deadline until);

  /// Reads exactly `n` bytes into `buf`; connection_closed on EOF.
  expected<void> read_exact(char* buf, size_t n, deadline until);

  /// True once readable (or closed), false on deadline.
  expected<bool> wait_readable(deadline until);

  /// Wakes a thread blocked in another call; later calls fail.
  void shutdown() noexcept;

  /// Sends FIN but keeps reading: what the peer already sent stays readable.
  void shutdown_write() noexcept;

  bool valid() const noexcept { return fd_ >= 0; }
  int fd() const noexcept { return fd_; }

private:
  int fd_ = -1;
};

} // namespace tony::hadoop
