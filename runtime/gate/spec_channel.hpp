#pragma once

// The spec channel: one encoded cluster spec written to many connections from
// a single shared buffer, on a thread of its own.
//
//   gate listener ──proof ok──▶ add(fd) ──▶ held until a spec is published
//   registry ──publish(spec)──▶ every connection: 8-byte length + the bytes,
//                               at most `window` connections in progress
//
// Why not BASP: CAF 0.17 serializes a message into each connection's write
// buffer and keeps that buffer's capacity for as long as the connection is
// open, so sending a 78 KiB spec to 10,000 executors leaves the AM holding
// 766 MiB however the sends are paced (bench/notes.md, "Registry at 10,000").
// Here the AM holds one copy; the bytes in flight sit in the kernel's socket
// buffers. A connection must have proved the job secret (the gate's
// handshake) before it is added; nothing is ever read from it.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/expected.hpp>

namespace tony::gate {

struct spec_channel_counts {
  uint64_t connections = 0; // added so far
  uint64_t written = 0;     // whole specs handed to the kernel
  uint64_t dropped = 0;     // connections that failed and were closed
};

class spec_channel {
public:
  /// `window`: connections being written to at once (at least 1).
  explicit spec_channel(size_t window = 64);
  ~spec_channel();

  spec_channel(const spec_channel&) = delete;
  spec_channel& operator=(const spec_channel&) = delete;

  /// Starts the thread; false if the kernel refuses an epoll set or eventfd.
  bool start();

  /// Takes `fd` (a connected socket that passed the gate); it gets the
  /// newest spec, now if one was published. Thread-safe.
  void add(int fd);

  /// Sends `spec` to every connection. A newer spec replaces an older one
  /// not yet begun on a connection; one in progress is finished first, so a
  /// reader always sees whole frames, the newest last. Thread-safe.
  void publish(std::shared_ptr<const std::string> spec);

  spec_channel_counts counts() const;

private:
  struct peer {
    int fd = -1;
    std::shared_ptr<const std::string> spec; // being written; null: idle
    char prefix[8] = {};
    size_t sent = 0; // of prefix + spec
    bool queued = false;
    bool stale = false; // a newer spec came while this one was written
  };

  void run();
  void take_inbox();
  void queue_all();
  void fill();
  void on_writable(size_t i);
  bool begin(size_t i);
  int pump(peer& p);
  void finish(size_t i, bool failed);

  size_t window_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};

  // -- shared with add() and publish() --------------------------------------
  mutable std::mutex inbox_mutex_;
  std::vector<int> new_fds_;
  std::shared_ptr<const std::string> next_;

  // -- owned by the thread ----------------------------------------------------
  std::shared_ptr<const std::string> current_;
  std::vector<peer> peers_;
  std::deque<size_t> queue_;
  size_t active_ = 0;

  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> dropped_{0};
};

/// Reads one frame of the spec channel from a blocking socket: the 8-byte
/// little-endian length, then that many bytes. Errors: errc::protocol when
/// the length exceeds `max_bytes` (nothing beyond the length is read or
/// allocated), errc::infrastructure when the connection ends first.
caf::expected<std::string> read_spec_frame(int fd, size_t max_bytes);

} // namespace tony::gate
