#pragma once

// The few HTTP calls tony makes to Hadoop's web endpoints (libcurl, every
// call bounded): WebHDFS for staging uploads, the history dir's listing and
// reads, and a NodeManager's web services for task logs. One place for the
// HTTP plumbing, for how a call authenticates, and for turning a
// NameNode's RemoteException into words.
//
// How a call authenticates (http_auth), as Hadoop's own clients do:
//
//   SIMPLE       `user.name=<user>` on WebHDFS calls (an insecure cluster)
//   SPNEGO       HTTP Negotiate with the user's Kerberos login (tony-submit
//                on a Kerberos cluster); a keytab login's private ticket
//                cache is handed to libcurl's GSSAPI for the call
//   delegation   `delegation=<token URL string>` on WebHDFS calls (the AM:
//                it holds the job's HDFS delegation tokens, no Kerberos)
//
// HTTPS is verified against `ca_file` when set, else the system's CA
// bundle; verification is never turned off. A NameNode's redirect to a
// DataNode carries its own `delegation` parameter and needs no SPNEGO.

#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "hadoop/configuration.hpp"
#include "hadoop/kerberos.hpp"

namespace tony::webhdfs {

struct http_auth {
  /// SIMPLE: sent as `user.name` on WebHDFS calls.
  std::string user;
  /// SPNEGO with this login (wins over `user`).
  std::shared_ptr<const hadoop::kerberos_credentials> kerberos;
  /// An HDFS delegation token's URL string (wins over both).
  std::string delegation;
  /// A PEM file of the CAs HTTPS servers are checked against; empty: the
  /// system's bundle.
  std::string ca_file;
};

/// A NameNode's WebHDFS endpoint and how to talk to it.
struct namenode_http {
  /// "http://host:port" or "https://host:port" (a bare "host:port" is
  /// http, as older configurations and TONY_WEBHDFS values write it).
  std::string base;
  http_auth auth;
};

struct response {
  long status = 0;
  std::string body;
  std::string location; // the Location header (CREATE's redirect)
};

/// One HTTP call authenticated as `auth` says (SPNEGO when it has a
/// Kerberos login; the WebHDFS parameters are op_url's). `upload` names a
/// file sent as the body; with `follow`, redirects (NameNode -> DataNode)
/// are followed.
caf::expected<response> call(const std::string& method, const std::string& url,
                             const http_auth& auth, const std::string& upload = {},
                             bool follow = false);

/// "<base>/webhdfs/v1<path>?op=<op>" plus the parameter that authenticates
/// it: `delegation=`, nothing (SPNEGO) or `user.name=`.
std::string op_url(const namenode_http& nn, const std::string& path,
                   const std::string& op);

/// "http://host:port" for a bare "host:port", else `address` unchanged.
std::string base_url(const std::string& address);

/// The WebHDFS address of the NameNode on `host` as `conf` configures it:
/// with dfs.http.policy HTTPS_ONLY "https://" + dfs.namenode.https-address
/// (default port 9871), else dfs.namenode.http-address (default port 9870)
/// as "host:port". A wildcard host is replaced by `host`.
std::string namenode_address(const hadoop::configuration& conf, const std::string& host);

/// The message of a WebHDFS RemoteException body, or the body's start.
std::string remote_message(const std::string& body);

} // namespace tony::webhdfs
