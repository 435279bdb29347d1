#pragma once

// An HTTP server on its own threads (cpp-httplib's pool): bind() picks the
// port first, so the caller can announce the URL (register it with the RM)
// before anything is served; start() then serves every request through one
// handler until stop(). Handlers run on the server's threads and must not
// touch actor state (reach actors through a facade).

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <caf/expected.hpp>
#include <httplib.h>

namespace tony::http {

class http_server {
public:
  /// path: the decoded request path; body: the raw request body.
  using handler = std::function<void(const httplib::Request& req, const std::string& body,
                                     httplib::Response& res)>;

  http_server();
  ~http_server();

  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// Binds `host`:`port` (0: any free port); returns the port.
  caf::expected<int> bind(const std::string& host, int port);

  /// Serves every method on every path with `h`, on a background thread.
  /// Precondition: bind() succeeded.
  void start(handler h);

  /// Stops serving and joins the thread; idempotent.
  void stop();

  int port() const { return port_; }

private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> listening_done_{false};
  int port_ = 0;
};

} // namespace tony::http
