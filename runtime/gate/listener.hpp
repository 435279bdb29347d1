#pragma once

// A TCP listener that screens every connection before anything else of the
// process sees it: one thread, one epoll set, no thread per connection. A
// connection stays with the listener until its `session` says it may pass
// (the gate's handshake completed, an HTTP request's header arrived) and is
// then handed on, socket and session, to the listener's owner; until then it
// costs the process a session object (a few hundred bytes, bounded by the
// session) and an entry in an arrival-ordered list.
//
//   accept ──▶ pending (greeting sent) ──readable──▶ session::on_readable
//                 │                                    │ wait: stay pending
//                 │ deadline passed: closed            │ pass: handed on
//                 │ cap reached: the oldest closed     │ close: closed
//
// Bounds: at most `max_pending` connections wait at once (a new one beyond
// that closes the oldest waiting one, never a connection already handed on);
// each waits at most `deadline` after its arrival (or after it came back
// with rearm()). What a session reads is up to the session; the ones here
// read fixed or capped amounts.
//
// With `evict_after` the cap closes only a connection that has waited that
// long: until the oldest has, newcomers are not accepted and wait in the
// kernel's backlog, where they cost no descriptor. A burst of honest
// clients (thousands of executors asking at once, at an open-files limit
// that leaves few waiting slots) then passes in turn instead of closing
// each other; silent ones still give way after `evict_after`.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "messages/error.hpp"

namespace tony::gate {

/// One pending connection's protocol state. Runs on the listener's thread.
class session {
public:
  enum class step { wait, pass, close };

  virtual ~session();

  /// Bytes to send as soon as the connection is accepted (may be empty). The
  /// listener sends them without blocking; a socket that cannot take them at
  /// once is closed.
  virtual std::string greeting() { return {}; }

  /// Reads what the socket has (non-blocking), never more than the protocol
  /// allows, and says what happens next. `reply` may be set to bytes the
  /// listener sends (without blocking) before it passes or closes.
  virtual step on_readable(int fd, std::string& reply) = 0;
};

struct listener_options {
  /// A name for log lines ("registry gate", "tracking page").
  std::string name = "listener";
  size_t max_pending = 256;
  std::chrono::milliseconds deadline{10000};
  /// At the cap, how long the oldest waits before a newcomer closes it
  /// (0: at once).
  std::chrono::milliseconds evict_after{0};
  int backlog = 1024;
};

/// What the listener has done so far (for logs and tests).
struct listener_counts {
  uint64_t accepted = 0;
  uint64_t passed = 0;
  uint64_t closed_by_session = 0;
  uint64_t expired = 0; // past the deadline
  uint64_t evicted = 0; // the oldest, when the cap was reached
  uint64_t pending = 0; // waiting now
};

/// "N connections, M passed, K closed before passing, E timed out, D dropped
/// at the cap": what the AM logs for each of its ports at the end.
std::string summary(const listener_counts& c);

class listener {
public:
  using session_factory = std::function<std::unique_ptr<session>()>;
  /// Receives a connection that passed, with its session; owns the socket
  /// from then on. Runs on the listener's thread: keep it short.
  using pass_handler = std::function<void(int fd, std::unique_ptr<session>)>;

  listener(listener_options opts, session_factory make, pass_handler pass);
  ~listener();

  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  /// Binds `host`:`port` (0: any free port); returns the port.
  expected<uint16_t> bind(const std::string& host, uint16_t port);

  /// Starts the thread. Precondition: bind() succeeded.
  void start();

  /// Stops the thread and closes every pending connection and the listening
  /// socket; idempotent. Connections already handed on are not touched.
  void stop();

  /// Gives a connection back to wait again (an HTTP keep-alive connection
  /// after its request), with a fresh deadline; thread-safe. After stop()
  /// the socket is closed instead.
  void rearm(int fd, std::unique_ptr<session> s);

  uint16_t port() const { return port_; }

  listener_counts counts() const;

private:
  struct pending {
    int fd;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::steady_clock::time_point arrived;
    std::unique_ptr<session> s;
  };
  using pending_list = std::list<pending>;

  void run();
  void accept_all();
  void admit(int fd, std::unique_ptr<session> s, bool greet);
  void on_event(int fd);
  /// Stops waiting for `i` and closes it, counted under `reason`.
  void drop(pending_list::iterator i, std::atomic<uint64_t>& reason);
  void expire();
  void take_rearmed();
  int wait_ms() const;

  listener_options opts_;
  session_factory make_;
  pass_handler pass_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  bool accept_paused_ = false; // out of file descriptors: retry on the next tick
  bool accept_held_ = false;   // at the cap, within evict_after: newcomers wait
  /// Whether a newcomer may be accepted now (below the cap, or the oldest
  /// waited evict_after), and when one may be if not.
  bool room_for_one(std::chrono::steady_clock::time_point now,
                    std::chrono::steady_clock::time_point* when) const;
  void hold_accepting(bool hold);

  // -- owned by the listener's thread --------------------------------------
  pending_list pending_;
  std::unordered_map<int, pending_list::iterator> by_fd_;

  // -- shared with rearm() ---------------------------------------------------
  std::mutex inbox_mutex_;
  std::vector<std::pair<int, std::unique_ptr<session>>> inbox_;
  bool closed_ = false; // guarded by inbox_mutex_

  // -- counts ----------------------------------------------------------------
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> passed_{0};
  std::atomic<uint64_t> closed_by_session_{0};
  std::atomic<uint64_t> expired_{0};
  std::atomic<uint64_t> evicted_{0};
  std::atomic<uint64_t> pending_count_{0};
};

/// Sends all of `bytes` on a non-blocking socket if it takes them at once.
bool send_now(int fd, const std::string& bytes);

} // namespace tony::gate
