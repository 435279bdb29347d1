#pragma once

// Who a connection is for and how it behaves. Connections are pooled per
// (address, protocol, user, proxy user, token, Kerberos principal, protection): two
// calls with equal params share one.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "hadoop/endpoint.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/rpc_codec.hpp"
#include "hadoop/sasl_qop.hpp"
#include "hadoop/server_principal.hpp"
#include "hadoop/token.hpp"

namespace tony::hadoop {

struct connection_params {
  endpoint address;
  /// The protocol's Java interface, e.g.
  /// "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB": the
  /// connection context's protocol and every call's declaring class.
  std::string protocol;
  /// The effective user for SIMPLE authentication.
  std::string user;
  /// The user this connection acts for (Hadoop's proxy users), if any: the
  /// connection context names it as the effective user and the server
  /// checks the authenticated user (`user`, or the Kerberos principal)
  /// against its hadoop.proxyuser.<user>.* settings. Not with a token: a
  /// token carries its own user.
  std::string proxy_user;
  /// With a token the connection authenticates with SASL DIGEST-MD5
  /// (TOKEN); with Kerberos credentials with SASL GSSAPI (KERBEROS);
  /// without either it uses SIMPLE (auth protocol NONE).
  std::optional<token> auth_token;
  /// The user's Kerberos credentials (kerberos_credentials::login).
  std::shared_ptr<const kerberos_credentials> kerberos;
  /// Which principal the server must have when it authenticates with
  /// Kerberos (checked before a ticket is asked for).
  kerberos_service kerberos_principal;
  /// The QOPs this client accepts (hadoop.rpc.protection of its
  /// configuration); by default whatever the server asks for.
  qop_set protection = qop_set::all();
  /// How messages name the server: "ResourceManager", "NodeManager".
  std::string server_kind = "server";
  /// The configuration key holding the address, named in connect errors.
  std::string address_key;
  /// When positive, replaces connection_options::connect_timeout for this
  /// server: with ResourceManager HA a refused RM is left for the next one
  /// after a short budget instead of the client's whole retry time.
  std::chrono::milliseconds connect_timeout{0};
};

struct connection_options {
  /// Total time spent retrying a refused or unreachable server.
  std::chrono::milliseconds connect_timeout{20'000};
  /// Back-off between connect attempts: starts here, doubles, capped below.
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{2'000};
  /// A ping is sent when nothing was written for this long.
  std::chrono::milliseconds ping_interval{30'000};
  /// A connection without calls for this long is closed (a later call
  /// reconnects).
  std::chrono::milliseconds max_idle{60'000};
  /// Once a response frame started, the rest must arrive within this.
  std::chrono::milliseconds frame_timeout{60'000};
  uint32_t max_response_bytes = default_max_response_bytes;
  /// Accept SIMPLE when the server offers it instead of TOKEN or KERBEROS
  /// (Kerberos clients turn it off unless the configuration sets
  /// ipc.client.fallback-to-simple-auth-allowed, as Hadoop does).
  bool allow_simple_fallback = true;
};

/// "ResourceManager at 127.0.0.1:8032".
std::string describe_server(const connection_params& x);

} // namespace tony::hadoop
