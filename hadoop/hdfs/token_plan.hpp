#pragma once

// Which HDFS delegation tokens a job on a Kerberos cluster needs, and
// getting them (MapReduce's TokenCache.obtainTokensForNamenodes, Spark's
// HadoopFSDelegationTokenProvider):
//
//   token_plan      the NameNodes (fs.defaultFS when it is HDFS, plus
//                   [security] file_systems), each with its principal, the
//                   renewer (the ResourceManager's principal: the RM renews
//                   the tokens of a submitted application until their max
//                   date and cancels them at its end) and the QOPs accepted
//   obtain_tokens   one token per NameNode, over ClientNamenodeProtocol with
//                   SASL GSSAPI, filed under the NameNode's service
//   renewal_interval how long a fresh token lives before it must be renewed
//                   (a probe token the caller renews itself, then cancels):
//                   when a keytab's owner must get the next tokens
//
// The plan travels from tony-submit to the AM as JSON (renewal_plan), so an
// AM holding a keytab gets fresh tokens the same way (am/token_renewer.hpp).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "hadoop/configuration.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/deadline.hpp"
#include "hadoop/endpoint.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/hdfs/delegation_token.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/sasl_qop.hpp"
#include "hadoop/server_principal.hpp"

namespace tony::hdfs {

/// A NameNode a job gets a delegation token from.
struct namenode_target {
  std::string uri;          // "hdfs://host:port" or "hdfs://<nameservice>", as named
  hadoop::endpoint address; // its RPC address (port 8020 when the URI has none)
  hadoop::kerberos_service principal; // dfs.namenode.kerberos.principal (+ .pattern)
  /// An HA nameservice (dfs.nameservices): its name, and the RPC addresses
  /// of its NameNodes in dfs.ha.namenodes order (`address` is the first).
  /// Tokens come from whichever is active and are filed under
  /// "ha-hdfs:<nameservice>", as Hadoop's DFSClient files them.
  std::string nameservice;
  std::vector<hadoop::endpoint> ha_addresses;
};

struct token_plan {
  std::vector<namenode_target> namenodes;
  /// Who may renew the tokens: the ResourceManager's principal.
  std::string renewer;
  /// hadoop.rpc.protection of the client configuration.
  hadoop::qop_set protection = hadoop::qop_set::all();
};

/// The plan for a job: fs.defaultFS if it is hdfs://, then each of
/// `file_systems` ("hdfs://host[:port]" or an HA nameservice), a NameNode
/// named twice (same host and port) once. invalid_input when
/// yarn.resourcemanager.principal is unset (nobody could renew the tokens),
/// a URI is not hdfs://host[:port], or a nameservice lacks its NameNodes'
/// ids or RPC addresses (dfs.ha.namenodes.<ns>,
/// dfs.namenode.rpc-address.<ns>.<id>).
hadoop::expected<token_plan> plan_tokens(const hadoop::configuration& conf,
                                         const std::vector<std::string>& file_systems);

/// A token got, with what its identifier says.
struct obtained_token {
  std::string uri; // the NameNode's
  hadoop::token token;
  token_identity identity;
};

/// One token from every NameNode of `plan` (of a nameservice, from its
/// active NameNode: a standby or unreachable one is passed over), as
/// `kerberos`, or for `proxy_user` when it is not empty (the NameNode checks
/// that `kerberos` may act for it). The first failure ends it, its message
/// naming the NameNode (of a nameservice, each one and why).
hadoop::expected<std::vector<obtained_token>>
obtain_tokens(const std::shared_ptr<hadoop::ipc_client>& ipc, const token_plan& plan,
              const std::shared_ptr<const hadoop::kerberos_credentials>& kerberos,
              hadoop::deadline until, const std::string& proxy_user = {});

/// The tokens as Hadoop credentials, each under its service as alias (as
/// Hadoop's Credentials.addToken does).
hadoop::credentials to_credentials(const std::vector<obtained_token>& tokens);

/// The renew interval of the first NameNode of `plan`: a token issued to
/// `kerberos` itself as renewer, renewed at once (its new expiry minus its
/// issue date), then cancelled.
hadoop::expected<std::chrono::milliseconds>
renewal_interval(const std::shared_ptr<hadoop::ipc_client>& ipc, const token_plan& plan,
                 const std::shared_ptr<const hadoop::kerberos_credentials>& kerberos,
                 hadoop::deadline until);

/// When to get the next tokens after getting `tokens` at `now_ms`: at
/// `ratio` of the time until the first of them expires (its issue date plus
/// `interval`, or its max date if earlier), as Spark's renewal ratio; at
/// least `floor` from now.
std::chrono::milliseconds
refresh_delay(const std::vector<obtained_token>& tokens,
              std::chrono::milliseconds interval, int64_t now_ms, double ratio = 0.75,
              std::chrono::milliseconds floor = std::chrono::seconds(5));

/// What an AM needs to get new tokens itself: the plan, and the keytab
/// login (the keytab is a local resource of the AM's container).
struct renewal_plan {
  token_plan tokens;
  std::string principal;
  std::string keytab; // relative to the AM's working directory
};

std::string to_json(const renewal_plan& x);

/// invalid_input naming what is missing or malformed.
hadoop::expected<renewal_plan> renewal_plan_from_json(const std::string& text);

/// The HDFS delegation tokens in `creds`, in file order.
std::vector<hadoop::token> hdfs_tokens(const hadoop::credentials& creds);

} // namespace tony::hdfs
