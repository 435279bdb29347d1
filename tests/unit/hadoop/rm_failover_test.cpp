// ResourceManager HA from the clients' side, against scripted loopback RMs:
// a standby RM is left for the active one, an active RM that dies is left
// for the one that took over, an RM that lost the AM's registration gets it
// again, and when no RM answers the error names every one tried.

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>

#include "hadoop/configuration.hpp"
#include "hadoop/yarn/amrm_client.hpp"
#include "hadoop/yarn/application_client.hpp"
#include "hadoop/yarn/proto/yarn.pb.h"
#include "hadoop/yarn/protocols.hpp"
#include "hadoop/yarn/rm_failover.hpp"
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

constexpr const char* standby = "org.apache.hadoop.ipc.StandbyException";
constexpr const char* not_registered =
    "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException";

std::shared_ptr<hadoop::ipc_client> make_ipc() {
  hadoop::connection_options opts;
  opts.connect_timeout = 300ms;
  return std::make_shared<hadoop::ipc_client>(opts);
}

failover_options quick() {
  failover_options opts;
  opts.connect_budget = 100ms;
  opts.initial_pause = 20ms;
  opts.max_pause = 100ms;
  return opts;
}

rm_peer peer(const std::string& id, uint16_t port) {
  return rm_peer{id, hadoop::endpoint{"127.0.0.1", port}};
}

// A loopback port nothing listens on: connecting is refused, as to a dead RM.
uint16_t dead_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

void answer_report(fake_peer& peer, int32_t call_id) {
  proto::GetApplicationReportResponseProto rsp;
  auto* r = rsp.mutable_application_report();
  r->mutable_applicationid()->set_id(1);
  r->mutable_applicationid()->set_cluster_timestamp(1700000000000);
  r->set_yarn_application_state(5); // RUNNING
  peer.write(response_frame(call_id, status::SUCCESS, &rsp));
}

// An RM in standby: every call is answered with StandbyException.
void serve_standby(fake_peer& peer) {
  if (!accept_simple(peer))
    return;
  while (auto call = read_call(peer))
    peer.write(response_frame(call->call_id, status::ERROR, nullptr, standby,
                              "Operation category READ is not supported in state "
                              "standby"));
}

// The active RM: it answers getApplicationReport.
void serve_active(fake_peer& peer) {
  if (!accept_simple(peer))
    return;
  while (auto call = read_call(peer))
    answer_report(peer, call->call_id);
}

application_id app_one() {
  return application_id{1700000000000, 1};
}

TEST(rm_failover, a_standby_rm_is_left_for_the_active_one) {
  fake_server rm1{serve_standby};
  fake_server rm2{serve_active};
  application_client client{
      make_ipc(), {peer("rm1", rm1.port()), peer("rm2", rm2.port())}, "alice", quick()};
  auto report = client.get_application_report(app_one(), deadline_after(5s));
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->state, application_state::running);
  EXPECT_EQ(client.target().address.port, rm2.port());
  EXPECT_EQ(client.target().server_kind, "ResourceManager rm2");
  EXPECT_EQ(client.failover().failovers(), 1);
  // The next call goes straight to rm2.
  auto again = client.get_application_report(app_one(), deadline_after(5s));
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(rm2.accepted(), 1);
  EXPECT_EQ(rm1.accepted(), 1);
}

TEST(rm_failover, an_active_rm_that_dies_mid_session_is_left_for_the_other) {
  std::atomic<int> served{0};
  std::optional<fake_server> rm1{std::in_place, [&](fake_peer& peer) {
                                   if (!accept_simple(peer))
                                     return;
                                   while (auto call = read_call(peer)) {
                                     if (++served > 1)
                                       return; // dies with the call unanswered
                                     answer_report(peer, call->call_id);
                                   }
                                 }};
  fake_server rm2{serve_active};
  application_client client{
      make_ipc(), {peer("rm1", rm1->port()), peer("rm2", rm2.port())}, "alice", quick()};
  ASSERT_TRUE(client.get_application_report(app_one(), deadline_after(5s)));
  EXPECT_EQ(client.target().address.port, rm1->port());
  // The connection breaks while the call is out: rm2 answers it.
  auto report = client.get_application_report(app_one(), deadline_after(5s));
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(client.target().address.port, rm2.port());
  // rm1 is gone for good (refused): the calls stay with rm2.
  rm1.reset();
  ASSERT_TRUE(client.get_application_report(app_one(), deadline_after(5s)));
  EXPECT_EQ(client.failover().failovers(), 1);
}

TEST(rm_failover, the_active_rm_down_at_the_first_call_is_skipped) {
  fake_server rm2{serve_active};
  application_client client{
      make_ipc(), {peer("rm1", dead_port()), peer("rm2", rm2.port())}, "alice", quick()};
  auto report = client.get_application_report(app_one(), deadline_after(5s));
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(client.target().address.port, rm2.port());
}

TEST(rm_failover, when_no_rm_answers_the_error_names_every_one_and_ends_in_time) {
  fake_server rm2{serve_standby};
  auto rm1_port = dead_port();
  application_client client{
      make_ipc(), {peer("rm1", rm1_port), peer("rm2", rm2.port())}, "alice", quick()};
  auto start = std::chrono::steady_clock::now();
  auto report = client.get_application_report(app_one(), deadline_after(1500ms));
  ASSERT_FALSE(report);
  // Bounded by the deadline, with slack for a loaded machine (no timing
  // assertion beyond "it ended").
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  auto& text = report.error().message();
  EXPECT_EQ(report.error().code(), hadoop::error_code::connect_failed);
  EXPECT_NE(text.find("no ResourceManager answered"), std::string::npos) << text;
  EXPECT_NE(text.find("ResourceManager rm1 at 127.0.0.1:" + std::to_string(rm1_port)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("StandbyException"), std::string::npos) << text;
  EXPECT_NE(text.find("yarn.resourcemanager.ha.rm-ids"), std::string::npos) << text;
  // The RMs were tried again after a pause, round after round.
  EXPECT_NE(text.find(" rounds in "), std::string::npos) << text;
  std::cout << text << "\n";
}

TEST(rm_failover, an_error_that_is_not_about_the_rm_is_not_failed_over) {
  std::atomic<int> calls{0};
  fake_server rm1{[&](fake_peer& peer) {
    if (!accept_simple(peer))
      return;
    while (auto call = read_call(peer)) {
      ++calls;
      peer.write(
          response_frame(call->call_id, status::ERROR, nullptr,
                         "org.apache.hadoop.yarn.exceptions."
                         "ApplicationNotFoundException",
                         "Application with id 'application_1_0001' doesn't exist"));
    }
  }};
  fake_server rm2{serve_active};
  application_client client{
      make_ipc(), {peer("rm1", rm1.port()), peer("rm2", rm2.port())}, "alice", quick()};
  auto report = client.get_application_report(app_one(), deadline_after(5s));
  ASSERT_FALSE(report);
  EXPECT_TRUE(report.error().is_remote("ApplicationNotFoundException"));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(rm2.accepted(), 0);
}

hadoop::token amrm(const std::string& id) {
  return hadoop::token{id, "pw-" + id, "YARN_AM_RM_TOKEN", ""};
}

// A scheduler that serves register and allocate; with `lose` set, the first
// allocate after the first registration is answered as an RM that restarted
// answers it (ApplicationMasterNotRegisteredException), or with AM_RESYNC.
struct scripted_scheduler {
  enum class loss { exception, am_resync };
  loss how = loss::exception;
  /// The registration made again lands but its answer comes after the
  /// client gave up; every later one is refused as already registered.
  bool late_answer = false;
  /// Every allocate is answered (no lost registration).
  bool keep = false;
  /// SchedulingRequests asking for containers are answered as rejected, as
  /// the placement processor rejects one it could not place.
  bool reject_scheduling = false;
  std::mutex mtx;
  int registrations = 0;
  bool lost = false;
  std::vector<proto::AllocateRequestProto> allocations;

  void serve(fake_peer& peer) {
    if (!accept_token(peer, amrm("t")))
      return;
    while (auto call = read_call(peer)) {
      std::lock_guard<std::mutex> guard{mtx};
      auto& method = call->request_header.methodname();
      if (method == "registerApplicationMaster") {
        ++registrations;
        if (late_answer && registrations > 2) {
          peer.write(response_frame(call->call_id, status::ERROR, nullptr,
                                    "org.apache.hadoop.yarn.exceptions."
                                    "InvalidApplicationMasterRequestException",
                                    "Application Master is already registered : "
                                    "application_1700000000000_0001"));
          continue;
        }
        if (late_answer && registrations == 2)
          std::this_thread::sleep_for(700ms);
        proto::RegisterApplicationMasterResponseProto rsp;
        rsp.mutable_maximumcapability()->set_memory(4096);
        rsp.mutable_maximumcapability()->set_virtual_cores(4);
        peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
        continue;
      }
      proto::AllocateRequestProto req;
      req.ParseFromString(call->request);
      allocations.push_back(req);
      if (!keep && !lost && registrations == 1 && allocations.size() == 2) {
        lost = true;
        if (how == loss::exception) {
          peer.write(response_frame(call->call_id, status::ERROR, nullptr, not_registered,
                                    "Application Master is trying to allocate before "
                                    "registering"));
          continue;
        }
        proto::AllocateResponseProto rsp;
        rsp.set_a_m_command(1); // AM_RESYNC
        peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
        continue;
      }
      proto::AllocateResponseProto rsp;
      rsp.set_response_id(req.response_id() + 1);
      for (auto& r : req.scheduling_requests())
        if (reject_scheduling && r.resourcesizing().numallocations() > 0)
          *rsp.add_rejected_scheduling_requests()->mutable_request() = r;
      peer.write(response_frame(call->call_id, status::SUCCESS, &rsp));
    }
  }
};

// The ask for `resource` ("*", a node) in `req`, or null.
const proto::ResourceRequestProto* ask_named(const proto::AllocateRequestProto& req,
                                             const std::string& resource) {
  for (auto& a : req.ask())
    if (a.resource_name() == resource)
      return &a;
  return nullptr;
}

void resync_scenario(scripted_scheduler::loss how) {
  scripted_scheduler script;
  script.how = how;
  fake_server rm{[&](fake_peer& peer) { script.serve(peer); }};
  amrm_client client{make_ipc(), {peer("rm1", rm.port())}, amrm("t"), nullptr, quick()};
  ASSERT_TRUE(client.register_application_master({"am", 0, ""}, deadline_after(5s)));
  allocate_request req;
  req.asks.push_back(container_ask{1, "worker", {256, 1, 0}, "", 2});
  auto first = client.allocate(req, deadline_after(5s));
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_FALSE(first->resync);
  allocate_request next;
  next.response_id = first->response_id;
  auto lost = client.allocate(next, deadline_after(5s));
  ASSERT_TRUE(lost) << lost.error().message();
  EXPECT_TRUE(lost->resync);
  EXPECT_FALSE(lost->shutdown);
  EXPECT_EQ(client.resyncs(), 1);
  std::lock_guard<std::mutex> guard{script.mtx};
  EXPECT_EQ(script.registrations, 2); // registered again with the RM
}

TEST(amrm_client, registers_again_when_the_rm_lost_the_registration) {
  resync_scenario(scripted_scheduler::loss::exception);
}

TEST(amrm_client, registers_again_on_the_am_resync_command) {
  resync_scenario(scripted_scheduler::loss::am_resync);
}

// The answer to the registration made again is lost (a failover under load):
// the RM did register the AM, so the next allocate would succeed without the
// resync the AM owes it (the RM that took over forgot every ask). The client
// registers first, takes "already registered" for done, and reports resync.
TEST(amrm_client, a_lost_answer_to_registering_again_still_resyncs) {
  scripted_scheduler script;
  script.late_answer = true;
  fake_server rm{[&](fake_peer& peer) { script.serve(peer); }};
  amrm_client client{make_ipc(), {peer("rm1", rm.port())}, amrm("t"), nullptr, quick()};
  ASSERT_TRUE(client.register_application_master({"am", 0, ""}, deadline_after(5s)));
  allocate_request req;
  req.asks.push_back(container_ask{1, "worker", {256, 1, 0}, "", 2});
  auto first = client.allocate(req, deadline_after(5s));
  ASSERT_TRUE(first) << first.error().message();
  allocate_request next;
  next.response_id = first->response_id;
  auto lost = client.allocate(next, deadline_after(300ms));
  ASSERT_FALSE(lost);
  EXPECT_NE(lost.error().message().find("registering again failed"), std::string::npos)
      << lost.error().message();
  std::this_thread::sleep_for(700ms); // the late answer is out
  auto again = client.allocate(next, deadline_after(5s));
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_TRUE(again->resync);
  EXPECT_EQ(client.resyncs(), 1);
  auto after = client.allocate(next, deadline_after(5s));
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_FALSE(after->resync);
  std::lock_guard<std::mutex> guard{script.mtx};
  EXPECT_EQ(script.registrations, 3);
}

// Four workers spread over three nodes.
allocate_request spread_of_four() {
  allocate_request req;
  container_ask ask{1, "worker", {256, 1, 0}, "", 4};
  ask.nodes = {"n1", "n2", "n3"};
  req.asks.push_back(ask);
  return req;
}

// The spread ask, a call within the window (200 ms), two after it.
void ask_then_idle_past_the_window(amrm_client& client) {
  ASSERT_TRUE(client.allocate(spread_of_four(), deadline_after(5s)));
  allocate_request idle;
  ASSERT_TRUE(client.allocate(idle, deadline_after(5s))); // within the window
  std::this_thread::sleep_for(300ms);
  ASSERT_TRUE(client.allocate(idle, deadline_after(5s)));
  ASSERT_TRUE(client.allocate(idle, deadline_after(5s))); // said once
}

// Spread placement: an ask naming nodes is strict at first (no rack or "*"
// grant, so no node takes more than its share); after the window what is
// still outstanding goes again, relaxed, so a node without room does not
// hold the gang.
TEST(amrm_client, a_spread_ask_is_strict_then_relaxed_for_what_is_left) {
  scripted_scheduler script;
  fake_server rm{[&](fake_peer& peer) { script.serve(peer); }};
  amrm_client client{make_ipc(), {peer("rm1", rm.port())}, amrm("t"), nullptr, quick()};
  client.set_spread_window(200ms);
  ASSERT_TRUE(client.register_application_master({"am", 0, ""}, deadline_after(5s)));
  ASSERT_NO_FATAL_FAILURE(ask_then_idle_past_the_window(client));
  std::lock_guard<std::mutex> guard{script.mtx};
  ASSERT_EQ(script.allocations.size(), 4u);
  auto& first = script.allocations[0];
  ASSERT_EQ(first.ask_size(), 4);
  EXPECT_EQ(first.ask(0).resource_name(), "*");
  EXPECT_FALSE(first.ask(0).relax_locality());
  EXPECT_EQ(first.ask(0).num_containers(), 4);
  EXPECT_EQ(first.ask(1).num_containers(), 2); // a node's share
  EXPECT_TRUE(first.ask(1).relax_locality());
  EXPECT_EQ(script.allocations[1].ask_size(), 0);
  auto& relaxed = script.allocations[2];
  ASSERT_EQ(relaxed.ask_size(), 4);
  EXPECT_TRUE(relaxed.ask(0).relax_locality());
  EXPECT_EQ(relaxed.ask(0).num_containers(), 4);
  EXPECT_EQ(script.allocations[3].ask_size(), 0);
}

TEST(amrm_client, a_packed_ask_is_relaxed_and_a_capped_one_stays_strict) {
  scripted_scheduler script;
  fake_server rm{[&](fake_peer& peer) { script.serve(peer); }};
  amrm_client client{make_ipc(), {peer("rm1", rm.port())}, amrm("t"), nullptr, quick()};
  client.set_spread_window(200ms);
  ASSERT_TRUE(client.register_application_master({"am", 0, ""}, deadline_after(5s)));
  allocate_request req;
  container_ask packed{1, "worker", {256, 1, 0}, "", 4};
  packed.nodes = {"n1", "n2", "n3"};
  packed.pack = true;
  container_ask capped{2, "ps", {256, 1, 0}, "", 2};
  capped.nodes = {"n1", "n2", "n3"};
  capped.max_per_node = 1;
  req.asks = {packed, capped};
  ASSERT_TRUE(client.allocate(req, deadline_after(5s)));
  std::this_thread::sleep_for(300ms);
  allocate_request idle;
  ASSERT_TRUE(client.allocate(idle, deadline_after(5s))); // after the window
  std::lock_guard<std::mutex> guard{script.mtx};
  ASSERT_EQ(script.allocations.size(), 2u);
  auto& first = script.allocations[0];
  ASSERT_EQ(first.ask_size(), 8);
  EXPECT_TRUE(first.ask(0).relax_locality()); // packed: relaxed at once
  EXPECT_EQ(first.ask(1).num_containers(), 4);
  EXPECT_FALSE(first.ask(4).relax_locality()); // capped: strict
  EXPECT_EQ(first.ask(5).num_containers(), 1);
  auto& later = script.allocations[1];
  ASSERT_EQ(later.ask_size(), 4); // the capped ask again, still strict
  EXPECT_EQ(later.ask(0).priority().priority(), 2);
  EXPECT_FALSE(later.ask(0).relax_locality());
  EXPECT_EQ(later.ask(1).num_containers(), 1);
}

// With the placement processor (which places a SchedulingRequest when
// allocate brings it, not on node heartbeats) a spread ask's strict window
// is a SchedulingRequest capped at the share; after the window it is
// cancelled and what is left goes relaxed, as ResourceRequests.
TEST(amrm_client, a_spread_ask_goes_to_the_placement_processor_then_relaxes) {
  scripted_scheduler script;
  script.keep = true;
  fake_server rm{[&](fake_peer& peer) { script.serve(peer); }};
  amrm_client client{make_ipc(), {peer("rm1", rm.port())}, amrm("t"), nullptr, quick()};
  client.set_spread_window(200ms);
  client.set_placement_constraints("placement-processor");
  ASSERT_TRUE(client.register_application_master({"am", 0, ""}, deadline_after(5s)));
  ASSERT_NO_FATAL_FAILURE(ask_then_idle_past_the_window(client));
  std::lock_guard<std::mutex> guard{script.mtx};
  ASSERT_EQ(script.allocations.size(), 4u);
  auto& first = script.allocations[0];
  EXPECT_EQ(first.ask_size(), 0);
  ASSERT_EQ(first.scheduling_requests_size(), 1);
  auto& sr = first.scheduling_requests(0);
  EXPECT_EQ(sr.resourcesizing().numallocations(), 4);
  EXPECT_EQ(sr.priority().priority(), 1);
  // At most 2 a node: no more than 1 already there.
  EXPECT_EQ(sr.placementconstraint().simpleconstraint().maxcardinality(), 1);
  EXPECT_EQ(sr.allocationtags(0), "worker");
  EXPECT_EQ(script.allocations[1].scheduling_requests_size(), 0);
  EXPECT_EQ(script.allocations[1].ask_size(), 0);
  auto& relaxed = script.allocations[2];
  ASSERT_EQ(relaxed.scheduling_requests_size(), 1); // the cancel
  EXPECT_EQ(relaxed.scheduling_requests(0).resourcesizing().numallocations(), 0);
  EXPECT_EQ(relaxed.scheduling_requests(0)
                .placementconstraint()
                .simpleconstraint()
                .maxcardinality(),
            1); // the same request, only its count changed
  auto* any = ask_named(relaxed, "*");
  ASSERT_NE(any, nullptr);
  EXPECT_TRUE(any->relax_locality());
  EXPECT_EQ(any->num_containers(), 4);
  EXPECT_EQ(script.allocations[3].ask_size(), 0);
  EXPECT_EQ(script.allocations[3].scheduling_requests_size(), 0);
}

// A spread request the processor rejects (a node without room for its
// share) relaxes with the next call, without waiting for the window; the
// scheduler handler, which places on heartbeats, keeps the strict
// ResourceRequests.
TEST(amrm_client, a_rejected_spread_request_relaxes_at_once) {
  scripted_scheduler script;
  script.keep = true;
  script.reject_scheduling = true;
  fake_server rm{[&](fake_peer& peer) { script.serve(peer); }};
  amrm_client client{make_ipc(), {peer("rm1", rm.port())}, amrm("t"), nullptr, quick()};
  client.set_placement_constraints("placement-processor");
  ASSERT_TRUE(client.register_application_master({"am", 0, ""}, deadline_after(5s)));
  auto req = spread_of_four();
  ASSERT_TRUE(client.allocate(req, deadline_after(5s))); // rejected
  allocate_request idle;
  ASSERT_TRUE(client.allocate(idle, deadline_after(5s))); // well within 3 s
  amrm_client heartbeats{
      make_ipc(), {peer("rm1", rm.port())}, amrm("t"), nullptr, quick()};
  heartbeats.set_placement_constraints("scheduler");
  ASSERT_TRUE(heartbeats.register_application_master({"am", 0, ""}, deadline_after(5s)));
  ASSERT_TRUE(heartbeats.allocate(req, deadline_after(5s)));
  std::lock_guard<std::mutex> guard{script.mtx};
  ASSERT_EQ(script.allocations.size(), 3u);
  EXPECT_EQ(script.allocations[0].scheduling_requests_size(), 1);
  auto& relaxed = script.allocations[1];
  EXPECT_EQ(relaxed.scheduling_requests_size(), 0); // the RM holds no request to cancel
  auto* any = ask_named(relaxed, "*");
  ASSERT_NE(any, nullptr);
  EXPECT_TRUE(any->relax_locality());
  EXPECT_EQ(any->num_containers(), 4);
  auto& strict = script.allocations[2];
  EXPECT_EQ(strict.scheduling_requests_size(), 0);
  auto* strict_any = ask_named(strict, "*");
  ASSERT_NE(strict_any, nullptr);
  EXPECT_FALSE(strict_any->relax_locality());
}

TEST(amrm_client, follows_the_scheduler_that_took_over) {
  scripted_scheduler script;
  fake_server rm2{[&](fake_peer& peer) { script.serve(peer); }};
  amrm_client client{make_ipc(),
                     {peer("rm1", dead_port()), peer("rm2", rm2.port())},
                     amrm("t"),
                     nullptr,
                     quick()};
  auto reg = client.register_application_master({"am", 0, ""}, deadline_after(5s));
  ASSERT_TRUE(reg) << reg.error().message();
  EXPECT_EQ(client.failover().failovers(), 1);
}

TEST(rm_peers, one_per_rm_id_from_its_own_key_or_its_hostname) {
  hadoop::configuration conf;
  conf.set("yarn.resourcemanager.address", "10.0.0.9:8032");
  auto plain = rm_peers(conf, "yarn.resourcemanager.address", 8032);
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->size(), 1u);
  EXPECT_EQ(format_rm_peers(*plain), "10.0.0.9:8032");
  conf.set("yarn.resourcemanager.ha.enabled", "true");
  conf.set("yarn.resourcemanager.ha.rm-ids", "rm1, rm2");
  conf.set("yarn.resourcemanager.scheduler.address.rm1", "10.0.0.5:18030");
  conf.set("yarn.resourcemanager.hostname.rm2", "10.0.0.6");
  auto ha = rm_peers(conf, "yarn.resourcemanager.scheduler.address", 8030);
  ASSERT_TRUE(ha) << ha.error().message();
  auto line = format_rm_peers(*ha);
  EXPECT_EQ(line, "rm1=10.0.0.5:18030,rm2=10.0.0.6:8030");
  auto back = parse_rm_peers(line, 8030);
  ASSERT_TRUE(back);
  EXPECT_EQ(format_rm_peers(*back), line);
  EXPECT_FALSE(parse_rm_peers("", 8030));
  conf.set("yarn.resourcemanager.ha.rm-ids", "rm1,rm3");
  auto missing = rm_peers(conf, "yarn.resourcemanager.scheduler.address", 8030);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("yarn.resourcemanager.hostname.rm3"),
            std::string::npos)
      << missing.error().message();
}

} // namespace
} // namespace tony::yarn
