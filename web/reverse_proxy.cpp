#include "web/reverse_proxy.hpp"

#include "base/text.hpp"
#include <algorithm>
#include <cctype>

namespace tony::http {

namespace {

// RFC 7230 hop-by-hop headers, and those the server computes itself.
bool skipped(const std::string& name) {
  static const char* names[] = {
      "connection", "keep-alive",     "proxy-authenticate", "proxy-authorization",
      "te",         "trailer",        "transfer-encoding",  "upgrade",
      "host",       "content-length", "accept-encoding",    "content-encoding"};
  auto n = base::lower(name);
  return std::any_of(std::begin(names), std::end(names),
                     [&](const char* x) { return n == x; });
}

} // namespace

bool split_host_port(const std::string& address, std::string& host, int& port) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    return false;
  int p = 0;
  for (auto i = colon + 1; i < address.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(address[i])))
      return false;
    p = p * 10 + (address[i] - '0');
    if (p > 65535)
      return false;
  }
  host = address.substr(0, colon);
  port = p;
  return p > 0;
}

void forward(const proxy_target& target, const std::string& upstream_target,
             const httplib::Request& req, const std::string& body,
             httplib::Response& res) {
  httplib::Client cli(target.host, target.port);
  cli.set_connection_timeout(target.connect_timeout);
  cli.set_read_timeout(target.read_timeout);
  cli.set_write_timeout(target.read_timeout);
  cli.set_follow_location(false);
  cli.set_keep_alive(false);
  cli.set_url_encode(false); // the target is already as the client encoded it
  cli.set_decompress(false);
  httplib::Request up;
  up.method = req.method == "HEAD" ? "GET" : req.method;
  up.path = upstream_target.empty() ? "/" : upstream_target;
  auto set_here = [&](const std::string& name) {
    return std::any_of(target.headers.begin(), target.headers.end(), [&](auto& h) {
      return base::lower(h.first) == base::lower(name);
    });
  };
  for (auto& [k, v] : req.headers)
    if (!skipped(k) && base::lower(k) != "remote_addr" &&
        base::lower(k) != "remote_port" && base::lower(k) != "local_addr" &&
        base::lower(k) != "local_port" && !set_here(k))
      up.headers.emplace(k, v);
  for (auto& [k, v] : target.headers)
    up.headers.emplace(k, v);
  up.headers.emplace("Accept-Encoding", "identity");
  up.headers.emplace("X-Forwarded-Prefix", target.public_prefix);
  up.body = body;
  httplib::Response down;
  httplib::Error err = httplib::Error::Success;
  if (!cli.send(up, down, err)) {
    res.status = 502;
    res.set_content(
        "tony: TensorBoard at " + target.host + ":" + std::to_string(target.port) +
            " does not answer (" + httplib::to_string(err) +
            "); it may still be starting: reload in a few seconds, or see the "
            "tensorboard task's stderr on the job page\n",
        "text/plain; charset=utf-8");
    return;
  }
  res.status = down.status;
  std::string content_type = "application/octet-stream";
  for (auto& [k, v] : down.headers) {
    auto n = base::lower(k);
    if (skipped(k))
      continue;
    if (n == "content-type") {
      content_type = v;
      continue;
    }
    if (n == "location" && !v.empty() && v[0] == '/' && (v.size() < 2 || v[1] != '/')) {
      res.headers.emplace(k, target.public_prefix + v);
      continue;
    }
    res.headers.emplace(k, v);
  }
  res.set_content(std::move(down.body), content_type);
}

} // namespace tony::http
