#pragma once

// A server address as Hadoop configurations write it: "host:port",
// "[v6addr]:port".

#include <cstdint>
#include <string>
#include <string_view>

#include "hadoop/expected.hpp"

namespace tony::hadoop {

struct endpoint {
  std::string host;
  uint16_t port = 0;
};

inline bool operator==(const endpoint& x, const endpoint& y) {
  return x.port == y.port && x.host == y.host;
}

inline bool operator!=(const endpoint& x, const endpoint& y) {
  return !(x == y);
}

inline bool operator<(const endpoint& x, const endpoint& y) {
  return x.host != y.host ? x.host < y.host : x.port < y.port;
}

/// "host:port" (IPv6 hosts in brackets).
std::string to_string(const endpoint& x);

/// Parses "host:port". With `default_port` > 0 a bare "host" is accepted.
/// Surrounding whitespace is ignored (XML values often carry it).
expected<endpoint> parse_endpoint(std::string_view text, int default_port = 0);

} // namespace tony::hadoop
