// tony's Hadoop RPC clients against a real ResourceManager and NodeManager
// (scripts/yarn/cluster.sh). HADOOP_CONF_DIR names the running cluster's
// conf dir; without it every test skips and says so.
//
// Registered twice: against the shared cluster (authentication) and against
// a cluster started with --rpc-protection privacy, where every token
// connection wraps its calls (auth-conf).
//
// The unmanaged-AM test plays a whole application by hand: submit with
// unmanaged_am, take the AMRMToken from the application report, register
// over SASL DIGEST-MD5, allocate a container, start `exit 3` in it with the
// node's NMToken, see the exit status come back, unregister SUCCEEDED, and
// finally ask Hadoop's own CLI whether it agrees.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "hadoop/configuration.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/ipc_connection.hpp"
#include "hadoop/proto/hadoop_rpc.pb.h"
#include "hadoop/sasl_qop.hpp"
#include "hadoop/yarn/amrm_client.hpp"
#include "hadoop/yarn/application_client.hpp"
#include "hadoop/yarn/nm_client.hpp"
#include "hadoop/yarn/proto/yarn.pb.h"
#include "hadoop/yarn/protocols.hpp"

namespace tony::yarn {
namespace {

using namespace std::chrono_literals;
using hadoop::deadline_after;

constexpr auto call_timeout = 30s;

class yarn_rpc : public ::testing::Test {
protected:
  void SetUp() override {
    auto* dir = std::getenv("HADOOP_CONF_DIR");
    if (dir == nullptr || *dir == '\0')
      GTEST_SKIP() << "HADOOP_CONF_DIR is not set: start a cluster with "
                      "scripts/yarn/cluster.sh start and export its conf dir";
    conf_dir_ = dir;
    auto conf = hadoop::configuration::load_dir(conf_dir_);
    ASSERT_TRUE(conf) << conf.error().message();
    conf_ = std::move(*conf);
    ipc_ = std::make_shared<hadoop::ipc_client>();
    auto client = application_client::from_configuration(ipc_, conf_);
    ASSERT_TRUE(client) << client.error().message();
    rm_.emplace(std::move(*client));
  }

  /// True if the cluster declares yarn.io/gpu (resource-types.xml).
  bool cluster_declares_gpus() const {
    hadoop::configuration types;
    if (!types.add_file(conf_dir_ + "/resource-types.xml"))
      return false;
    return types.get_or("yarn.resource-types", "").find(gpu_resource) !=
           std::string::npos;
  }

  /// Submits an unmanaged AM and waits until its attempt is launched.
  /// Returns the application id and the attempt's AMRMToken.
  std::pair<application_id, hadoop::token> start_unmanaged_am(const std::string& name) {
    auto app = rm_->get_new_application(deadline_after(call_timeout));
    EXPECT_TRUE(app) << app.error().message();
    if (!app)
      return {};
    submission_context ctx;
    ctx.id = app->id;
    ctx.name = name;
    ctx.application_type = "TONY-TEST";
    ctx.unmanaged_am = true;
    ctx.am_launch.tokens = hadoop::serialize_credentials(hadoop::credentials{});
    auto submitted = rm_->submit_application(ctx, deadline_after(call_timeout));
    EXPECT_TRUE(submitted) << submitted.error().message();
    auto until = hadoop::deadline_after(60s);
    while (!hadoop::expired(until)) {
      auto report = rm_->get_application_report(app->id, deadline_after(call_timeout));
      EXPECT_TRUE(report) << report.error().message();
      if (!report)
        break;
      if (report->am_rm_token)
        return {app->id, *report->am_rm_token};
      if (is_terminal(report->state)) {
        ADD_FAILURE() << to_string(app->id) << " ended early: " << report->diagnostics;
        break;
      }
      std::this_thread::sleep_for(200ms);
    }
    ADD_FAILURE() << "no AMRMToken for " << to_string(app->id) << " within 60 s";
    return {app->id, hadoop::token{}};
  }

  std::unique_ptr<amrm_client> make_amrm(const hadoop::token& tok) {
    auto scheduler = scheduler_address(conf_);
    EXPECT_TRUE(scheduler) << scheduler.error().message();
    return std::make_unique<amrm_client>(ipc_, *scheduler, tok, nm_tokens_);
  }

  /// Heartbeats until `done` says the response is the one awaited.
  template <class Pred>
  std::optional<allocate_response> allocate_until(amrm_client& am, allocate_request first,
                                                  Pred done) {
    auto req = std::move(first);
    auto until = hadoop::deadline_after(90s);
    while (!hadoop::expired(until)) {
      // The caller echoes the last response id (tony's allocation ledger).
      req.response_id = last_response_id_;
      auto rsp = am.allocate(req, deadline_after(call_timeout));
      EXPECT_TRUE(rsp) << rsp.error().message();
      if (!rsp)
        return std::nullopt;
      last_response_id_ = rsp->response_id;
      if (done(*rsp))
        return *rsp;
      // Asks are absolute: re-sending them would be harmless but is not
      // needed; the RM keeps the outstanding count.
      req = allocate_request{};
      std::this_thread::sleep_for(250ms);
    }
    return std::nullopt;
  }

  /// Waits until the RM reports `id` in a terminal state.
  application_report wait_until_done(const application_id& id) {
    auto until = hadoop::deadline_after(60s);
    application_report last;
    while (!hadoop::expired(until)) {
      auto report = rm_->get_application_report(id, deadline_after(call_timeout));
      EXPECT_TRUE(report) << report.error().message();
      if (!report)
        break;
      last = *report;
      if (is_terminal(report->state))
        break;
      std::this_thread::sleep_for(200ms);
    }
    return last;
  }

  /// Output (stdout + stderr) and exit code of Hadoop's own CLI.
  std::pair<std::string, int> hadoop_cli(const std::string& args) {
    // The cluster's state dir is the parent of its conf dir.
    auto state = conf_dir_.substr(0, conf_dir_.find_last_of('/'));
    auto cmd = std::string{TONY_SOURCE_DIR} + "/scripts/yarn/yarn.sh --dir '" + state +
               "' " + args + " 2>&1";
    std::string out;
    auto* pipe = ::popen(cmd.c_str(), "r");
    if (pipe == nullptr)
      return {"popen failed", -1};
    std::array<char, 4096> buf;
    while (auto n = std::fread(buf.data(), 1, buf.size(), pipe))
      out.append(buf.data(), n);
    auto status = ::pclose(pipe);
    return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
  }

  std::string conf_dir_;
  hadoop::configuration conf_;
  std::shared_ptr<hadoop::ipc_client> ipc_;
  std::optional<application_client> rm_;
  std::shared_ptr<nm_token_cache> nm_tokens_ = std::make_shared<nm_token_cache>();
  int32_t last_response_id_ = 0; // one AM per test
};

TEST_F(yarn_rpc, cluster_nodes_lists_the_node_manager) {
  auto nodes = rm_->get_cluster_nodes(deadline_after(call_timeout));
  ASSERT_TRUE(nodes) << nodes.error().message();
  ASSERT_FALSE(nodes->empty());
  auto& nm = nodes->front();
  EXPECT_EQ(nm.state, "RUNNING") << nm.health_report;
  EXPECT_FALSE(nm.host.empty());
  EXPECT_GT(nm.port, 0);
  EXPECT_GT(nm.capability.memory_mb, 0);
  EXPECT_GT(nm.capability.vcores, 0);
  if (cluster_declares_gpus()) {
    EXPECT_GT(nm.capability.gpus, 0) << "the cluster declares yarn.io/gpu";
  }
  auto metrics = rm_->get_cluster_metrics(deadline_after(call_timeout));
  ASSERT_TRUE(metrics) << metrics.error().message();
  EXPECT_GE(metrics->num_node_managers, 1);
}

TEST_F(yarn_rpc, get_new_application_returns_an_id) {
  auto first = rm_->get_new_application(deadline_after(call_timeout));
  ASSERT_TRUE(first) << first.error().message();
  auto second = rm_->get_new_application(deadline_after(call_timeout));
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_GT(first->id.cluster_timestamp, 0);
  EXPECT_EQ(second->id.cluster_timestamp, first->id.cluster_timestamp);
  // Ids rise, but only by one when no other client asked in between: the
  // cluster is shared with the tier's other tests, which run in parallel.
  EXPECT_GT(second->id.id, first->id.id);
  EXPECT_GT(first->max_capability.memory_mb, 0);
  auto text = to_string(first->id);
  EXPECT_EQ(text.rfind("application_", 0), 0u);
  EXPECT_EQ(to_string(*parse_application_id(text)), text);
}

TEST_F(yarn_rpc, unmanaged_am_runs_a_container_that_exits_3) {
  auto [app, amrm_token] = start_unmanaged_am("tony yarn_rpc exit 3");
  ASSERT_FALSE(amrm_token.identifier.empty());
  EXPECT_EQ(amrm_token.kind, hadoop::amrm_token_kind);
  auto am = make_amrm(amrm_token);

  auto reg =
      am->register_application_master({"localhost", 0, ""}, deadline_after(call_timeout));
  ASSERT_TRUE(reg) << reg.error().message();
  EXPECT_GT(reg->max_capability.memory_mb, 0);

  allocate_request ask;
  ask.asks.push_back(container_ask{1, "worker", {256, 1, 0}, "", 1});
  auto granted = allocate_until(
      *am, ask, [](const allocate_response& r) { return !r.allocated.empty(); });
  ASSERT_TRUE(granted) << "no container within 90 s";
  ASSERT_EQ(granted->allocated.size(), 1u);
  auto c = granted->allocated.front();
  EXPECT_GE(c.capability.memory_mb, 256);
  EXPECT_EQ(c.priority, 1);
  EXPECT_TRUE(nm_tokens_->get(c.host + ":" + std::to_string(c.port)))
      << "no NMToken for " << c.host << ":" << c.port;

  nm_client nm{ipc_, nm_tokens_};
  launch_spec spec;
  spec.target = c;
  spec.command = {"/bin/sh -c 'exit 3'", "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"};
  spec.env = {{"TONY_TEST", "yarn_rpc"}};
  auto started = nm.start_container(spec, deadline_after(call_timeout));
  ASSERT_TRUE(started) << started.error().message();

  auto status = nm.get_container_status(c, deadline_after(call_timeout));
  ASSERT_TRUE(status) << status.error().message();
  EXPECT_EQ(status->container_id, c.id);

  auto done = allocate_until(*am, {}, [&](const allocate_response& r) {
    for (auto& x : r.completed)
      if (x.container_id == c.id)
        return true;
    return false;
  });
  ASSERT_TRUE(done) << "container " << c.id << " did not complete within 90 s";
  for (auto& x : done->completed) {
    if (x.container_id == c.id) {
      EXPECT_EQ(x.exit_status, 3) << x.diagnostics;
    }
  }

  auto finished = am->finish_application_master({"SUCCEEDED", "exit 3 seen", ""},
                                                deadline_after(call_timeout));
  ASSERT_TRUE(finished) << finished.error().message();

  auto report = wait_until_done(app);
  EXPECT_EQ(report.state, application_state::finished) << to_string(report.state);
  EXPECT_EQ(report.final, final_status::succeeded) << to_string(report.final);

  // Hadoop's own client must agree.
  auto [out, rc] = hadoop_cli("application -status " + to_string(app));
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("State : FINISHED"), std::string::npos) << out;
  EXPECT_NE(out.find("Final-State : SUCCEEDED"), std::string::npos) << out;
}

TEST_F(yarn_rpc, a_gpu_ask_is_encoded_and_granted) {
  if (!cluster_declares_gpus())
    GTEST_SKIP() << "the cluster does not declare yarn.io/gpu";
  auto [app, amrm_token] = start_unmanaged_am("tony yarn_rpc gpu");
  ASSERT_FALSE(amrm_token.identifier.empty());
  auto am = make_amrm(amrm_token);
  ASSERT_TRUE(am->register_application_master({"localhost", 0, ""},
                                              deadline_after(call_timeout)));
  allocate_request ask;
  ask.asks.push_back(container_ask{2, "worker", {256, 1, 1}, "", 1});
  auto granted = allocate_until(
      *am, ask, [](const allocate_response& r) { return !r.allocated.empty(); });
  ASSERT_TRUE(granted) << "no GPU container within 90 s";
  auto c = granted->allocated.front();
  EXPECT_EQ(c.capability.gpus, 1);
  EXPECT_EQ(c.priority, 2);

  allocate_request release;
  release.releases.push_back(c.id);
  auto released = allocate_until(*am, release, [&](const allocate_response& r) {
    for (auto& x : r.completed)
      if (x.container_id == c.id)
        return true;
    return false;
  });
  EXPECT_TRUE(released) << "the released container never showed up as completed";
  ASSERT_TRUE(
      am->finish_application_master({"SUCCEEDED", "", ""}, deadline_after(call_timeout)));
  EXPECT_EQ(wait_until_done(app).final, final_status::succeeded);
}

TEST_F(yarn_rpc, blacklisted_nodes_get_no_container) {
  auto nodes = rm_->get_cluster_nodes(deadline_after(call_timeout));
  ASSERT_TRUE(nodes) << nodes.error().message();
  if (nodes->size() < 2)
    GTEST_SKIP() << "the cluster has one node";
  auto [app, amrm_token] = start_unmanaged_am("tony yarn_rpc blacklist");
  auto am = make_amrm(amrm_token);
  ASSERT_TRUE(am->register_application_master({"localhost", 0, ""},
                                              deadline_after(call_timeout)));
  // Every node but the last is blacklisted with the ask itself.
  allocate_request ask;
  ask.asks.push_back(container_ask{1, "worker", {256, 1, 0}, "", 1});
  for (size_t i = 0; i + 1 < nodes->size(); ++i)
    ask.blacklist_additions.push_back((*nodes)[i].host);
  auto granted = allocate_until(
      *am, ask, [](const allocate_response& r) { return !r.allocated.empty(); });
  ASSERT_TRUE(granted) << "no container within 90 s";
  EXPECT_EQ(granted->allocated.front().host, nodes->back().host);
  allocate_request release;
  release.releases.push_back(granted->allocated.front().id);
  EXPECT_TRUE(
      allocate_until(*am, release, [](const allocate_response&) { return true; }));
  ASSERT_TRUE(
      am->finish_application_master({"SUCCEEDED", "", ""}, deadline_after(call_timeout)));
}

TEST_F(yarn_rpc, the_scheduler_refuses_simple_auth_with_its_reason) {
  auto scheduler = scheduler_address(conf_);
  ASSERT_TRUE(scheduler);
  hadoop::connection_params target;
  target.address = *scheduler;
  target.protocol = application_master_protocol;
  target.user = "nobody";
  target.server_kind = "ResourceManager scheduler";
  hadoop::proto::IpcConnectionContextProto any; // the call never gets that far
  auto rsp = ipc_->call_raw(target, "allocate", any, deadline_after(call_timeout));
  ASSERT_FALSE(rsp);
  EXPECT_NE(rsp.error().message().find("SIMPLE authentication is not enabled"),
            std::string::npos)
      << rsp.error().message();
}

TEST_F(yarn_rpc, a_forged_amrm_token_fails_sasl) {
  auto [app, amrm_token] = start_unmanaged_am("tony yarn_rpc forged token");
  ASSERT_FALSE(amrm_token.identifier.empty());
  auto forged = amrm_token;
  forged.password = std::string(forged.password.size(), 'x');
  auto am = make_amrm(forged);
  auto reg =
      am->register_application_master({"localhost", 0, ""}, deadline_after(call_timeout));
  ASSERT_FALSE(reg);
  EXPECT_EQ(reg.error().code(), hadoop::error_code::auth) << reg.error().message();
  auto killed = rm_->force_kill_application(app, "forged-token test done",
                                            deadline_after(call_timeout));
  EXPECT_TRUE(killed) << killed.error().message();
  EXPECT_EQ(wait_until_done(app).state, application_state::killed);
}

TEST_F(yarn_rpc, the_scheduler_connection_takes_the_cluster_protection) {
  // hadoop.rpc.protection of the cluster (cluster.sh --rpc-protection)
  // decides the QOP of every token connection: with privacy every call is
  // wrapped (auth-conf).
  auto protection = hadoop::parse_rpc_protection(
      conf_.get_or("hadoop.rpc.protection", "authentication"));
  ASSERT_TRUE(protection) << protection.error().message();
  hadoop::qop wanted = hadoop::qop::auth;
  ASSERT_TRUE(protection->pick(protection->bits(), wanted));
  auto [app, amrm_token] = start_unmanaged_am("tony yarn_rpc qop");
  ASSERT_FALSE(amrm_token.identifier.empty());
  auto scheduler = scheduler_address(conf_);
  ASSERT_TRUE(scheduler) << scheduler.error().message();
  hadoop::connection_params target;
  target.address = *scheduler;
  target.protocol = application_master_protocol;
  target.auth_token = amrm_token;
  target.server_kind = "ResourceManager scheduler";
  auto conn = hadoop::ipc_connection::open(target, {}, std::string(16, 'q'),
                                           deadline_after(call_timeout));
  ASSERT_TRUE(conn) << conn.error().message();
  EXPECT_EQ((*conn)->auth_method(), "TOKEN");
  EXPECT_EQ((*conn)->negotiated_qop(), wanted)
      << "negotiated " << hadoop::to_string((*conn)->negotiated_qop()) << ", the cluster "
      << "sets hadoop.rpc.protection=" << hadoop::to_string(*protection);
  // And calls work on it, wrapped or not.
  proto::RegisterApplicationMasterRequestProto req;
  req.set_host("localhost");
  req.set_rpc_port(0);
  auto reg =
      (*conn)->call("registerApplicationMaster", req, deadline_after(call_timeout));
  EXPECT_TRUE(reg) << reg.error().message();
  (*conn)->close();
  auto killed =
      rm_->force_kill_application(app, "qop test done", deadline_after(call_timeout));
  EXPECT_TRUE(killed) << killed.error().message();
  EXPECT_EQ(wait_until_done(app).state, application_state::killed);
}

TEST_F(yarn_rpc, an_unknown_application_is_a_remote_error) {
  application_id bogus{1, 999999};
  auto report = rm_->get_application_report(bogus, deadline_after(call_timeout));
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), hadoop::error_code::remote);
  EXPECT_TRUE(report.error().is_remote("ApplicationNotFoundException"))
      << report.error().message();
}

} // namespace
} // namespace tony::yarn
