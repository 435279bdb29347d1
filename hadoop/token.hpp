#pragma once

// A Hadoop security token (org.apache.hadoop.security.token.Token): an
// opaque identifier the server can decode, the password derived from it by
// the server's secret, and the kind and service that select it.

#include <string>
#include <string_view>

#include "hadoop/expected.hpp"

namespace tony::hadoop {

struct token {
  std::string identifier; // raw bytes
  std::string password;   // raw bytes
  std::string kind;       // e.g. "YARN_AM_RM_TOKEN", "NMToken", "ContainerToken"
  std::string service;    // usually "host:port" of the server it is for
};

inline bool operator==(const token& x, const token& y) {
  return x.identifier == y.identifier && x.password == y.password && x.kind == y.kind &&
         x.service == y.service;
}

inline bool operator!=(const token& x, const token& y) {
  return !(x == y);
}

/// Well-known token kinds.
constexpr const char* amrm_token_kind = "YARN_AM_RM_TOKEN";
constexpr const char* nm_token_kind = "NMToken";
constexpr const char* container_token_kind = "ContainerToken";

/// The serialized hadoop TokenProto (what YARN puts in ContainerProto's
/// container_token and what tony::container::token carries).
std::string serialize_token_proto(const token& x);

/// Parses a serialized TokenProto.
expected<token> parse_token_proto(std::string_view bytes);

/// "YARN_AM_RM_TOKEN for 127.0.0.1:8030": tokens in messages, never secrets.
std::string describe(const token& x);

} // namespace tony::hadoop
