#include "hadoop/yarn/application_client.hpp"

#include "hadoop/client_security.hpp"
#include "hadoop/user.hpp"
#include "hadoop/yarn/convert.hpp"
#include "hadoop/yarn/protocols.hpp"

namespace tony::yarn {

application_client::application_client(std::shared_ptr<hadoop::ipc_client> ipc,
                                       hadoop::endpoint rm, std::string user)
    : application_client(std::move(ipc), std::vector<rm_peer>{rm_peer{"", std::move(rm)}},
                         std::move(user)) {
  // nop
}

application_client::application_client(std::shared_ptr<hadoop::ipc_client> ipc,
                                       std::vector<rm_peer> peers, std::string user,
                                       failover_options failover)
    : ipc_(std::move(ipc))
    , failover_(std::make_shared<rm_failover>(std::move(peers), failover)) {
  target_.protocol = application_client_protocol;
  target_.user = user.empty() ? hadoop::current_user() : std::move(user);
  target_.server_kind = "ResourceManager";
  target_.address_key = "yarn.resourcemanager.address";
}

hadoop::expected<application_client> application_client::from_configuration(
    std::shared_ptr<hadoop::ipc_client> ipc, const hadoop::configuration& conf,
    std::string user, std::shared_ptr<const hadoop::kerberos_credentials> kerberos) {
  auto rms = rm_peers(conf, "yarn.resourcemanager.address", 8032);
  if (!rms)
    return rms.error();
  auto security = hadoop::client_security_from(conf);
  if (!security)
    return security.error();
  application_client result{std::move(ipc), std::move(*rms), std::move(user)};
  result.target_.protection = security->protection;
  if (kerberos) {
    result.target_.user = kerberos->principal();
    result.target_.kerberos = std::move(kerberos);
    result.target_.kerberos_principal = hadoop::service_from(conf, rm_principal_key);
  }
  return result;
}

template <class Response>
hadoop::expected<Response>
application_client::call(const std::string& method,
                         const google::protobuf::MessageLite& req,
                         hadoop::deadline until) {
  return failover_->call<Response>(
      target_,
      [&](const hadoop::connection_params& target) {
        return ipc_->call<Response>(target, method, req, until);
      },
      until);
}

hadoop::expected<new_application>
application_client::get_new_application(hadoop::deadline until) {
  proto::GetNewApplicationRequestProto req;
  auto rsp = call<proto::GetNewApplicationResponseProto>("getNewApplication", req, until);
  if (!rsp)
    return rsp.error();
  if (!rsp->has_application_id())
    return hadoop::error{hadoop::error_code::protocol,
                         hadoop::describe_server(target()) +
                             ": getNewApplication returned no application id"};
  return new_application{convert::from_proto(rsp->application_id()),
                         convert::from_proto(rsp->maximumcapability())};
}

hadoop::expected<void>
application_client::submit_application(const submission_context& ctx,
                                       hadoop::deadline until) {
  proto::SubmitApplicationRequestProto req;
  if (auto ok = convert::to_proto(ctx, req.mutable_application_submission_context()); !ok)
    return ok.error().with_context("submitting " + to_string(ctx.id));
  auto rsp = call<proto::SubmitApplicationResponseProto>("submitApplication", req, until);
  if (!rsp)
    return rsp.error();
  return {};
}

hadoop::expected<application_report>
application_client::get_application_report(const application_id& id,
                                           hadoop::deadline until) {
  proto::GetApplicationReportRequestProto req;
  convert::to_proto(id, req.mutable_application_id());
  auto rsp =
      call<proto::GetApplicationReportResponseProto>("getApplicationReport", req, until);
  if (!rsp)
    return rsp.error();
  if (!rsp->has_application_report())
    return hadoop::error{hadoop::error_code::protocol,
                         hadoop::describe_server(target()) +
                             ": getApplicationReport returned no report for " +
                             to_string(id)};
  return convert::from_proto(rsp->application_report());
}

hadoop::expected<bool> application_client::force_kill_application(
    const application_id& id, const std::string& diagnostics, hadoop::deadline until) {
  proto::KillApplicationRequestProto req;
  convert::to_proto(id, req.mutable_application_id());
  if (!diagnostics.empty())
    req.set_diagnostics(diagnostics);
  auto rsp =
      call<proto::KillApplicationResponseProto>("forceKillApplication", req, until);
  if (!rsp)
    return rsp.error();
  return rsp->is_kill_completed();
}

hadoop::expected<std::vector<node_report>>
application_client::get_cluster_nodes(hadoop::deadline until) {
  proto::GetClusterNodesRequestProto req;
  auto rsp = call<proto::GetClusterNodesResponseProto>("getClusterNodes", req, until);
  if (!rsp)
    return rsp.error();
  std::vector<node_report> result;
  for (auto& node : rsp->nodereports())
    result.push_back(convert::from_proto(node));
  return result;
}

namespace {

queue_info queue_from_proto(const proto::QueueInfoProto& x) {
  queue_info result{x.queuename(), x.capacity(), x.maximumcapacity(), {}};
  for (auto& child : x.childqueues())
    result.children.push_back(queue_from_proto(child));
  return result;
}

} // namespace

hadoop::expected<queue_info> application_client::get_queue_tree(const std::string& root,
                                                                hadoop::deadline until) {
  proto::GetQueueInfoRequestProto req;
  req.set_queuename(root);
  req.set_includeapplications(false);
  req.set_includechildqueues(true);
  req.set_recursive(true);
  auto rsp = call<proto::GetQueueInfoResponseProto>("getQueueInfo", req, until);
  if (!rsp)
    return rsp.error();
  return queue_from_proto(rsp->queueinfo());
}

hadoop::expected<cluster_metrics>
application_client::get_cluster_metrics(hadoop::deadline until) {
  proto::GetClusterMetricsRequestProto req;
  auto rsp = call<proto::GetClusterMetricsResponseProto>("getClusterMetrics", req, until);
  if (!rsp)
    return rsp.error();
  auto& m = rsp->cluster_metrics();
  cluster_metrics result;
  result.num_node_managers = m.num_node_managers();
  result.num_active = m.num_active_nms();
  result.num_lost = m.num_lost_nms();
  result.num_unhealthy = m.num_unhealthy_nms();
  result.num_decommissioned = m.num_decommissioned_nms();
  result.num_rebooted = m.num_rebooted_nms();
  return result;
}

} // namespace tony::yarn
