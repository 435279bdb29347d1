#include "runtime/yarn/protocols.hpp"

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

namespace {

bool wildcard(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

// Where the RM is when its web address names no host.
std::string rm_host(const hadoop::configuration& conf) {
  if (auto rm = rm_address(conf); rm && !wildcard(rm->host))
    return rm->host;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) == 0 && *name)
    return name;
  return "localhost";
}

std::string with_host(std::string address, const hadoop::configuration& conf) {
  auto ep = hadoop::parse_endpoint(address);
  if (ep && wildcard(ep->host)) {
    ep->host = rm_host(conf);
    return hadoop::to_string(*ep);
  }
  return address;
}

} // namespace

std::vector<std::string> web_proxies(const hadoop::configuration& conf) {
  bool https = conf.get_or("yarn.http.policy", "HTTP_ONLY") == "HTTPS_ONLY";
  std::string scheme = https ? "https://" : "http://";
  std::string key = https ? "yarn.resourcemanager.webapp.https.address"
                          : "yarn.resourcemanager.webapp.address";
  std::string default_port = https ? ":8090" : ":8088";
  std::vector<std::string> result;
  if (auto proxy = conf.get_or("yarn.web-proxy.address", ""); !proxy.empty())
    return {scheme + proxy};
  if (conf.get_or("yarn.resourcemanager.ha.enabled", "false") == "true") {
    std::istringstream ids{conf.get_or("yarn.resourcemanager.ha.rm-ids", "")};
    std::string id;
    while (std::getline(ids, id, ',')) {
      while (!id.empty() && id.back() == ' ')
        id.pop_back();
      while (!id.empty() && id.front() == ' ')
        id.erase(0, 1);
      if (id.empty())
        continue;
      auto address = conf.get_or(key + "." + id, "");
      if (address.empty())
        address = conf.get_or("yarn.resourcemanager.hostname." + id, "") + default_port;
      if (address != default_port)
        result.push_back(scheme + with_host(address, conf));
    }
  }
  if (result.empty())
    result.push_back(
        scheme + with_host(conf.get_or(key, conf.get_or("yarn.resourcemanager.hostname",
                                                        "0.0.0.0") +
                                                default_port),
                           conf));
  return result;
}

} // namespace tony::yarn
