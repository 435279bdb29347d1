#include "hadoop/yarn/nm_client.hpp"

#include "hadoop/rpc_codec.hpp"
#include "hadoop/yarn/convert.hpp"
#include "hadoop/yarn/node_clock.hpp"
#include "hadoop/yarn/protocols.hpp"

namespace tony::yarn {

namespace {

using hadoop::error;
using hadoop::error_code;

template <class Failures>
hadoop::expected<void> check_failures(const Failures& failed, const std::string& where,
                                      const char* what) {
  if (failed.empty())
    return {};
  auto& first = failed.Get(0);
  return error{error_code::remote,
               where + ": " + what + " " +
                   to_string(convert::from_proto(first.container_id())) +
                   " failed: " + convert::describe(first.exception()),
               first.exception().class_name(), first.exception().message(), false};
}

} // namespace

nm_client::nm_client(std::shared_ptr<hadoop::ipc_client> ipc,
                     std::shared_ptr<nm_token_cache> nm_tokens)
    : ipc_(std::move(ipc))
    , nm_tokens_(std::move(nm_tokens)) {
  // nop
}

hadoop::expected<hadoop::connection_params>
nm_client::target_for(const container& c) const {
  if (c.port <= 0 || c.port > 65535)
    return error{error_code::invalid_input,
                 "container " + c.id +
                     " has no NodeManager port (not a YARN container?)"};
  hadoop::endpoint nm{c.host, static_cast<uint16_t>(c.port)};
  auto node = hadoop::to_string(nm);
  auto tok = nm_tokens_->get(node);
  if (!tok)
    return error{error_code::not_found,
                 "no NMToken for node " + node + " (container " + c.id +
                     "): the RM sends it in the allocate response that grants the first "
                     "container on a node; was that response handled by this AM's "
                     "amrm_client?"};
  auto cid = parse_container_id(c.id);
  if (!cid)
    return cid.error();
  hadoop::connection_params target;
  target.address = std::move(nm);
  target.protocol = container_management_protocol;
  // YARN's own client connects as the attempt; with a token the NM takes the
  // user from the token anyway.
  target.user = to_string(cid->attempt);
  target.auth_token = std::move(*tok);
  target.server_kind = "NodeManager";
  target.address_key = "yarn.nodemanager.address";
  return target;
}

expected<void> nm_client::start_container(const launch_spec& spec,
                                          hadoop::deadline until) {
  container_launch launch;
  launch.resources = spec.resources;
  launch.env = spec.env;
  launch.commands = spec.command;
  launch.tokens = spec.tokens;
  launch.acls = spec.acls;
  return start_container(spec.target, launch, until);
}

expected<void> nm_client::start_container(const container& c,
                                          const container_launch& launch,
                                          hadoop::deadline until) {
  auto target = target_for(c);
  if (!target)
    return target.error();
  proto::StartContainersRequestProto req;
  auto* start = req.add_start_container_request();
  if (auto ok = convert::to_proto(launch, start->mutable_container_launch_context()); !ok)
    return ok.error().with_context("container " + c.id);
  if (!hadoop::parse_quietly(c.token, *start->mutable_container_token()))
    return error{error_code::invalid_input,
                 "container " + c.id +
                     " carries no valid container token (it must be the ContainerProto's "
                     "serialized container_token)"};
  auto rsp = ipc_->call<proto::StartContainersResponseProto>(*target, "startContainers",
                                                             req, until);
  if (!rsp)
    return rsp.error();
  auto where = hadoop::describe_server(*target);
  // A node whose clock is ahead refuses the token as expired: YARN says so
  // past the first line of its message, which describe() keeps.
  if (!rsp->failed_requests().empty())
    if (auto& first = rsp->failed_requests().Get(0);
        auto expired = parse_expired_token(first.exception().message()))
      return error{error_code::remote,
                   where + ": starting container " + c.id + " failed: " +
                       describe_clock_ahead(c.host, *expired, token_times(c.token)),
                   first.exception().class_name(), first.exception().message(), false};
  if (auto ok = check_failures(rsp->failed_requests(), where, "starting container"); !ok)
    return ok.error();
  for (auto& id : rsp->succeeded_requests())
    if (to_string(convert::from_proto(id)) == c.id)
      return {};
  return error{error_code::protocol,
               where + ": startContainers neither started nor rejected container " +
                   c.id};
}

expected<void> nm_client::stop_container(const container& c, hadoop::deadline until) {
  auto target = target_for(c);
  if (!target)
    return target.error();
  auto cid = parse_container_id(c.id);
  if (!cid)
    return cid.error();
  proto::StopContainersRequestProto req;
  convert::to_proto(*cid, req.add_container_id());
  auto rsp = ipc_->call<proto::StopContainersResponseProto>(*target, "stopContainers",
                                                            req, until);
  if (!rsp)
    return rsp.error();
  return check_failures(rsp->failed_requests(), hadoop::describe_server(*target),
                        "stopping container");
}

expected<container_status> nm_client::get_container_status(const container& c,
                                                           hadoop::deadline until) {
  auto target = target_for(c);
  if (!target)
    return target.error();
  auto cid = parse_container_id(c.id);
  if (!cid)
    return cid.error();
  proto::GetContainerStatusesRequestProto req;
  convert::to_proto(*cid, req.add_container_id());
  auto rsp = ipc_->call<proto::GetContainerStatusesResponseProto>(
      *target, "getContainerStatuses", req, until);
  if (!rsp)
    return rsp.error();
  auto where = hadoop::describe_server(*target);
  if (auto ok = check_failures(rsp->failed_requests(), where, "querying container"); !ok)
    return ok.error();
  for (auto& s : rsp->status())
    if (to_string(convert::from_proto(s.container_id())) == c.id)
      return convert::status_from_proto(s);
  return error{error_code::protocol,
               where + ": getContainerStatuses returned no status for " + c.id};
}

expected<std::vector<container_status>>
nm_client::get_container_statuses(const std::vector<container>& cs,
                                  hadoop::deadline until) {
  if (cs.empty())
    return std::vector<container_status>{};
  auto target = target_for(cs.front());
  if (!target)
    return target.error();
  proto::GetContainerStatusesRequestProto req;
  for (auto& c : cs) {
    auto cid = parse_container_id(c.id);
    if (!cid)
      return cid.error();
    convert::to_proto(*cid, req.add_container_id());
  }
  auto rsp = ipc_->call<proto::GetContainerStatusesResponseProto>(
      *target, "getContainerStatuses", req, until);
  if (!rsp)
    return rsp.error();
  std::vector<container_status> result;
  for (auto& s : rsp->status())
    result.push_back(convert::status_from_proto(s));
  return result;
}

} // namespace tony::yarn
