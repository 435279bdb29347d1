#pragma once

// Forwards one HTTP request to an upstream server (the job's TensorBoard) and
// copies its answer back. Used by the tracking routes for /tensorboard/...;
// every call has a connect and a read timeout, and a failure is answered
// with 502 and a sentence saying what to check.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <httplib.h>

namespace tony::http {

struct proxy_target {
  std::string host;
  int port = 0;
  /// The path the client used for the upstream's root, as the client sees
  /// it ("/proxy/<app>/tensorboard"): a redirect to "/x" becomes
  /// "<public_prefix>/x".
  std::string public_prefix;
  /// Headers the proxy sets on the upstream request, replacing any of the
  /// same name the client sent (the AM's TensorBoard token).
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds read_timeout{60000};
};

/// Forwards `req` with its method, headers and body to `target`, asking for
/// `upstream_target` (path and query). Hop-by-hop headers are dropped both
/// ways; the upstream is asked for an identity encoding (the server
/// compresses what it sends on its own).
void forward(const proxy_target& target, const std::string& upstream_target,
             const httplib::Request& req, const std::string& body,
             httplib::Response& res);

/// "host:port" into its parts; false when it is not that.
bool split_host_port(const std::string& address, std::string& host, int& port);

} // namespace tony::http
