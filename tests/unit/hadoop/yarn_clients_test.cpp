// The YARN clients against a scripted loopback RM/NM: what they put on the
// wire (asks, response ids, launch contexts) and what they make of the
// answers (NMTokens, AMRMToken rollover, failed container starts).

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <future>
#include <mutex>

#include "hadoop/credentials.hpp"
#include "hadoop/crypto.hpp"
#include "hadoop/yarn/amrm_client.hpp"
#include "hadoop/yarn/application_client.hpp"
#include "hadoop/yarn/convert.hpp"
#include "hadoop/yarn/nm_client.hpp"
#include "hadoop/yarn/proto/yarn.pb.h"
#include "tests/unit/hadoop/fake_server.hpp"

namespace tony::yarn {
namespace {

using namespace std::chrono_literals;
using hadoop::deadline_after;
using hadoop::testing::accept_simple;
using hadoop::testing::accept_token;
using hadoop::testing::fake_peer;
using hadoop::testing::fake_server;
using hadoop::testing::read_call;
using hadoop::testing::response_frame;
using status = hadoop::proto::RpcResponseHeaderProto;

std::shared_ptr<hadoop::ipc_client> make_ipc() {
  hadoop::connection_options opts;
  opts.connect_timeout = 300ms;
  return std::make_shared<hadoop::ipc_client>(opts);
}

hadoop::endpoint local(uint16_t port) {
  return hadoop::endpoint{"127.0.0.1", port};
}

hadoop::token amrm(const std::string& id) {
  return hadoop::token{id, "pw-" + id, "YARN_AM_RM_TOKEN", ""};
}

template <class Msg>
Msg parse(const std::string& bytes) {
  Msg m;
  m.ParseFromString(bytes);
  return m;
}

void fill_container(proto::ContainerProto* c, uint16_t nm_port, int64_t seq) {
  auto* aid = c->mutable_id()->mutable_app_attempt_id();
  aid->mutable_application_id()->set_cluster_timestamp(1700000000000);
  aid->mutable_application_id()->set_id(1);
  aid->set_attemptid(1);
  c->mutable_id()->set_id(seq);
  c->mutable_nodeid()->set_host("127.0.0.1");
  c->mutable_nodeid()->set_port(nm_port);
  c->mutable_resource()->set_memory(256);
  c->mutable_resource()->set_virtual_cores(1);
  c->mutable_priority()->set_priority(1);
  auto* tok = c->mutable_container_token();
  tok->set_identifier("ctid");
  tok->set_password("ctpw");
  tok->set_kind("ContainerToken");
  tok->set_service("127.0.0.1:" + std::to_string(nm_port));
}

TEST(application_client, submits_and_reports_over_simple_auth) {
  std::promise<proto::ApplicationSubmissionContextProto> submitted;
  fake_server rm{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    while (auto call = read_call(peer)) {
      auto& method = call->request_header.methodname();
      if (method == "getNewApplication") {
        proto::GetNewApplicationResponseProto rsp;
        rsp.mutable_application_id()->set_id(3);
        rsp.mutable_application_id()->set_cluster_timestamp(1700000000000);
        rsp.mutable_maximumcapability()->set_memory(8192);
        rsp.mutable_maximumcapability()->set_virtual_cores(4);
        peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
      } else if (method == "submitApplication") {
        submitted.set_value(parse<proto::SubmitApplicationRequestProto>(call->request)
                                .application_submission_context());
        proto::SubmitApplicationResponseProto rsp;
        peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
      } else if (method == "getApplicationReport") {
        proto::GetApplicationReportResponseProto rsp;
        auto* r = rsp.mutable_application_report();
        *r->mutable_applicationid() =
            parse<proto::GetApplicationReportRequestProto>(call->request)
                .application_id();
        r->set_yarn_application_state(4);
        r->set_final_application_status(0);
        peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
      } else {
        peer.write(response_frame(call->call_id, status::ERROR, nullptr,
                                  "org.apache.hadoop.ipc.RpcNoSuchMethodException",
                                  "Unknown method " + method));
      }
    }
  }};
  application_client client{make_ipc(), local(rm.port()), "alice"};
  auto app = client.get_new_application(deadline_after(5s));
  ASSERT_TRUE(app) << app.error().message();
  EXPECT_EQ(to_string(app->id), "application_1700000000000_0003");
  EXPECT_EQ(app->max_capability.memory_mb, 8192);

  submission_context ctx;
  ctx.id = app->id;
  ctx.name = "unit";
  ctx.unmanaged_am = true;
  ctx.am_launch.commands = {"true"};
  ctx.am_launch.tokens = hadoop::serialize_credentials(hadoop::credentials{});
  ASSERT_TRUE(client.submit_application(ctx, deadline_after(5s)));
  auto sent = submitted.get_future().get();
  EXPECT_EQ(sent.application_id().id(), 3);
  EXPECT_TRUE(sent.unmanaged_am());
  EXPECT_EQ(sent.application_name(), "unit");
  EXPECT_EQ(sent.am_container_spec().tokens(), std::string("HDTS\0\0\0", 7));

  auto report = client.get_application_report(app->id, deadline_after(5s));
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->state, application_state::accepted);

  auto nodes = client.get_cluster_nodes(deadline_after(5s));
  ASSERT_FALSE(nodes);
  EXPECT_TRUE(nodes.error().is_remote("RpcNoSuchMethodException"));
}

TEST(amrm_client, keeps_response_ids_nm_tokens_and_rolls_the_amrm_token) {
  std::promise<std::vector<proto::AllocateRequestProto>> requests;
  std::promise<std::vector<std::string>> logins;
  // Shared by the fake's connection threads.
  std::mutex mtx;
  std::vector<proto::AllocateRequestProto> seen;
  std::vector<std::string> users;
  std::atomic<int> connection{0};
  fake_server rm{[&](fake_peer& peer) {
    auto tok = ++connection == 1 ? amrm("first") : amrm("second");
    auto pre = peer.read_preamble();
    ASSERT_TRUE(pre);
    auto login = hadoop::testing::serve_sasl(peer, tok);
    ASSERT_TRUE(login.ok) << login.problem;
    {
      std::lock_guard<std::mutex> guard{mtx};
      users.push_back(login.username);
    }
    ASSERT_TRUE(hadoop::testing::read_context(peer));
    while (auto call = read_call(peer)) {
      auto& method = call->request_header.methodname();
      if (method == "registerApplicationMaster") {
        proto::RegisterApplicationMasterResponseProto rsp;
        rsp.mutable_maximumcapability()->set_memory(4096);
        rsp.mutable_maximumcapability()->set_virtual_cores(8);
        rsp.set_queue("default");
        auto* nm = rsp.add_nm_tokens_from_previous_attempts();
        nm->mutable_nodeid()->set_host("old-node");
        nm->mutable_nodeid()->set_port(1);
        nm->mutable_token()->set_identifier("x");
        nm->mutable_token()->set_password("y");
        nm->mutable_token()->set_kind("NMToken");
        nm->mutable_token()->set_service("old-node:1");
        peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
      } else if (method == "allocate") {
        std::lock_guard<std::mutex> guard{mtx};
        seen.push_back(parse<proto::AllocateRequestProto>(call->request));
        proto::AllocateResponseProto rsp;
        rsp.set_response_id(seen.size() == 1 ? 7 : 8);
        rsp.set_num_cluster_nodes(1);
        if (seen.size() == 1) {
          fill_container(rsp.add_allocated_containers(), 45454, 2);
          auto* nm = rsp.add_nm_tokens();
          nm->mutable_nodeid()->set_host("127.0.0.1");
          nm->mutable_nodeid()->set_port(45454);
          nm->mutable_token()->set_identifier("nmid");
          nm->mutable_token()->set_password("nmpw");
          nm->mutable_token()->set_kind("NMToken");
          nm->mutable_token()->set_service("127.0.0.1:45454");
          auto* fresh = rsp.mutable_am_rm_token();
          fresh->set_identifier("second");
          fresh->set_password("pw-second");
          fresh->set_kind("YARN_AM_RM_TOKEN");
          fresh->set_service("");
        } else {
          auto* done = rsp.add_completed_container_statuses();
          auto* cid = done->mutable_container_id();
          auto* aid = cid->mutable_app_attempt_id();
          aid->mutable_application_id()->set_cluster_timestamp(1700000000000);
          aid->mutable_application_id()->set_id(1);
          aid->set_attemptid(1);
          cid->set_id(2);
          done->set_state(3);
          done->set_exit_status(3);
          done->set_diagnostics("Exception from container-launch.");
          rsp.set_a_m_command(2);
          requests.set_value(seen);
          logins.set_value(users);
        }
        peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
      }
    }
  }};
  auto cache = std::make_shared<nm_token_cache>();
  amrm_client client{make_ipc(), local(rm.port()), amrm("first"), cache};
  auto reg = client.register_application_master({"am-host", 0, "http://am:1"},
                                                deadline_after(5s));
  ASSERT_TRUE(reg) << reg.error().message();
  EXPECT_EQ(reg->max_capability, (resource{4096, 8, 0}));
  EXPECT_EQ(reg->queue, "default");
  EXPECT_TRUE(cache->get("old-node:1"));

  allocate_request req;
  req.response_id = 0; // the caller's ledger owns the sequence; it starts at 0
  req.progress = 0.5f;
  req.asks.push_back(container_ask{1, "worker", {256, 1, 1}, "", 2});
  auto first = client.allocate(req, deadline_after(5s));
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->response_id, 7);
  ASSERT_EQ(first->allocated.size(), 1u);
  EXPECT_EQ(first->allocated[0].id, "container_1700000000000_0001_01_000002");
  EXPECT_EQ(first->allocated[0].port, 45454);
  EXPECT_FALSE(first->shutdown);
  ASSERT_TRUE(cache->get("127.0.0.1:45454"));
  EXPECT_EQ(cache->get("127.0.0.1:45454")->identifier, "nmid");
  EXPECT_EQ(client.amrm_token().identifier, "second");

  allocate_request release;
  release.response_id = first->response_id; // the ledger echoes the last id
  release.releases.push_back("container_1700000000000_0001_01_000002");
  release.blacklist_additions.push_back("lost-node.example");
  auto second = client.allocate(release, deadline_after(5s));
  ASSERT_TRUE(second) << second.error().message();
  ASSERT_EQ(second->completed.size(), 1u);
  EXPECT_EQ(second->completed[0].exit_status, 3);
  EXPECT_EQ(second->completed[0].container_id, "container_1700000000000_0001_01_000002");
  EXPECT_TRUE(second->shutdown);
  EXPECT_EQ(client.last_command(), am_command::shutdown);

  auto sent = requests.get_future().get();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].response_id(), 0);
  EXPECT_FLOAT_EQ(sent[0].progress(), 0.5f);
  ASSERT_EQ(sent[0].ask_size(), 1);
  EXPECT_EQ(sent[0].ask(0).num_containers(), 2);
  EXPECT_EQ(sent[0].ask(0).capability().resource_value_map(0).key(), "yarn.io/gpu");
  EXPECT_EQ(sent[1].response_id(), 7);
  ASSERT_EQ(sent[1].release_size(), 1);
  EXPECT_EQ(sent[1].release(0).id(), 2);
  // YARN's blacklist: only when there is something to add.
  EXPECT_FALSE(sent[0].has_blacklist_request());
  ASSERT_EQ(sent[1].blacklist_request().blacklist_additions_size(), 1);
  EXPECT_EQ(sent[1].blacklist_request().blacklist_additions(0), "lost-node.example");
  // The second allocate logged in again with the rolled-over token.
  auto logged_in = logins.get_future().get();
  ASSERT_EQ(logged_in.size(), 2u);
  EXPECT_EQ(logged_in[0], hadoop::base64_encode("first"));
  EXPECT_EQ(logged_in[1], hadoop::base64_encode("second"));
}

TEST(amrm_client, finish_repeats_until_unregistered) {
  fake_server rm{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_token(peer, amrm("t")));
    int calls = 0;
    while (auto call = read_call(peer)) {
      auto req = parse<proto::FinishApplicationMasterRequestProto>(call->request);
      EXPECT_EQ(req.final_application_status(), 1);
      EXPECT_EQ(req.diagnostics(), "all done");
      proto::FinishApplicationMasterResponseProto rsp;
      rsp.set_isunregistered(++calls >= 2);
      peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
    }
  }};
  amrm_client client{make_ipc(), local(rm.port()), amrm("t"), nullptr};
  auto ok =
      client.finish_application_master({"SUCCEEDED", "all done", ""}, deadline_after(5s));
  EXPECT_TRUE(ok) << ok.error().message();
  auto bad = client.finish_application_master({"MAYBE", "", ""}, deadline_after(5s));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), hadoop::error_code::invalid_input);
}

// The allocate requests a client sends to a fake RM; `answer` fills the
// response to the n-th (from 1).
std::vector<proto::AllocateRequestProto>
allocate_calls(const std::string& handler, const std::vector<allocate_request>& reqs,
               std::function<void(int, proto::AllocateResponseProto&)> answer) {
  std::mutex mtx;
  std::vector<proto::AllocateRequestProto> seen;
  fake_server rm{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_token(peer, amrm("t")));
    while (auto call = read_call(peer)) {
      proto::AllocateResponseProto rsp;
      {
        std::lock_guard<std::mutex> guard{mtx};
        seen.push_back(parse<proto::AllocateRequestProto>(call->request));
        answer(static_cast<int>(seen.size()), rsp);
      }
      peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
    }
  }};
  amrm_client client{make_ipc(), local(rm.port()), amrm("t"), nullptr};
  client.set_placement_constraints(handler);
  for (auto& req : reqs) {
    auto rsp = client.allocate(req, deadline_after(5s));
    EXPECT_TRUE(rsp) << rsp.error().message();
  }
  std::lock_guard<std::mutex> guard{mtx};
  return seen;
}

allocate_request capped_and_uncapped() {
  allocate_request req;
  container_ask worker{1, "worker", {256, 1, 0}, "", 2};
  worker.nodes = {"n1", "n2", "n3"};
  worker.max_per_node = 1;
  container_ask ps{2, "ps", {256, 1, 0}, "", 1};
  ps.nodes = worker.nodes;
  req.asks = {worker, ps};
  return req;
}

// The handler enabled: the capped type goes as a SchedulingRequest (never
// also as ResourceRequests: YARN refuses both at one priority), the other
// type keeps its node lists; a grant lowers what a rejected request asks
// for again, and a count of 0 cancels.
TEST(amrm_client, a_capped_ask_goes_as_a_scheduling_request_when_the_rm_enables_them) {
  auto cancel = allocate_request{};
  cancel.asks.push_back(capped_and_uncapped().asks[0]);
  cancel.asks[0].count = 0;
  auto sent = allocate_calls(
      "scheduler", {capped_and_uncapped(), allocate_request{}, cancel},
      [](int n, proto::AllocateResponseProto& rsp) {
        if (n != 1)
          return;
        fill_container(rsp.add_allocated_containers(), 45454, 2); // priority 1
        auto* rejected = rsp.add_rejected_scheduling_requests();
        rejected->set_reason(1);
        rejected->mutable_request()->mutable_priority()->set_priority(1);
      });
  ASSERT_EQ(sent.size(), 3u);
  ASSERT_EQ(sent[0].scheduling_requests_size(), 1);
  auto& worker = sent[0].scheduling_requests(0);
  EXPECT_EQ(worker.priority().priority(), 1);
  EXPECT_EQ(worker.resourcesizing().numallocations(), 2);
  EXPECT_EQ(worker.placementconstraint().simpleconstraint().maxcardinality(), 0);
  EXPECT_EQ(worker.allocationtags(0), "worker");
  ASSERT_GT(sent[0].ask_size(), 0);
  for (auto& r : sent[0].ask())
    EXPECT_EQ(r.priority().priority(), 2) << r.resource_name();
  ASSERT_EQ(sent[1].scheduling_requests_size(), 1); // the rejected one, again
  EXPECT_EQ(sent[1].scheduling_requests(0).resourcesizing().numallocations(), 1);
  EXPECT_EQ(sent[1].ask_size(), 0);
  ASSERT_EQ(sent[2].scheduling_requests_size(), 1);
  EXPECT_EQ(sent[2].scheduling_requests(0).resourcesizing().numallocations(), 0);
}

// Disabled (YARN's default), the same asks name their nodes, the capped
// one strict with at most its cap per node, and no SchedulingRequest goes
// (the RM would refuse the whole allocate).
TEST(amrm_client, without_placement_constraints_a_capped_ask_names_its_nodes) {
  for (auto handler : {"", "disabled"}) {
    auto sent = allocate_calls(handler, {capped_and_uncapped()},
                               [](int, proto::AllocateResponseProto&) {});
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].scheduling_requests_size(), 0);
    int worker_nodes = 0;
    for (auto& r : sent[0].ask())
      if (r.priority().priority() == 1 && r.resource_name()[0] == 'n') {
        ++worker_nodes;
        EXPECT_EQ(r.num_containers(), 1);
      }
    EXPECT_EQ(worker_nodes, 3);
  }
}

TEST(amrm_client, finds_the_amrm_token_in_credentials) {
  hadoop::credentials creds;
  creds.add_token("nm", hadoop::token{"a", "b", "NMToken", "n:1"});
  EXPECT_FALSE(amrm_client::find_amrm_token(creds));
  creds.add_token("amrm", amrm("z"));
  auto tok = amrm_client::find_amrm_token(creds);
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->identifier, "z");
}

container granted(uint16_t nm_port) {
  proto::ContainerProto c;
  fill_container(&c, nm_port, 2);
  return convert::container_from_proto(c);
}

TEST(nm_client, starts_a_container_with_its_nm_token_and_launch_context) {
  std::promise<proto::StartContainersRequestProto> seen;
  hadoop::token nm_tok{"nmid", "nmpw", "NMToken", ""};
  fake_server nm{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_token(peer, nm_tok));
    auto call = read_call(peer);
    ASSERT_TRUE(call);
    EXPECT_EQ(call->request_header.declaringclassprotocolname(),
              "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB");
    auto req = parse<proto::StartContainersRequestProto>(call->request);
    seen.set_value(req);
    proto::StartContainersResponseProto rsp;
    convert::to_proto(*parse_container_id(granted(0).id), rsp.add_succeeded_requests());
    peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
    peer.wait_for_eof();
  }};
  auto cache = std::make_shared<nm_token_cache>();
  cache->put("127.0.0.1:" + std::to_string(nm.port()), nm_tok);
  nm_client client{make_ipc(), cache};
  launch_spec spec;
  spec.target = granted(nm.port());
  spec.command = {"/bin/sh -c 'exit 3'"};
  spec.env = {{"TONY", "1"}};
  auto ok = client.start_container(spec, deadline_after(5s));
  ASSERT_TRUE(ok) << ok.error().message();
  auto req = seen.get_future().get();
  ASSERT_EQ(req.start_container_request_size(), 1);
  auto& start = req.start_container_request(0);
  EXPECT_EQ(start.container_token().identifier(), "ctid");
  EXPECT_EQ(start.container_launch_context().command(0), "/bin/sh -c 'exit 3'");
  EXPECT_EQ(start.container_launch_context().environment(0).key(), "TONY");
}

TEST(nm_client, a_failed_request_is_an_error_even_if_the_call_succeeded) {
  hadoop::token nm_tok{"nmid", "nmpw", "NMToken", ""};
  fake_server nm{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_token(peer, nm_tok));
    auto call = read_call(peer);
    ASSERT_TRUE(call);
    proto::StartContainersResponseProto rsp;
    auto* failed = rsp.add_failed_requests();
    convert::to_proto(*parse_container_id(granted(0).id), failed->mutable_container_id());
    failed->mutable_exception()->set_class_name(
        "org.apache.hadoop.yarn.exceptions.InvalidAuxServiceException");
    failed->mutable_exception()->set_message("The auxService:x do not exist\nmore");
    peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
    peer.wait_for_eof();
  }};
  auto cache = std::make_shared<nm_token_cache>();
  cache->put("127.0.0.1:" + std::to_string(nm.port()), nm_tok);
  nm_client client{make_ipc(), cache};
  auto target = granted(nm.port());
  auto r = client.start_container(target, container_launch{}, deadline_after(5s));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), hadoop::error_code::remote);
  EXPECT_TRUE(r.error().is_remote("InvalidAuxServiceException"));
  EXPECT_NE(r.error().message().find("container_1700000000000_0001_01_000002"),
            std::string::npos);
  EXPECT_EQ(r.error().message().find("more"), std::string::npos);
}

TEST(nm_client, a_token_expired_by_the_node_clock_names_the_node_and_its_skew) {
  hadoop::token nm_tok{"nmid", "nmpw", "NMToken", ""};
  fake_server nm{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_token(peer, nm_tok));
    auto call = read_call(peer);
    ASSERT_TRUE(call);
    proto::StartContainersResponseProto rsp;
    auto* failed = rsp.add_failed_requests();
    convert::to_proto(*parse_container_id(granted(0).id), failed->mutable_container_id());
    failed->mutable_exception()->set_class_name(
        "org.apache.hadoop.yarn.exceptions.YarnException");
    failed->mutable_exception()->set_message(
        "Unauthorized request to start container.\nThis token is expired. current time "
        "is 1700003600000 found 1700000660000\nNote: System times on machines may be out "
        "of sync. Check system time and time zones.");
    peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
    peer.wait_for_eof();
  }};
  auto cache = std::make_shared<nm_token_cache>();
  cache->put("127.0.0.1:" + std::to_string(nm.port()), nm_tok);
  nm_client client{make_ipc(), cache};
  auto target = granted(nm.port());
  // The RM created the container at ...060000 and let its token live 10 min.
  proto::ContainerTokenIdentifierProto id;
  id.set_creationtime(1700000060000);
  id.set_expirytimestamp(1700000660000);
  target.token = hadoop::serialize_token_proto(
      {id.SerializeAsString(), "ctpw", "ContainerToken", "127.0.0.1"});
  auto r = client.start_container(target, container_launch{}, deadline_after(5s));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), hadoop::error_code::remote);
  auto& text = r.error().message();
  EXPECT_NE(text.find("starting container container_1700000000000_0001_01_000002 failed: "
                      "node 127.0.0.1's clock is about 59 min 0 s (3540 s) ahead of the "
                      "ResourceManager's"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("This token is expired"), std::string::npos) << text;
}

TEST(nm_client, asks_one_node_about_its_containers_in_one_call) {
  std::promise<proto::GetContainerStatusesRequestProto> seen;
  hadoop::token nm_tok{"nmid", "nmpw", "NMToken", ""};
  std::vector<container> cs;
  fake_server nm{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_token(peer, nm_tok));
    auto call = read_call(peer);
    ASSERT_TRUE(call);
    EXPECT_EQ(call->request_header.methodname(), "getContainerStatuses");
    auto req = parse<proto::GetContainerStatusesRequestProto>(call->request);
    seen.set_value(req);
    // What a Hadoop 3 NodeManager says of a container it localizes, one whose
    // launch script runs, and (an older NodeManager) one without a sub-state.
    proto::GetContainerStatusesResponseProto rsp;
    int32_t sub_states[] = {1, 2, 0};
    for (int i = 0; i < 3; ++i) {
      auto* s = rsp.add_status();
      *s->mutable_container_id() = req.container_id(i);
      s->set_state(2);
      if (sub_states[i] > 0)
        s->set_container_sub_state(sub_states[i]);
    }
    peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
    peer.wait_for_eof();
  }};
  for (int64_t seq : {2, 3, 4}) {
    proto::ContainerProto c;
    fill_container(&c, nm.port(), seq);
    cs.push_back(convert::container_from_proto(c));
  }
  auto cache = std::make_shared<nm_token_cache>();
  cache->put("127.0.0.1:" + std::to_string(nm.port()), nm_tok);
  nm_client client{make_ipc(), cache};
  auto r = client.get_container_statuses(cs, deadline_after(5s));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(seen.get_future().get().container_id_size(), 3);
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].container_id, cs[0].id);
  EXPECT_EQ((*r)[0].state, "RUNNING");
  EXPECT_EQ((*r)[0].sub_state, "SCHEDULED");
  EXPECT_EQ((*r)[1].sub_state, "RUNNING");
  EXPECT_EQ((*r)[2].sub_state, "");
}

TEST(nm_client, without_an_nm_token_for_the_node_nothing_is_sent) {
  nm_client client{make_ipc(), std::make_shared<nm_token_cache>()};
  auto r = client.stop_container(granted(45454), deadline_after(1s));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), hadoop::error_code::not_found);
  EXPECT_NE(r.error().message().find("no NMToken for node 127.0.0.1:45454"),
            std::string::npos);
  container no_port = granted(45454);
  no_port.port = 0;
  EXPECT_EQ(client.stop_container(no_port, deadline_after(1s)).error().code(),
            hadoop::error_code::invalid_input);
}

} // namespace
} // namespace tony::yarn
