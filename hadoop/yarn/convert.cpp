#include "hadoop/yarn/convert.hpp"

#include <algorithm>

#include "hadoop/yarn/protocols.hpp"

namespace tony::yarn::convert {

namespace {

using hadoop::error;
using hadoop::error_code;

constexpr const char* node_states[] = {
    "UNKNOWN", "NEW",      "RUNNING",         "UNHEALTHY", "DECOMMISSIONED",
    "LOST",    "REBOOTED", "DECOMMISSIONING", "SHUTDOWN"};

std::string first_line(const std::string& x) {
  return x.substr(0, x.find('\n'));
}

} // namespace

void to_proto(const application_id& x, proto::ApplicationIdProto* out) {
  out->set_id(x.id);
  out->set_cluster_timestamp(x.cluster_timestamp);
}

application_id from_proto(const proto::ApplicationIdProto& x) {
  return application_id{x.cluster_timestamp(), x.id()};
}

void to_proto(const application_attempt_id& x, proto::ApplicationAttemptIdProto* out) {
  to_proto(x.app, out->mutable_application_id());
  out->set_attemptid(x.attempt);
}

application_attempt_id from_proto(const proto::ApplicationAttemptIdProto& x) {
  return application_attempt_id{from_proto(x.application_id()), x.attemptid()};
}

void to_proto(const container_id& x, proto::ContainerIdProto* out) {
  // app_id is redundant with app_attempt_id but YARN still sets both.
  to_proto(x.attempt.app, out->mutable_app_id());
  to_proto(x.attempt, out->mutable_app_attempt_id());
  out->set_id(x.id);
}

container_id from_proto(const proto::ContainerIdProto& x) {
  container_id result;
  result.attempt = from_proto(x.app_attempt_id());
  if (!x.app_attempt_id().has_application_id())
    result.attempt.app = from_proto(x.app_id());
  result.id = x.id();
  return result;
}

void to_proto(const resource& x, proto::ResourceProto* out) {
  out->set_memory(x.memory_mb);
  out->set_virtual_cores(x.vcores);
  if (x.gpus > 0) {
    auto* gpu = out->add_resource_value_map();
    gpu->set_key(gpu_resource);
    gpu->set_value(x.gpus);
    gpu->set_units("");
    gpu->set_type(0); // COUNTABLE
  }
}

resource from_proto(const proto::ResourceProto& x) {
  resource result;
  result.memory_mb = x.memory();
  result.vcores = x.virtual_cores();
  for (auto& info : x.resource_value_map())
    if (info.key() == gpu_resource)
      result.gpus = static_cast<int32_t>(info.value());
  return result;
}

void to_proto(const hadoop::token& x, hadoop::proto::TokenProto* out) {
  out->set_identifier(x.identifier);
  out->set_password(x.password);
  out->set_kind(x.kind);
  out->set_service(x.service);
}

hadoop::token from_proto(const hadoop::proto::TokenProto& x) {
  return hadoop::token{x.identifier(), x.password(), x.kind(), x.service()};
}

expected<void> to_proto(const std::string& url, proto::URLProto* out) {
  auto invalid = [&](const std::string& why) {
    return error{error_code::invalid_input,
                 "invalid resource URL '" + url + "': " + why +
                     " (expected scheme://host:port/path or file:///path)"};
  };
  auto sep = url.find("://");
  if (sep == std::string::npos || sep == 0)
    return invalid("no scheme");
  out->set_scheme(url.substr(0, sep));
  auto rest = url.substr(sep + 3);
  auto slash = rest.find('/');
  if (slash == std::string::npos)
    return invalid("no path");
  auto authority = rest.substr(0, slash);
  out->set_file(rest.substr(slash));
  // YARN builds a java.net.URI from these fields; -1 means "no port".
  out->set_port(-1);
  if (!authority.empty()) {
    auto at = authority.rfind('@');
    if (at != std::string::npos) {
      out->set_userinfo(authority.substr(0, at));
      authority = authority.substr(at + 1);
    }
    auto ep = hadoop::parse_endpoint(authority, -1);
    if (!ep) {
      // A host without a port.
      if (authority.find(':') != std::string::npos && authority.front() != '[')
        return invalid(ep.error().message());
      out->set_host(authority);
    } else {
      out->set_host(ep->host);
      out->set_port(ep->port);
    }
  }
  return {};
}

expected<void> to_proto(const local_resource& x, proto::LocalResourceProto* out) {
  if (auto ok = to_proto(x.url, out->mutable_resource()); !ok)
    return ok.error();
  out->set_size(x.size);
  out->set_timestamp(x.timestamp);
  out->set_type(x.archive ? 1 : 2);
  if (x.visibility == "PUBLIC")
    out->set_visibility(1);
  else if (x.visibility == "PRIVATE")
    out->set_visibility(2);
  else if (x.visibility == "APPLICATION" || x.visibility.empty())
    out->set_visibility(3);
  else
    return error{error_code::invalid_input,
                 "resource '" + x.name + "': unknown visibility '" + x.visibility +
                     "' (expected PUBLIC, PRIVATE or APPLICATION)"};
  return {};
}

expected<void> to_proto(const container_launch& x,
                        proto::ContainerLaunchContextProto* out) {
  for (auto& res : x.resources) {
    auto* entry = out->add_localresources();
    entry->set_key(res.name);
    if (auto ok = to_proto(res, entry->mutable_value()); !ok)
      return ok.error();
  }
  if (!x.tokens.empty())
    out->set_tokens(x.tokens);
  for (auto& [key, value] : x.env) {
    auto* entry = out->add_environment();
    entry->set_key(key);
    entry->set_value(value);
  }
  for (auto& cmd : x.commands)
    out->add_command(cmd);
  for (auto& [access, acl] : x.acls) {
    auto* entry = out->add_application_acls();
    if (access == "VIEW_APP")
      entry->set_accesstype(proto::APPACCESS_VIEW_APP);
    else if (access == "MODIFY_APP")
      entry->set_accesstype(proto::APPACCESS_MODIFY_APP);
    else
      return error{error_code::invalid_input, "unknown application access type '" +
                                                  access +
                                                  "' (expected VIEW_APP or MODIFY_APP)"};
    entry->set_acl(acl);
  }
  return {};
}

void to_proto(const container_ask& x, proto::ResourceRequestProto* out) {
  out->mutable_priority()->set_priority(x.priority);
  out->set_resource_name("*");
  to_proto(x.capability, out->mutable_capability());
  out->set_num_containers(x.count);
  out->set_relax_locality(true);
  if (!x.node_label.empty())
    out->set_node_label_expression(x.node_label);
}

void add_asks(const container_ask& x, proto::AllocateRequestProto* out, locality how) {
  to_proto(x, out->add_ask());
  if (!x.node_label.empty())
    return;
  // Strict: only node-local grants, each node up to its share (YARN reads
  // relaxLocality=false on the rack and "*" asks so). A capped ask is
  // always strict: a relaxed one would let a node take more than its cap.
  bool capped = x.max_per_node > 0;
  bool strict = (how == locality::strict || capped) && !x.nodes.empty();
  if (strict)
    out->mutable_ask(out->ask_size() - 1)->set_relax_locality(false);
  // Spread: each node is asked for its share, rounded up, not for the
  // whole gang (the first node to heartbeat would take it all); the "*" ask
  // keeps the total, so the scheduler relaxes to any node for the rest.
  // Pack: each node the whole count. Capped: at most the cap per node,
  // the share while strict spreading, the cap itself once relaxed.
  auto k = static_cast<int32_t>(x.nodes.size());
  auto share = k > 0 && x.count > 0 && !x.pack ? (x.count + k - 1) / k : x.count;
  if (capped)
    share = std::min(how == locality::strict ? share : x.count, x.max_per_node);
  for (auto& name : x.nodes) {
    auto* node = out->add_ask();
    to_proto(x, node);
    node->set_resource_name(name);
    node->set_num_containers(share);
  }
  for (auto& rack : x.racks) {
    auto* req = out->add_ask();
    to_proto(x, req);
    req->set_resource_name(rack);
    if (strict)
      req->set_relax_locality(false);
  }
}

void add_asks(container_ask x, const std::vector<node_place>& places,
              proto::AllocateRequestProto* out) {
  x.nodes.clear();
  x.racks.clear();
  for (auto& place : places) {
    x.nodes.push_back(place.host);
    if (!place.rack.empty() &&
        std::find(x.racks.begin(), x.racks.end(), place.rack) == x.racks.end())
      x.racks.push_back(place.rack);
  }
  add_asks(x, out);
}

bool by_scheduling_request(const container_ask& x) {
  return x.max_per_node > 0 && x.node_label.empty();
}

void to_proto(const container_ask& x, proto::SchedulingRequestProto* out) {
  // The priority names the type when containers are granted (as for
  // ResourceRequests); the allocation id keeps the request's scheduler key
  // apart from any ResourceRequest's (-1).
  out->set_allocationrequestid(x.priority);
  out->mutable_priority()->set_priority(x.priority);
  // Set, not left to its default: the RM compares a changed request with
  // the one it holds field by field, and a missing execution type there is
  // a NullPointerException that fails the allocate.
  auto* execution = out->mutable_executiontype();
  execution->set_execution_type(1); // GUARANTEED, the only kind allowed
  execution->set_enforce_execution_type(false);
  out->add_allocationtags(x.task_type);
  auto* sizing = out->mutable_resourcesizing();
  sizing->set_numallocations(std::max(x.count, 0));
  to_proto(x.capability, sizing->mutable_resources());
  auto* simple = out->mutable_placementconstraint()->mutable_simpleconstraint();
  simple->set_scope("node");
  simple->set_mincardinality(0);
  // YARN counts the tags on a node before placing one more there.
  simple->set_maxcardinality(std::max(x.max_per_node - 1, 0));
  auto* target = simple->add_targetexpressions();
  target->set_targettype(2);     // ALLOCATION_TAG
  target->set_targetkey("self"); // this application's containers
  target->add_targetvalues(x.task_type);
}

container container_from_proto(const proto::ContainerProto& x) {
  container result;
  result.id = to_string(from_proto(x.id()));
  result.host = x.nodeid().host();
  result.port = x.nodeid().port();
  result.http_address = x.node_http_address();
  result.capability = from_proto(x.resource());
  result.priority = x.priority().priority();
  if (x.has_container_token())
    result.token = x.container_token().SerializeAsString();
  return result;
}

container_completion completion_from_proto(const proto::ContainerStatusProto& x) {
  return container_completion{to_string(from_proto(x.container_id())), x.exit_status(),
                              x.diagnostics()};
}

container_status status_from_proto(const proto::ContainerStatusProto& x) {
  container_status result;
  result.container_id = to_string(from_proto(x.container_id()));
  switch (x.state()) {
  case 1:
    result.state = "NEW";
    break;
  case 2:
    result.state = "RUNNING";
    break;
  case 3:
    result.state = "COMPLETE";
    break;
  default:
    result.state = "UNKNOWN";
  }
  if (x.has_container_sub_state()) {
    static const char* const sub_states[] = {"SCHEDULED", "RUNNING", "PAUSED",
                                             "COMPLETING", "DONE"};
    auto n = x.container_sub_state();
    result.sub_state = n >= 1 && n <= 5 ? sub_states[n - 1] : "UNKNOWN";
  }
  result.exit_status = x.exit_status();
  result.diagnostics = x.diagnostics();
  return result;
}

node_report from_proto(const proto::NodeReportProto& x) {
  node_report result;
  result.host = x.nodeid().host();
  result.port = x.nodeid().port();
  result.http_address = x.httpaddress();
  result.rack = x.rackname();
  result.capability = from_proto(x.capability());
  result.used = from_proto(x.used());
  result.num_containers = x.numcontainers();
  auto state = x.node_state();
  result.state = state >= 1 && state <= 8 ? node_states[state] : node_states[0];
  result.health_report = x.health_report();
  result.labels.assign(x.node_labels().begin(), x.node_labels().end());
  return result;
}

application_report from_proto(const proto::ApplicationReportProto& x) {
  application_report result;
  result.id = from_proto(x.applicationid());
  result.user = x.user();
  result.queue = x.queue();
  result.name = x.name();
  result.host = x.host();
  result.rpc_port = x.rpc_port();
  auto state = x.yarn_application_state();
  result.state = state >= 1 && state <= 8 ? static_cast<application_state>(state)
                                          : application_state::unknown;
  auto final = x.final_application_status();
  result.final = final >= 0 && final <= 4 ? static_cast<final_status>(final)
                                          : final_status::undefined;
  result.tracking_url = x.trackingurl();
  result.original_tracking_url = x.originaltrackingurl();
  result.diagnostics = x.diagnostics();
  result.start_time = x.starttime();
  result.finish_time = x.finishtime();
  result.progress = x.progress();
  result.application_type = x.applicationtype();
  if (x.has_currentapplicationattemptid())
    result.current_attempt = from_proto(x.currentapplicationattemptid());
  if (x.has_am_rm_token())
    result.am_rm_token = from_proto(x.am_rm_token());
  result.unmanaged = x.unmanaged_application();
  if (x.has_log_aggregation_status() && x.log_aggregation_status() >= 1 &&
      x.log_aggregation_status() <= 7)
    result.log_aggregation =
        static_cast<log_aggregation_state>(x.log_aggregation_status());
  return result;
}

expected<void> to_proto(const submission_context& x,
                        proto::ApplicationSubmissionContextProto* out) {
  to_proto(x.id, out->mutable_application_id());
  out->set_application_name(x.name);
  out->set_queue(x.queue);
  out->mutable_priority()->set_priority(x.priority);
  if (auto ok = to_proto(x.am_launch, out->mutable_am_container_spec()); !ok)
    return ok.error();
  out->set_cancel_tokens_when_complete(x.cancel_tokens_when_complete);
  out->set_unmanaged_am(x.unmanaged_am);
  if (x.max_app_attempts > 0)
    out->set_maxappattempts(x.max_app_attempts);
  to_proto(x.am_resource, out->mutable_resource());
  out->set_applicationtype(x.application_type);
  out->set_keep_containers_across_application_attempts(x.keep_containers_across_attempts);
  for (auto& tag : x.tags)
    out->add_applicationtags(tag);
  if (!x.node_label.empty())
    out->set_node_label_expression(x.node_label);
  return {};
}

std::string describe(const proto::SerializedExceptionProto& x) {
  auto cls = x.class_name().empty() ? std::string{"exception"} : x.class_name();
  auto msg = first_line(x.message());
  return msg.empty() ? cls : cls + ": " + msg;
}

std::string node_key(const proto::NodeIdProto& x) {
  return hadoop::to_string(hadoop::endpoint{x.host(), static_cast<uint16_t>(x.port())});
}

} // namespace tony::yarn::convert
