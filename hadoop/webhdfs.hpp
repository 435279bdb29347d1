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

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hadoop/configuration.hpp"
#include "hadoop/kerberos.hpp"
#include "messages/error.hpp"

namespace tony::webhdfs {

struct http_auth {
  /// SIMPLE: sent as `user.name` on WebHDFS calls.
  std::string user;
  /// SPNEGO with this login (wins over `user`).
  std::shared_ptr<const hadoop::kerberos_credentials> kerberos;
  /// The user the calls act for (Hadoop's proxy users; `doas`), the
  /// authenticated user being `user` or the Kerberos login; empty: none.
  std::string proxy_user;
  /// An HDFS delegation token's URL string (wins over both).
  std::string delegation;
  /// A PEM file of the CAs HTTPS servers are checked against; empty: the
  /// system's bundle.
  std::string ca_file;
};

/// A NameNode's WebHDFS endpoint and how to talk to it.
struct namenode_http {
  /// "http://host:port" or "https://host:port" (a bare "host:port" is
  /// http, as older configurations and TONY_WEBHDFS values write it). The
  /// NameNodes of an HA nameservice are a comma-separated list of these
  /// (webhdfs_address), tried in order by call_op.
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
expected<response> call(const std::string& method, const std::string& url,
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

/// The WebHDFS endpoints of the file system whose hdfs:// URI has
/// `authority` (host[:port], or a nameservice), in the order to try them.
/// A nameservice (hdfs::is_nameservice) whose
/// dfs.client.failover.proxy.provider.<ns> is set (as Hadoop's clients
/// require) gives each NameNode of dfs.ha.namenodes.<ns>, in that order
/// (hdfs::namenodes_of): with dfs.http.policy HTTPS_ONLY
/// "https://" + dfs.namenode.https-address.<ns>.<id>, else
/// dfs.namenode.http-address.<ns>.<id> (no default ports: a nameservice
/// names them). Anything else is {namenode_address(conf, host)}. Fails
/// (invalid_config, exit 2) naming the key a nameservice lacks.
expected<std::vector<std::string>> namenode_addresses(const hadoop::configuration& conf,
                                                      const std::string& authority);

/// True when a WebHDFS answer says the NameNode is a standby: a
/// RemoteException whose exception is StandbyException (HTTP 403).
bool is_standby(const response& r);

/// True when a WebHDFS answer says to ask again: a RemoteException that is
/// or wraps Hadoop's RetriableException, as a NameNode still becoming active
/// answers a delegation token it has not yet read from the shared edits
/// ("Failed to obtain user group information: ...RetriableException:
/// ...InvalidToken: ... can't be found in cache", HTTP 403).
bool is_retriable(const response& r);

/// One WebHDFS call to whichever of `bases` is active: starting with
/// bases[*active], a NameNode that does not answer (connection refused,
/// timeout) or answers as a standby is left for the next; the one that
/// answers otherwise is remembered in *active for later calls. After a
/// round where none answered, a pause (200 ms, doubling to 2 s) and another
/// round, `rounds` in all; the error then names every NameNode and what it
/// said. `url_of` makes the call's URL from a base.
expected<response>
call_active(const std::vector<std::string>& bases, std::size_t* active,
            const std::function<std::string(const std::string& base)>& url_of,
            const std::string& method, const http_auth& auth,
            const std::string& upload = {}, bool follow = false, int rounds = 6);

/// The WebHDFS address of the file system whose hdfs:// URI has
/// `authority`: namenode_addresses joined by commas, the form
/// namenode_http::base, TONY_WEBHDFS and the AM's state file carry.
expected<std::string> webhdfs_address(const hadoop::configuration& conf,
                                      const std::string& authority);

/// The NameNodes of a namenode_http::base, in order.
std::vector<std::string> bases_of(const std::string& base);

/// How many rounds call_op gives an HA nameservice's NameNodes: the pauses
/// between them (200 ms doubling to 2 s, about 13 s in all) outlast an
/// automatic failover after the active NameNode dies.
constexpr int failover_rounds = 10;

/// One WebHDFS call of `op` (with its parameters: "DELETE&recursive=true")
/// on `path` at `nn`: to its NameNode, or for an HA list to whichever
/// answers as active (call_active, failover_rounds), starting with the one
/// that last did in this process. Within a minute of a call that found
/// none answering, a call gives each NameNode one try: a process's many
/// calls then fail in about the time of one.
expected<response> call_op(const namenode_http& nn, const std::string& method,
                           const std::string& path, const std::string& op,
                           const std::string& upload = {}, bool follow = false);

/// The message of a WebHDFS RemoteException body, or the body's start.
std::string remote_message(const std::string& body);

} // namespace tony::webhdfs
