#pragma once

// An HTTP server that no slow client can hold: bind() picks the port first,
// so the caller can announce the URL (register it with the RM) before
// anything is served; start() then serves every request through one handler
// until stop(). Handlers run on the server's worker threads and must not
// touch actor state (reach actors through a facade).
//
//   accept ─▶ gate::listener (one thread, no thread per connection): waits
//             for the request's header, at most `max_header_bytes`, then
//             for its body as the route's body_rule allows (refused at once
//             when the route takes none: web/request_body.hpp), header and
//             body within `header_timeout`; at most `max_pending`
//             connections wait at once (a new one closes the oldest waiting
//             one), and the bodies they hold share `max_body_bytes_held`
//          ─▶ queue (at most `max_queued`; beyond: 503) ─▶ `workers` threads:
//             cpp-httplib parses and routes the request (its own Server,
//             never listening), all socket I/O of one request within
//             `request_timeout` ─▶ a keep-alive connection goes back to the
//             listener to wait for its next request
//
// So a client that sends its header or body a byte at a time, or opens
// connections and says nothing, costs a waiting slot until the deadline and
// never a worker; a body the route does not take is never read, and none is
// inflated.

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

#include <httplib.h>

#include "messages/error.hpp"
#include "runtime/gate/listener.hpp"
#include "web/request_body.hpp"

namespace tony::http {

struct http_limits {
  /// Connections waiting for a complete request header (or idle between
  /// keep-alive requests) at once.
  size_t max_pending = 128;
  /// How long a request's header and body may take to arrive, from the
  /// connection's arrival or its previous request's end.
  std::chrono::milliseconds header_timeout{10000};
  /// The largest request line plus headers (431 beyond).
  size_t max_header_bytes = 16 << 10;
  size_t workers = 8;
  /// Complete requests waiting for a worker (503 beyond).
  size_t max_queued = 64;
  /// The request bodies held at once, waiting or being served (503 beyond).
  size_t max_body_bytes_held = 32 << 20;
  /// Each read or write of a request's body or response.
  std::chrono::milliseconds io_timeout{30000};
  /// All the socket I/O of one request after its header.
  std::chrono::milliseconds request_timeout{60000};
};

class http_server {
public:
  /// req.path: the decoded request path; body: the request body as sent
  /// (de-chunked, never inflated), within the route's body_rule.
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
  expected<int> bind(const std::string& host, int port);

  /// Says what each route takes as a body, from the method and the decoded
  /// path; called on the listener's thread, so it must not block.
  using body_policy =
      std::function<body_rule(const std::string& method, const std::string& path)>;

  /// Installs `f` in front of every request. Precondition: before start().
  void set_filter(filter f);

  /// Installs the routes' body policy; without one no route takes a body.
  /// Precondition: before start().
  void set_body_policy(body_policy p);

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

  /// Request body bytes held now (waiting for their end or being served).
  size_t body_bytes_held() const;

  /// What the server shares with its listener's sessions (internal).
  struct shared_state;

private:
  struct job {
    int fd;
    std::unique_ptr<gate::session> request; // a complete request, read
  };

  void on_request(int fd, std::unique_ptr<gate::session> s);
  void work();
  void serve(job j);

  http_limits limits_;
  std::shared_ptr<shared_state> shared_; // the policy and the body budget
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
