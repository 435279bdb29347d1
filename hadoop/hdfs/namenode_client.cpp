#include "hadoop/hdfs/namenode_client.hpp"

#include "hadoop/hdfs/delegation_token.hpp"
#include "hadoop/hdfs/proto/hdfs.pb.h"

namespace tony::hdfs {

namespace {

void to_proto(const hadoop::token& x, tony::hadoop::proto::TokenProto* out) {
  out->set_identifier(x.identifier);
  out->set_password(x.password);
  out->set_kind(x.kind);
  out->set_service(x.service);
}

} // namespace

namenode_client::namenode_client(
    std::shared_ptr<hadoop::ipc_client> ipc, std::string uri, hadoop::endpoint address,
    hadoop::kerberos_service principal, hadoop::qop_set protection,
    std::shared_ptr<const hadoop::kerberos_credentials> kerberos, std::string proxy_user)
    : ipc_(std::move(ipc))
    , uri_(std::move(uri)) {
  target_.address = std::move(address);
  target_.protocol = client_protocol;
  target_.server_kind = "NameNode";
  // fs.defaultFS or a [security] file_systems entry named it.
  target_.address_key = uri_;
  target_.protection = protection;
  target_.kerberos_principal = std::move(principal);
  target_.proxy_user = std::move(proxy_user);
  if (kerberos) {
    target_.user = kerberos->principal();
    target_.kerberos = std::move(kerberos);
  }
}

hadoop::expected<hadoop::token>
namenode_client::get_delegation_token(const std::string& renewer,
                                      hadoop::deadline until) {
  if (!target_.kerberos)
    return hadoop::error{hadoop::error_code::auth,
                         "a NameNode issues delegation tokens only to a Kerberos login"};
  proto::GetDelegationTokenRequestProto req;
  req.set_renewer(renewer);
  auto rsp = ipc_->call<proto::GetDelegationTokenResponseProto>(
      target_, "getDelegationToken", req, until);
  if (!rsp)
    return rsp.error();
  if (!rsp->has_token())
    return hadoop::error{hadoop::error_code::protocol,
                         hadoop::describe_server(target_) +
                             ": getDelegationToken returned no token (is security "
                             "off on this NameNode?)"};
  auto service = token_service(target_.address);
  if (!service)
    return service.error();
  auto& t = rsp->token();
  // The NameNode leaves the service empty; the client files the token
  // under the NameNode's address (DFSClient.getDelegationToken).
  return hadoop::token{t.identifier(), t.password(),
                       t.kind().empty() ? delegation_token_kind : t.kind(), *service};
}

hadoop::expected<int64_t>
namenode_client::renew_delegation_token(const hadoop::token& x, hadoop::deadline until) {
  proto::RenewDelegationTokenRequestProto req;
  to_proto(x, req.mutable_token());
  auto rsp = ipc_->call<proto::RenewDelegationTokenResponseProto>(
      target_, "renewDelegationToken", req, until);
  if (!rsp)
    return rsp.error();
  return static_cast<int64_t>(rsp->newexpirytime());
}

hadoop::expected<void> namenode_client::cancel_delegation_token(const hadoop::token& x,
                                                                hadoop::deadline until) {
  proto::CancelDelegationTokenRequestProto req;
  to_proto(x, req.mutable_token());
  auto rsp = ipc_->call<proto::CancelDelegationTokenResponseProto>(
      target_, "cancelDelegationToken", req, until);
  if (!rsp)
    return rsp.error();
  return {};
}

} // namespace tony::hdfs
