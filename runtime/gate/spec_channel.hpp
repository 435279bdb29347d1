#pragma once

// The spec channel: one encoded cluster spec written to many connections from
// a single shared buffer, on a thread of its own; and the executor's end of
// it, a reader thread.
//
//   AM:  gate listener ──proof ok, purpose "spec channel"──▶ add(fd) ──▶ held
//        registry ──publish(spec)──▶ every connection: 8-byte length + the
//                                    bytes, at most `window` in progress
//   executor: registered, ack says "channel" ──▶ spec_reader::open ──▶ gate
//             handshake (purpose "spec channel") ──▶ a frame ──▶ on_frame ...
//
// Why not BASP: CAF 0.17 serializes a message into each connection's write
// buffer and keeps that buffer's capacity for as long as the connection is
// open, so sending a 78 KiB spec to 10,000 executors leaves the AM holding
// 766 MiB however the sends are paced (bench/notes.md, "Registry at 10,000").
// Here the AM holds one copy; the bytes in flight sit in the kernel's socket
// buffers. A connection must have proved the job secret (the gate's
// handshake) before it is added; nothing is ever read from it: a peer that
// closes its end (or sends anything) is closed at once, so a connection
// costs the AM a descriptor and a few dozen bytes while its executor lives.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "messages/error.hpp"

namespace tony::gate {

struct spec_channel_counts {
  uint64_t connections = 0; // added so far
  uint64_t written = 0;     // whole specs handed to the kernel
  uint64_t dropped = 0;     // connections closed: the peer went, or a write failed
  uint64_t open = 0;        // connections held now
};

/// "N connections (K open), M specs written, D closed": for the AM's log.
std::string summary(const spec_channel_counts& c);

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
  void adopt(int fd);
  void queue_all();
  void fill();
  void on_event(size_t i, uint32_t events);
  bool begin(size_t i);
  int pump(peer& p);
  void finish(size_t i, bool failed);
  void close_peer(size_t i);

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
  std::vector<size_t> free_; // slots of closed connections, not queued
  std::deque<size_t> queue_;
  size_t active_ = 0;

  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> open_{0};
};

/// Reads one frame of the spec channel from a socket (waiting for it, also
/// on a non-blocking one): the 8-byte
/// little-endian length, then that many bytes. Errors: errc::protocol when
/// the length exceeds `max_bytes` (nothing beyond the length is read or
/// allocated), errc::infrastructure when the connection ends first.
expected<std::string> read_spec_frame(int fd, size_t max_bytes);

/// The executor's end: a thread that connects to the AM's gate asking for
/// the spec channel (retrying transient failures for `connect_for`), then
/// hands every frame it reads to `on_frame`, and when the connection cannot
/// be made or ends, calls `on_end` once with why. Both run on the reader's
/// thread; neither is called once stop() returned.
class spec_reader {
public:
  using frame_handler = std::function<void(std::string)>;
  using end_handler = std::function<void(const error&)>;

  struct options {
    std::chrono::milliseconds connect_for{30000};
    /// The largest frame accepted (a 10,000-task spec is 78 KiB).
    size_t max_bytes = size_t{64} << 20;
  };

  spec_reader() = default;
  ~spec_reader();

  spec_reader(const spec_reader&) = delete;
  spec_reader& operator=(const spec_reader&) = delete;

  /// Starts reading host:port's spec channel. A reader already running is
  /// stopped first (an executor that registers again opens the new AM's).
  void open(std::string host, uint16_t port, std::string secret, frame_handler on_frame,
            end_handler on_end, options opts);
  void open(std::string host, uint16_t port, std::string secret, frame_handler on_frame,
            end_handler on_end) {
    open(std::move(host), port, std::move(secret), std::move(on_frame), std::move(on_end),
         options{});
  }

  /// Ends the thread (a blocking read is cut by shutting the socket down)
  /// and closes the connection; idempotent, any thread but the reader's.
  void stop();

private:
  void run(std::string host, uint16_t port, std::string secret, frame_handler on_frame,
           end_handler on_end, options opts);
  int connect(const std::string& host, uint16_t port, const std::string& secret,
              const options& opts, error& why);
  void stop_locked();
  bool stopped();

  std::mutex control_; // open() and stop() one at a time
  std::thread thread_;
  std::mutex mutex_; // guards the rest
  std::condition_variable wake_;
  bool stopping_ = false;
  int fd_ = -1;
};

} // namespace tony::gate
