#include "hadoop/yarn/amrm_client.hpp"

#include <algorithm>
#include <thread>

#include "hadoop/yarn/convert.hpp"
#include "hadoop/yarn/protocols.hpp"

namespace tony::yarn {

namespace {

using hadoop::error;
using hadoop::error_code;

int32_t final_status_code(const std::string& text) {
  auto x = parse_final_status(text);
  return x ? static_cast<int32_t>(*x) : -1;
}

} // namespace

amrm_client::amrm_client(std::shared_ptr<hadoop::ipc_client> ipc,
                         hadoop::endpoint scheduler, hadoop::token amrm_token,
                         std::shared_ptr<nm_token_cache> nm_tokens)
    : amrm_client(std::move(ipc), std::vector<rm_peer>{rm_peer{"", std::move(scheduler)}},
                  std::move(amrm_token), std::move(nm_tokens)) {
  // nop
}

amrm_client::amrm_client(std::shared_ptr<hadoop::ipc_client> ipc,
                         std::vector<rm_peer> schedulers, hadoop::token amrm_token,
                         std::shared_ptr<nm_token_cache> nm_tokens,
                         failover_options failover)
    : ipc_(std::move(ipc))
    , failover_(std::move(schedulers), failover)
    , nm_tokens_(nm_tokens ? std::move(nm_tokens) : std::make_shared<nm_token_cache>())
    , token_(std::move(amrm_token)) {
  // nop
}

hadoop::expected<hadoop::token>
amrm_client::find_amrm_token(const hadoop::credentials& creds) {
  if (auto* tok = creds.find(hadoop::amrm_token_kind))
    return *tok;
  return error{error_code::not_found,
               "no YARN_AM_RM_TOKEN among the " + std::to_string(creds.tokens().size()) +
                   " tokens of the container's credentials (is this process running "
                   "as the ApplicationMaster of a YARN application?)"};
}

hadoop::connection_params amrm_client::target_locked() const {
  hadoop::connection_params target;
  target.protocol = application_master_protocol;
  target.auth_token = token_;
  target.server_kind = "ResourceManager scheduler";
  target.address_key = "yarn.resourcemanager.scheduler.address";
  return target;
}

template <class Response>
hadoop::expected<Response> amrm_client::call(const std::string& method,
                                             const google::protobuf::MessageLite& req,
                                             hadoop::deadline until) {
  hadoop::connection_params base;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    base = target_locked(); // the newest AMRMToken
  }
  return failover_.call<Response>(
      base,
      [&](const hadoop::connection_params& target) {
        return ipc_->call<Response>(target, method, req, until);
      },
      until);
}

expected<rm_registration> amrm_client::register_locked(const am_registration& reg,
                                                       hadoop::deadline until,
                                                       bool first) {
  proto::RegisterApplicationMasterRequestProto req;
  req.set_host(reg.host);
  req.set_rpc_port(reg.rpc_port);
  req.set_tracking_url(reg.tracking_url);
  auto rsp = call<proto::RegisterApplicationMasterResponseProto>(
      "registerApplicationMaster", req, until);
  if (!rsp)
    return rsp.error();
  rm_registration result;
  result.max_capability = convert::from_proto(rsp->maximumcapability());
  result.queue = rsp->queue();
  for (auto& nm : rsp->nm_tokens_from_previous_attempts())
    nm_tokens_->put(convert::node_key(nm.nodeid()), convert::from_proto(nm.token()));
  std::lock_guard<std::mutex> guard{mtx_};
  last_command_ = am_command::none;
  if (first) {
    previous_.clear();
    for (auto& c : rsp->containers_from_previous_attempts())
      previous_.push_back(convert::container_from_proto(c));
    result.previous_containers = previous_;
  }
  return result;
}

expected<rm_registration>
amrm_client::register_application_master(const am_registration& reg,
                                         hadoop::deadline until) {
  std::lock_guard<std::mutex> call_guard{call_mtx_};
  auto result = register_locked(reg, until, true);
  if (result)
    registration_ = reg;
  return result;
}

expected<void> amrm_client::reregister(const std::string& why, hadoop::deadline until) {
  if (!registration_)
    return error{error_code::protocol,
                 "the ResourceManager asked the AM to register again (" + why +
                     ") before it had registered"};
  auto again = register_locked(*registration_, until, false);
  // A registration whose answer was lost (a timeout, a connection dropped
  // in a failover) may have reached the RM: its next answer to the same
  // request is that the AM is registered, which is what was asked.
  bool done =
      again ||
      (again.error().is_remote("InvalidApplicationMasterRequestException") &&
       again.error().remote_message().find("already registered") != std::string::npos);
  if (!done) {
    // Not a refusal: the RM did not answer. Until a registration is
    // answered, the next allocate registers first (it would be refused or,
    // when this one did land, go on without the resync the AM must make).
    reregister_pending_ = again.error().code() != error_code::remote;
    return again.error().with_context(
        "the ResourceManager lost the AM's registration (" + why +
        ": it restarted or failed over) and registering again failed");
  }
  reregister_pending_ = false;
  std::lock_guard<std::mutex> guard{mtx_};
  ++resyncs_;
  return {};
}

expected<allocate_response> amrm_client::allocate(const allocate_request& req,
                                                  hadoop::deadline until) {
  std::lock_guard<std::mutex> call_guard{call_mtx_};
  if (reregister_pending_) {
    if (auto ok = reregister("a registration the RM did not answer", until); !ok)
      return ok.error();
    allocate_response result;
    result.resync = true;
    return result;
  }
  proto::AllocateRequestProto msg;
  add_scheduling_requests(req, msg);
  add_spread_asks(req, msg);
  for (auto& id : req.releases) {
    auto cid = parse_container_id(id);
    if (!cid)
      return cid.error().with_context("cannot release container");
    convert::to_proto(*cid, msg.add_release());
  }
  for (auto& host : req.blacklist_additions)
    msg.mutable_blacklist_request()->add_blacklist_additions(host);
  msg.set_progress(req.progress);
  msg.set_response_id(req.response_id);
  auto rsp = call<proto::AllocateResponseProto>("allocate", msg, until);
  if (!rsp && rsp.error().is_remote("ApplicationMasterNotRegisteredException")) {
    if (auto ok = reregister(rsp.error().remote_class(), until); !ok)
      return ok.error();
    allocate_response result;
    result.resync = true;
    return result;
  }
  if (!rsp)
    return rsp.error();
  if (rsp->has_a_m_command() && rsp->a_m_command() == 1) { // AM_RESYNC
    if (auto ok = reregister("the AM_RESYNC command", until); !ok)
      return ok.error();
    allocate_response result;
    result.resync = true;
    return result;
  }
  allocate_response result;
  result.response_id = rsp->response_id();
  for (auto& c : rsp->allocated_containers()) {
    result.allocated.push_back(convert::container_from_proto(c));
    auto priority = result.allocated.back().priority;
    if (auto s = spreading_.find(priority); s != spreading_.end())
      --s->second.ask.count;
    if (auto c = constrained_.find(priority); c != constrained_.end())
      --c->second.count;
  }
  note_rejected(*rsp);
  for (auto& s : rsp->completed_container_statuses())
    result.completed.push_back(convert::completion_from_proto(s));
  result.num_cluster_nodes = rsp->num_cluster_nodes();
  if (rsp->has_limit())
    result.headroom = convert::from_proto(rsp->limit());
  auto command = am_command::none;
  if (rsp->has_a_m_command())
    command = rsp->a_m_command() == 1 ? am_command::resync : am_command::shutdown;
  result.shutdown = command != am_command::none;
  for (auto& nm : rsp->nm_tokens())
    nm_tokens_->put(convert::node_key(nm.nodeid()), convert::from_proto(nm.token()));
  std::lock_guard<std::mutex> guard{mtx_};
  last_command_ = command;
  if (rsp->has_limit())
    headroom_ = convert::from_proto(rsp->limit());
  if (rsp->has_am_rm_token()) {
    auto fresh = convert::from_proto(rsp->am_rm_token());
    if (fresh.kind.empty())
      fresh.kind = hadoop::amrm_token_kind;
    if (fresh.service.empty())
      fresh.service = token_.service;
    token_ = std::move(fresh);
  }
  return result;
}

// With placement constraints, a capped ask goes as a SchedulingRequest
// (YARN enforces the cap on every node, listed or not) and a request the RM
// rejected goes again with what is still outstanding of it.
void amrm_client::add_scheduling_requests(const allocate_request& req,
                                          proto::AllocateRequestProto& msg) {
  if (!constraints_)
    return;
  for (auto& ask : req.asks) {
    if (!convert::by_scheduling_request(ask))
      continue;
    constrained_[ask.priority] = ask;
    rejected_.erase(std::remove(rejected_.begin(), rejected_.end(), ask.priority),
                    rejected_.end());
    convert::to_proto(ask, msg.add_scheduling_requests());
  }
  // A spread ask's rejected request is add_spread_asks' to relax.
  for (auto it = rejected_.begin(); it != rejected_.end();) {
    auto c = constrained_.find(*it);
    if (c == constrained_.end()) {
      ++it;
      continue;
    }
    if (c->second.count > 0)
      convert::to_proto(c->second, msg.add_scheduling_requests());
    it = rejected_.erase(it);
  }
}

void amrm_client::note_rejected(const proto::AllocateResponseProto& rsp) {
  for (auto& r : rsp.rejected_scheduling_requests()) {
    auto priority = r.request().priority().priority();
    if (std::find(rejected_.begin(), rejected_.end(), priority) == rejected_.end())
      rejected_.push_back(priority);
  }
}

namespace {

// A spread ask as the placement processor's SchedulingRequest: each node at
// most `cap` of it (the share it had when first sent: YARN lets only the
// count of a request change).
void add_capped(const container_ask& ask, int32_t cap, proto::AllocateRequestProto& msg) {
  auto capped = ask;
  capped.max_per_node = cap;
  convert::to_proto(capped, msg.add_scheduling_requests());
}

} // namespace

// A new spread ask naming nodes goes strict; spread_window_ after it was
// first sent, what is still outstanding goes again relaxed (any node; up to
// the cap on each node for a capped ask), so that a node without room for
// its share does not hold the gang. A packed ask is relaxed from the start.
// With the placement processor the strict ask is a SchedulingRequest, and
// one the processor rejects relaxes at once.
void amrm_client::add_spread_asks(const allocate_request& req,
                                  proto::AllocateRequestProto& msg) {
  auto now = std::chrono::steady_clock::now();
  std::vector<int32_t> sent;
  auto rejected = [&](int32_t priority) {
    return std::find(rejected_.begin(), rejected_.end(), priority) != rejected_.end();
  };
  // The strict ask gone: a SchedulingRequest the processor still holds is
  // cancelled (count 0), and `outstanding`, if any, goes relaxed.
  auto relax = [&](const spreading& s, const container_ask* outstanding) {
    if (s.cap > 0 && !rejected(s.ask.priority)) {
      auto cancel = s.ask;
      cancel.count = 0;
      add_capped(cancel, s.cap, msg);
    }
    if (outstanding != nullptr && outstanding->count > 0)
      convert::add_asks(*outstanding, &msg);
  };
  for (auto& ask : req.asks) {
    if (constraints_ && convert::by_scheduling_request(ask))
      continue; // add_scheduling_requests
    sent.push_back(ask.priority);
    bool spread =
        !ask.nodes.empty() && ask.node_label.empty() && ask.count > 0 && !ask.pack;
    auto it = spreading_.find(ask.priority);
    if (!spread) {
      if (it != spreading_.end()) {
        relax(it->second, nullptr);
        spreading_.erase(it);
      }
      convert::add_asks(ask, &msg);
      continue;
    }
    if (it == spreading_.end()) {
      auto k = static_cast<int32_t>(ask.nodes.size());
      it = spreading_
               .emplace(ask.priority,
                        spreading{now, ask, processor_ ? (ask.count + k - 1) / k : 0})
               .first;
    }
    if (now - it->second.since >= spread_window_ || rejected(ask.priority)) {
      relax(it->second, &ask);
      spreading_.erase(it);
      continue;
    }
    it->second.ask = ask;
    if (it->second.cap > 0)
      add_capped(ask, it->second.cap, msg);
    else
      convert::add_asks(ask, &msg, convert::locality::strict);
  }
  for (auto it = spreading_.begin(); it != spreading_.end();) {
    bool due = (now - it->second.since >= spread_window_ || rejected(it->first)) &&
               std::find(sent.begin(), sent.end(), it->first) == sent.end();
    if (!due) {
      ++it;
      continue;
    }
    relax(it->second, &it->second.ask);
    it = spreading_.erase(it);
  }
  rejected_.clear();
}

expected<void> amrm_client::finish_application_master(const final_report& report,
                                                      hadoop::deadline until) {
  std::lock_guard<std::mutex> call_guard{call_mtx_};
  auto code = final_status_code(report.final_status);
  if (code < 0)
    return error{error_code::invalid_input,
                 "cannot finish with final status '" + report.final_status +
                     "' (expected SUCCEEDED, FAILED or KILLED)"};
  proto::FinishApplicationMasterRequestProto req;
  req.set_final_application_status(code);
  if (!report.diagnostics.empty())
    req.set_diagnostics(report.diagnostics);
  if (!report.tracking_url.empty())
    req.set_tracking_url(report.tracking_url);
  for (bool registered_again = false;;) {
    auto rsp = call<proto::FinishApplicationMasterResponseProto>(
        "finishApplicationMaster", req, until);
    if (!rsp && !registered_again &&
        rsp.error().is_remote("ApplicationMasterNotRegisteredException")) {
      // Hadoop's AMRMClientImpl does the same: register, then unregister.
      registered_again = true;
      if (auto ok = reregister(rsp.error().remote_class(), until); !ok)
        return ok.error();
      continue;
    }
    if (!rsp)
      return rsp.error();
    if (rsp->isunregistered())
      return {};
    // The RM unregisters asynchronously; YARN's own client polls likewise.
    auto pause = std::chrono::milliseconds{100};
    if (hadoop::remaining(until) <= pause) {
      hadoop::connection_params base;
      {
        std::lock_guard<std::mutex> guard{mtx_};
        base = target_locked();
      }
      return error{error_code::timeout,
                   hadoop::describe_server(failover_.current(base)) +
                       ": the AM was not unregistered before the deadline"};
    }
    std::this_thread::sleep_for(pause);
  }
}

hadoop::token amrm_client::amrm_token() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return token_;
}

am_command amrm_client::last_command() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return last_command_;
}

resource amrm_client::last_headroom() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return headroom_;
}

int amrm_client::resyncs() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return resyncs_;
}

std::vector<container> amrm_client::containers_from_previous_attempts() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return previous_;
}

} // namespace tony::yarn
