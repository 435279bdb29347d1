#pragma once

// Which Kerberos principal a server must have, and the check a client runs
// before it asks the KDC for a ticket to it (Hadoop's
// SaslRpcClient.getServerPrincipal and SecurityUtil.getServerPrincipal).
// The server advertises `protocol` and `serverId` in its SaslAuth; the
// client rebuilds protocol/serverId@REALM and compares it with its own
// configuration, so a server cannot steer the client to a principal of its
// choosing:
//
//   <key>.pattern set   the advertised principal must match the glob
//   else <key>          must equal it once `_HOST` is replaced by the
//                       server's canonical host name (lower case)
//
// A mismatch is refused as a possible impersonation.

#include <string>

#include "hadoop/configuration.hpp"
#include "hadoop/endpoint.hpp"
#include "hadoop/expected.hpp"

namespace tony::hadoop {

/// The configuration of one service's principal.
struct kerberos_service {
  /// The configuration key: "yarn.resourcemanager.principal",
  /// "dfs.namenode.kerberos.principal".
  std::string key;
  /// Its value, e.g. "rm/_HOST@EXAMPLE.COM"; may be empty.
  std::string principal;
  /// The value of key + ".pattern" (a glob), or empty.
  std::string pattern;
};

inline bool operator==(const kerberos_service& x, const kerberos_service& y) {
  return x.key == y.key && x.principal == y.principal && x.pattern == y.pattern;
}

/// The service `key` as `conf` configures it.
kerberos_service service_from(const configuration& conf, const std::string& key);

/// Replaces a `_HOST` second component ("rm/_HOST@R") with `host` in lower
/// case; other principals come back unchanged.
std::string substitute_host(const std::string& principal, const std::string& host);

/// Hadoop's GlobPattern: `*`, `?`, `[abc]`, `[!a-z]`, `{a,b}`, `\` escapes.
bool glob_match(const std::string& pattern, const std::string& text);

/// The host name `_HOST` stands for when talking to `server`: the reverse
/// lookup of its address in lower case, else the numeric address (Java's
/// InetAddress.getCanonicalHostName).
std::string canonical_host(const endpoint& server);

/// Checks the principal a server advertised (`protocol`/`server_id`@`realm`)
/// against `service`. `server` is the address the client connected to.
/// Returns the principal to ask a ticket for.
expected<std::string> check_server_principal(const kerberos_service& service,
                                             const std::string& advertised,
                                             const std::string& canonical_server_host);

} // namespace tony::hadoop
