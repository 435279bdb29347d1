#pragma once

// An HTTP server that no slow client can hold: bind() picks the port first,
// so the caller can announce the URL (register it with the RM) before
// anything is served; start() then serves every request through one handler
// until stop(). Handlers run on the server's worker threads and must not
// touch actor state (reach actors through a facade).
//
//   accept ─▶ gate::listener (one thread, no thread per connection): waits
//             for the request's header, at most `header_timeout` and
//             `max_header_bytes`; at most `max_pending` connections wait at
//             once (a new one closes the oldest waiting one)
//          ─▶ queue (at most `max_queued`; beyond: 503) ─▶ `workers` threads:
//             cpp-httplib parses and routes the request (its own Server,
//             never listening), all socket I/O of one request within
//             `request_timeout` ─▶ a keep-alive connection goes back to the
//             listener to wait for its next request
//
// So a client that sends its header a byte at a time, or opens connections
// and says nothing, costs a waiting slot until the deadline and never a
// worker.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/expected.hpp>
#include <httplib.h>

#include "runtime/gate/listener.hpp"

namespace tony::http {

struct http_limits {
  /// Connections waiting for a complete request header (or idle between
  /// keep-alive requests) at once.
  size_t max_pending = 128;
  /// How long a request's header may take to arrive, from the connection's
  /// arrival or its previous request's end.
  std::chrono::milliseconds header_timeout{10000};
  /// The largest request line plus headers (431 beyond).
  size_t max_header_bytes = 16 << 10;
  size_t workers = 8;
  /// Complete requests waiting for a worker (503 beyond).
  size_t max_queued = 64;
  /// Each read or write of a request's body or response.
  std::chrono::milliseconds io_timeout{30000};
  /// All the socket I/O of one request after its header.
  std::chrono::milliseconds request_timeout{60000};
};

class http_server {
public:
  /// path: the decoded request path; body: the raw request body.
  using handler = std::function<void(const httplib::Request& req, const std::string& body,
                                     httplib::Response& res)>;

  /// Runs before the handler; returns true when it answered the request
  /// itself (e.g. a redirect to YARN's web proxy).
  using filter = std::function<bool(const httplib::Request& req, httplib::Response& res)>;

  explicit http_server(http_limits limits = {});
  ~http_server();

  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// Binds `host`:`port` (0: any free port); returns the port.
  caf::expected<int> bind(const std::string& host, int port);

  /// Installs `f` in front of every request. Precondition: before start().
  void set_filter(filter f);

  /// Serves every method on every path with `h`, on background threads.
  /// Precondition: bind() succeeded.
  void start(handler h);

  /// Stops serving: closes the waiting connections, lets the workers finish
  /// the requests they hold (each bounded by request_timeout) and joins
  /// them; idempotent.
  void stop();

  int port() const { return port_; }

  /// What the connection screening has done so far.
  gate::listener_counts counts() const;

private:
  struct job {
    int fd;
    std::string buffered; // what was read beyond the previous request
  };

  void on_header(int fd, std::unique_ptr<gate::session> s);
  void work();
  void serve(job j);

  http_limits limits_;
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<gate::listener> listener_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<job> queue_;
  bool stopping_ = false; // guarded by mutex_
  int port_ = 0;
};

} // namespace tony::http
