#include "hadoop/yarn/protocols.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>

namespace tony::yarn {

hadoop::expected<hadoop::endpoint> address_of(const hadoop::configuration& conf,
                                              const char* key) {
  auto value = conf.get(key);
  if (!value)
    return value.error();
  auto result = hadoop::parse_endpoint(*value);
  if (!result)
    return hadoop::error{hadoop::error_code::invalid_input,
                         std::string{key} + " (" + conf.origin(key) +
                             "): " + result.error().message()};
  return result;
}

hadoop::expected<hadoop::endpoint> rm_address(const hadoop::configuration& conf) {
  return address_of(conf, "yarn.resourcemanager.address");
}

hadoop::expected<hadoop::endpoint> scheduler_address(const hadoop::configuration& conf) {
  return address_of(conf, "yarn.resourcemanager.scheduler.address");
}

hadoop::expected<hadoop::endpoint> webapp_address(const hadoop::configuration& conf) {
  return address_of(conf, "yarn.resourcemanager.webapp.address");
}

std::vector<std::string> ha_rm_ids(const hadoop::configuration& conf) {
  std::vector<std::string> result;
  if (conf.get_or("yarn.resourcemanager.ha.enabled", "false") != "true")
    return result;
  std::istringstream ids{conf.get_or("yarn.resourcemanager.ha.rm-ids", "")};
  std::string id;
  while (std::getline(ids, id, ',')) {
    while (!id.empty() && id.back() == ' ')
      id.pop_back();
    while (!id.empty() && id.front() == ' ')
      id.erase(0, 1);
    if (!id.empty())
      result.push_back(id);
  }
  return result;
}

namespace {

hadoop::expected<rm_peer> peer_of(const hadoop::configuration& conf,
                                  const std::string& key, const std::string& id,
                                  uint16_t default_port) {
  auto own = key + "." + id;
  auto host_key = "yarn.resourcemanager.hostname." + id;
  auto value = conf.get_or(own, "");
  auto from = own;
  if (value.empty()) {
    auto host = conf.get_or(host_key, "");
    if (host.empty())
      return hadoop::error{hadoop::error_code::invalid_input,
                           "ResourceManager HA: neither " + own + " nor " + host_key +
                               " is set (yarn.resourcemanager.ha.rm-ids names " + id +
                               ")"};
    value = host + ":" + std::to_string(default_port);
    from = host_key;
  }
  auto ep = hadoop::parse_endpoint(value, default_port);
  if (!ep)
    return hadoop::error{hadoop::error_code::invalid_input,
                         from + " (" + conf.origin(from) + "): " + ep.error().message()};
  return rm_peer{id, std::move(*ep)};
}

} // namespace

hadoop::expected<std::vector<rm_peer>> rm_peers(const hadoop::configuration& conf,
                                                const char* key, uint16_t default_port) {
  std::vector<rm_peer> result;
  auto ids = ha_rm_ids(conf);
  if (ids.empty()) {
    auto ep = address_of(conf, key);
    if (!ep)
      return ep.error();
    result.push_back(rm_peer{"", std::move(*ep)});
    return result;
  }
  for (auto& id : ids) {
    auto peer = peer_of(conf, key, id, default_port);
    if (!peer)
      return peer.error();
    result.push_back(std::move(*peer));
  }
  return result;
}

std::string format_rm_peers(const std::vector<rm_peer>& peers) {
  std::string result;
  for (auto& peer : peers) {
    if (!result.empty())
      result += ',';
    if (!peer.id.empty())
      result += peer.id + '=';
    result += hadoop::to_string(peer.address);
  }
  return result;
}

hadoop::expected<std::vector<rm_peer>> parse_rm_peers(const std::string& text,
                                                      uint16_t default_port) {
  std::vector<rm_peer> result;
  std::istringstream in{text};
  std::string item;
  while (std::getline(in, item, ',')) {
    rm_peer peer;
    if (auto eq = item.find('='); eq != std::string::npos) {
      peer.id = item.substr(0, eq);
      item.erase(0, eq + 1);
    }
    auto ep = hadoop::parse_endpoint(item, default_port);
    if (!ep)
      return hadoop::error{hadoop::error_code::invalid_input,
                           "'" + item + "' is not host:port: " + ep.error().message()};
    peer.address = std::move(*ep);
    result.push_back(std::move(peer));
  }
  if (result.empty())
    return hadoop::error{hadoop::error_code::invalid_input, "no address"};
  return result;
}

namespace {

// Whether `host` is a wildcard or resolves to a loopback address, which
// Hadoop's WebAppUtils.getResolvedAddress replaces with this machine's name.
bool wildcard_or_loopback(const std::string& host) {
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]")
    return true;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0)
    return false;
  bool loopback = false;
  if (found->ai_family == AF_INET) {
    auto a = ntohl(reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr.s_addr);
    loopback = (a >> 24) == 127 || a == 0;
  } else if (found->ai_family == AF_INET6) {
    auto& a = reinterpret_cast<sockaddr_in6*>(found->ai_addr)->sin6_addr;
    loopback = IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_UNSPECIFIED(&a);
  }
  ::freeaddrinfo(found);
  return loopback;
}

std::string with_host(std::string address) {
  auto ep = hadoop::parse_endpoint(address);
  if (ep && wildcard_or_loopback(ep->host)) {
    ep->host = local_canonical_hostname();
    return hadoop::to_string(*ep);
  }
  return address;
}

} // namespace

std::string local_canonical_hostname() {
  // Java's InetAddress.getLocalHost().getCanonicalHostName(): the host name,
  // resolved, and the name its first address resolves back to.
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || *name == 0)
    return "localhost";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &found) != 0)
    return name;
  char canonical[NI_MAXHOST] = {};
  bool ok = ::getnameinfo(found->ai_addr, found->ai_addrlen, canonical, sizeof(canonical),
                          nullptr, 0, NI_NAMEREQD) == 0;
  ::freeaddrinfo(found);
  return ok && *canonical ? canonical : name;
}

std::vector<std::string> web_proxies(const hadoop::configuration& conf) {
  bool https = conf.get_or("yarn.http.policy", "HTTP_ONLY") == "HTTPS_ONLY";
  std::string scheme = https ? "https://" : "http://";
  std::string key = https ? "yarn.resourcemanager.webapp.https.address"
                          : "yarn.resourcemanager.webapp.address";
  std::string default_port = https ? ":8090" : ":8088";
  std::vector<std::string> result;
  if (auto proxy = conf.get_or("yarn.web-proxy.address", ""); !proxy.empty())
    return {scheme + proxy};
  for (auto& id : ha_rm_ids(conf)) {
    auto address = conf.get_or(key + "." + id, "");
    if (address.empty())
      address = conf.get_or("yarn.resourcemanager.hostname." + id, "") + default_port;
    if (address != default_port)
      result.push_back(scheme + with_host(address));
  }
  if (result.empty())
    result.push_back(scheme +
                     with_host(conf.get_or(
                         key, conf.get_or("yarn.resourcemanager.hostname", "0.0.0.0") +
                                  default_port)));
  return result;
}

} // namespace tony::yarn
