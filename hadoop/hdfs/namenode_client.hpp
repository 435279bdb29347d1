#pragma once

// The client side of the few ClientNamenodeProtocol calls tony makes: HDFS
// delegation tokens (get, renew, cancel). A NameNode issues, renews and
// cancels them only for a caller that authenticated with Kerberos, so the
// client always speaks SASL GSSAPI, checking the NameNode's principal
// against dfs.namenode.kerberos.principal (or its .pattern) as Hadoop's own
// client does. Blocking and thread-safe; every call takes a deadline.

#include <cstdint>
#include <memory>
#include <string>

#include "hadoop/connection_params.hpp"
#include "hadoop/deadline.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/sasl_qop.hpp"
#include "hadoop/server_principal.hpp"
#include "hadoop/token.hpp"

namespace tony::hdfs {

/// The NameNode's client protocol (HdfsConstants.CLIENT_NAMENODE_PROTOCOL_NAME).
constexpr const char* client_protocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol";

/// The NameNode's Kerberos principal (e.g. nn/_HOST@EXAMPLE.COM).
constexpr const char* namenode_principal_key = "dfs.namenode.kerberos.principal";

class namenode_client {
public:
  /// A client of the NameNode at `address`, which `uri` ("hdfs://nn:8020")
  /// names in messages, logged in as `kerberos`, accepting the QOPs in
  /// `protection`, expecting the server principal `principal`.
  namenode_client(std::shared_ptr<hadoop::ipc_client> ipc, std::string uri,
                  hadoop::endpoint address, hadoop::kerberos_service principal,
                  hadoop::qop_set protection,
                  std::shared_ptr<const hadoop::kerberos_credentials> kerberos,
                  std::string proxy_user = {});

  /// How long one connect to the NameNode may take, refused connects tried
  /// again within it (default: the ipc_client's, 20 s). An HA nameservice's
  /// NameNodes get a short one: its rounds try the other instead.
  void set_connect_timeout(std::chrono::milliseconds t) { target_.connect_timeout = t; }

  /// A new HDFS delegation token that `renewer` may renew (a principal; the
  /// NameNode keeps its short name), filed under the NameNode's service
  /// (token_service) as Hadoop's DFSClient files it.
  hadoop::expected<hadoop::token> get_delegation_token(const std::string& renewer,
                                                       hadoop::deadline until);

  /// Renews `x` (the caller must be its renewer): its new expiry, in ms
  /// since the epoch.
  hadoop::expected<int64_t> renew_delegation_token(const hadoop::token& x,
                                                   hadoop::deadline until);

  /// Cancels `x` (its owner or renewer may).
  hadoop::expected<void> cancel_delegation_token(const hadoop::token& x,
                                                 hadoop::deadline until);

  const std::string& uri() const noexcept { return uri_; }

private:
  std::shared_ptr<hadoop::ipc_client> ipc_;
  std::string uri_;
  hadoop::connection_params target_;
};

} // namespace tony::hdfs
