// Conversions between tony's structs and the YARN protobuf records: GPUs in
// resource_value_map, asks, URLs of local resources, launch contexts.

#include <gtest/gtest.h>

#include "hadoop/token.hpp"
#include "hadoop/yarn/convert.hpp"

namespace tony::yarn {
namespace {

TEST(yarn_convert, gpus_travel_in_resource_value_map) {
  proto::ResourceProto p;
  convert::to_proto(resource{2048, 4, 2}, &p);
  EXPECT_EQ(p.memory(), 2048);
  EXPECT_EQ(p.virtual_cores(), 4);
  ASSERT_EQ(p.resource_value_map_size(), 1);
  EXPECT_EQ(p.resource_value_map(0).key(), "yarn.io/gpu");
  EXPECT_EQ(p.resource_value_map(0).value(), 2);
  EXPECT_EQ(convert::from_proto(p), (resource{2048, 4, 2}));

  proto::ResourceProto no_gpu;
  convert::to_proto(resource{512, 1, 0}, &no_gpu);
  EXPECT_EQ(no_gpu.resource_value_map_size(), 0);
}

TEST(yarn_convert, resource_from_the_rm_ignores_other_resource_types) {
  proto::ResourceProto p;
  p.set_memory(8192);
  p.set_virtual_cores(8);
  auto* mem = p.add_resource_value_map();
  mem->set_key("memory-mb");
  mem->set_value(8192);
  auto* gpu = p.add_resource_value_map();
  gpu->set_key("yarn.io/gpu");
  gpu->set_value(4);
  EXPECT_EQ(convert::from_proto(p), (resource{8192, 8, 4}));
}

TEST(yarn_convert, an_ask_becomes_an_any_host_resource_request) {
  container_ask ask;
  ask.priority = 3;
  ask.task_type = "worker";
  ask.capability = {256, 1, 1};
  ask.node_label = "gpu";
  ask.count = 5;
  proto::ResourceRequestProto p;
  convert::to_proto(ask, &p);
  EXPECT_EQ(p.priority().priority(), 3);
  EXPECT_EQ(p.resource_name(), "*");
  EXPECT_EQ(p.num_containers(), 5);
  EXPECT_TRUE(p.has_relax_locality());
  EXPECT_TRUE(p.relax_locality());
  EXPECT_EQ(p.node_label_expression(), "gpu");
  EXPECT_EQ(p.capability().resource_value_map(0).key(), "yarn.io/gpu");
}

// Spread: a node is asked for its share of the count (4 over 3 nodes: 2
// each, rounded up), racks and "*" for the whole count.
TEST(yarn_convert, an_ask_with_places_names_every_node_for_its_share_and_rack) {
  proto::AllocateRequestProto req;
  container_ask ask{3, "worker", {1024, 1, 0}, "", 4};
  convert::add_asks(ask, {{"n1", "/r1"}, {"n2", "/r1"}, {"n3", "/r2"}}, &req);
  ASSERT_EQ(req.ask_size(), 6); // ANY, 3 nodes, 2 racks
  std::vector<std::string> names;
  for (auto& r : req.ask()) {
    names.push_back(r.resource_name());
    bool node = r.resource_name()[0] == 'n';
    EXPECT_EQ(r.num_containers(), node ? 2 : 4) << r.resource_name();
    EXPECT_EQ(r.priority().priority(), 3);
    EXPECT_TRUE(r.relax_locality());
    EXPECT_EQ(r.capability().memory(), 1024);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"*", "n1", "n2", "n3", "/r1", "/r2"}));
}

TEST(yarn_convert, a_labelled_ask_or_no_places_stays_any_only) {
  proto::AllocateRequestProto labelled;
  convert::add_asks(container_ask{1, "worker", {1024, 1, 1}, "gpu", 2}, {{"n1", "/r1"}},
                    &labelled);
  ASSERT_EQ(labelled.ask_size(), 1);
  EXPECT_EQ(labelled.ask(0).resource_name(), "*");
  EXPECT_EQ(labelled.ask(0).node_label_expression(), "gpu");
  proto::AllocateRequestProto plain;
  convert::add_asks(container_ask{1, "worker", {1024, 1, 0}, "", 2}, {}, &plain);
  ASSERT_EQ(plain.ask_size(), 1);
  EXPECT_EQ(plain.ask(0).resource_name(), "*");
}

TEST(yarn_convert, an_ask_carries_its_own_placement) {
  proto::AllocateRequestProto req;
  container_ask ask{2, "worker", {1024, 1, 0}, "", 3};
  ask.nodes = {"n1", "n2"};
  ask.racks = {"/r1"};
  convert::add_asks(ask, &req);
  std::vector<std::string> names;
  for (auto& r : req.ask()) {
    names.push_back(r.resource_name());
    EXPECT_EQ(r.num_containers(), r.resource_name()[0] == 'n' ? 2 : 3);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"*", "n1", "n2", "/r1"}));
}

// Strict: only node-local grants (relaxLocality=false above the nodes), so
// no node takes more than its share; without nodes there is nothing to be
// strict about.
TEST(yarn_convert, a_strict_ask_relaxes_no_locality_above_its_nodes) {
  proto::AllocateRequestProto req;
  container_ask ask{2, "worker", {1024, 1, 0}, "", 3};
  ask.nodes = {"n1", "n2"};
  ask.racks = {"/r1"};
  convert::add_asks(ask, &req, convert::locality::strict);
  ASSERT_EQ(req.ask_size(), 4);
  for (auto& r : req.ask())
    EXPECT_EQ(r.relax_locality(), r.resource_name()[0] == 'n') << r.resource_name();
  proto::AllocateRequestProto plain;
  convert::add_asks(container_ask{1, "worker", {1024, 1, 0}, "", 2}, &plain,
                    convert::locality::strict);
  ASSERT_EQ(plain.ask_size(), 1);
  EXPECT_TRUE(plain.ask(0).relax_locality());
}

// pack: today's CapacityScheduler behaviour, each node asked for the whole
// count, so the first node to heartbeat with room takes the gang.
TEST(yarn_convert, a_packed_ask_names_every_node_for_the_whole_count) {
  proto::AllocateRequestProto req;
  container_ask ask{2, "worker", {1024, 1, 0}, "", 4};
  ask.nodes = {"n1", "n2", "n3"};
  ask.pack = true;
  convert::add_asks(ask, &req);
  ASSERT_EQ(req.ask_size(), 4);
  for (auto& r : req.ask()) {
    EXPECT_EQ(r.num_containers(), 4) << r.resource_name();
    EXPECT_TRUE(r.relax_locality()) << r.resource_name();
  }
}

// max_per_node: strict whatever the phase (a relaxed ask would let a node
// take more), each node up to its share while spreading, then up to the cap.
TEST(yarn_convert, a_capped_ask_is_always_strict_and_never_above_the_cap) {
  container_ask ask{2, "worker", {1024, 1, 0}, "", 5};
  ask.nodes = {"n1", "n2", "n3"};
  ask.racks = {"/r1"};
  ask.max_per_node = 3;
  for (auto how : {convert::locality::strict, convert::locality::relaxed}) {
    proto::AllocateRequestProto req;
    convert::add_asks(ask, &req, how);
    ASSERT_EQ(req.ask_size(), 5);
    for (auto& r : req.ask()) {
      bool node = r.resource_name()[0] == 'n';
      EXPECT_EQ(r.relax_locality(), node) << r.resource_name();
      auto expected = !node ? 5 : how == convert::locality::strict ? 2 : 3;
      EXPECT_EQ(r.num_containers(), expected) << r.resource_name();
    }
  }
  proto::AllocateRequestProto packed;
  ask.pack = true;
  ask.max_per_node = 2;
  convert::add_asks(ask, &packed);
  for (auto& r : packed.ask())
    EXPECT_EQ(r.num_containers(), r.resource_name()[0] == 'n' ? 2 : 5)
        << r.resource_name();
  EXPECT_FALSE(packed.ask(0).relax_locality());
}

// Placement constraints enabled: a capped type is one SchedulingRequest,
// tagged with the type, anti-affine with its own tag on each node (YARN
// counts the tags already on a node, so a cap of n is a maximum of n - 1,
// and a cap of 1 a NOTIN). Nodes and racks are not named.
TEST(yarn_convert, a_capped_ask_becomes_a_scheduling_request_with_anti_affinity) {
  container_ask ask{4, "worker", {1024, 2, 1}, "", 3};
  ask.nodes = {"n1", "n2"};
  ask.racks = {"/r1"};
  ask.max_per_node = 1;
  EXPECT_TRUE(convert::by_scheduling_request(ask));
  proto::SchedulingRequestProto req;
  convert::to_proto(ask, &req);
  EXPECT_EQ(req.priority().priority(), 4);
  EXPECT_EQ(req.allocationrequestid(), 4);
  ASSERT_EQ(req.allocationtags_size(), 1);
  EXPECT_EQ(req.allocationtags(0), "worker");
  // GUARANTEED, the only kind allowed; always set (the RM compares an
  // updated request with its execution type and fails on a missing one).
  ASSERT_TRUE(req.has_executiontype());
  EXPECT_TRUE(req.executiontype().has_execution_type());
  EXPECT_EQ(req.executiontype().execution_type(), 1);
  EXPECT_EQ(req.resourcesizing().numallocations(), 3);
  EXPECT_EQ(req.resourcesizing().resources().memory(), 1024);
  EXPECT_EQ(req.resourcesizing().resources().virtual_cores(), 2);
  EXPECT_EQ(req.resourcesizing().resources().resource_value_map(0).key(), "yarn.io/gpu");
  auto& c = req.placementconstraint().simpleconstraint();
  EXPECT_EQ(c.scope(), "node");
  EXPECT_EQ(c.mincardinality(), 0);
  EXPECT_EQ(c.maxcardinality(), 0); // NOTIN,NODE,worker
  ASSERT_EQ(c.targetexpressions_size(), 1);
  EXPECT_EQ(c.targetexpressions(0).targettype(), 2); // ALLOCATION_TAG
  EXPECT_EQ(c.targetexpressions(0).targetkey(), "self");
  ASSERT_EQ(c.targetexpressions(0).targetvalues_size(), 1);
  EXPECT_EQ(c.targetexpressions(0).targetvalues(0), "worker");

  // Two per node: at most one already there. A count of 0 cancels.
  ask.max_per_node = 2;
  ask.count = 0;
  proto::SchedulingRequestProto two;
  convert::to_proto(ask, &two);
  EXPECT_EQ(two.placementconstraint().simpleconstraint().maxcardinality(), 1);
  EXPECT_TRUE(two.resourcesizing().has_numallocations());
  EXPECT_EQ(two.resourcesizing().numallocations(), 0);

  // Uncapped or labelled asks keep ResourceRequests.
  ask.max_per_node = 0;
  EXPECT_FALSE(convert::by_scheduling_request(ask));
  ask.max_per_node = 1;
  ask.node_label = "gpu";
  EXPECT_FALSE(convert::by_scheduling_request(ask));
}

TEST(yarn_convert, urls_split_into_scheme_host_port_and_file) {
  proto::URLProto hdfs;
  ASSERT_TRUE(convert::to_proto("hdfs://nn.example:8020/user/a/job.zip", &hdfs));
  EXPECT_EQ(hdfs.scheme(), "hdfs");
  EXPECT_EQ(hdfs.host(), "nn.example");
  EXPECT_EQ(hdfs.port(), 8020);
  EXPECT_EQ(hdfs.file(), "/user/a/job.zip");

  proto::URLProto file;
  ASSERT_TRUE(convert::to_proto("file:///tmp/x y/z", &file));
  EXPECT_EQ(file.scheme(), "file");
  EXPECT_FALSE(file.has_host());
  EXPECT_EQ(file.port(), -1);
  EXPECT_EQ(file.file(), "/tmp/x y/z");

  proto::URLProto no_port;
  ASSERT_TRUE(convert::to_proto("hdfs://nn/x", &no_port));
  EXPECT_EQ(no_port.host(), "nn");
  EXPECT_EQ(no_port.port(), -1);

  proto::URLProto bad;
  EXPECT_FALSE(convert::to_proto("/tmp/no-scheme", &bad));
  EXPECT_FALSE(convert::to_proto("hdfs://nn:8020", &bad));
  EXPECT_FALSE(convert::to_proto("hdfs://nn:x/y", &bad));
}

TEST(yarn_convert, launch_context_carries_resources_env_commands_and_tokens) {
  container_launch launch;
  local_resource res;
  res.name = "job.zip";
  res.url = "hdfs://nn:8020/staging/job.zip";
  res.size = 1234;
  res.timestamp = 1700000000123;
  res.archive = true;
  launch.resources.push_back(res);
  launch.env = {{"A", "1"}, {"B", "two"}};
  launch.commands = {"/bin/sh -c 'exit 3'", "1><LOG_DIR>/stdout"};
  launch.tokens = std::string("HDTS\0\0\0", 7);
  proto::ContainerLaunchContextProto p;
  ASSERT_TRUE(convert::to_proto(launch, &p));
  ASSERT_EQ(p.localresources_size(), 1);
  EXPECT_EQ(p.localresources(0).key(), "job.zip");
  auto& lr = p.localresources(0).value();
  EXPECT_EQ(lr.size(), 1234);
  EXPECT_EQ(lr.timestamp(), 1700000000123);
  EXPECT_EQ(lr.type(), 1);       // ARCHIVE
  EXPECT_EQ(lr.visibility(), 3); // APPLICATION
  ASSERT_EQ(p.environment_size(), 2);
  EXPECT_EQ(p.environment(1).key(), "B");
  EXPECT_EQ(p.environment(1).value(), "two");
  ASSERT_EQ(p.command_size(), 2);
  EXPECT_EQ(p.command(0), "/bin/sh -c 'exit 3'");
  EXPECT_EQ(p.tokens(), launch.tokens);

  launch.resources[0].visibility = "SECRET";
  proto::ContainerLaunchContextProto bad;
  auto err = convert::to_proto(launch, &bad);
  ASSERT_FALSE(err);
  EXPECT_NE(err.error().message().find("visibility"), std::string::npos);
}

TEST(yarn_convert, launch_context_carries_the_applications_acls) {
  container_launch launch;
  proto::ContainerLaunchContextProto none;
  ASSERT_TRUE(convert::to_proto(launch, &none));
  EXPECT_EQ(none.application_acls_size(), 0); // the RM's default: " ", nobody
  launch.acls = {{"VIEW_APP", "alice ml"}, {"MODIFY_APP", " "}};
  proto::ContainerLaunchContextProto p;
  ASSERT_TRUE(convert::to_proto(launch, &p));
  ASSERT_EQ(p.application_acls_size(), 2);
  EXPECT_EQ(p.application_acls(0).accesstype(), proto::APPACCESS_MODIFY_APP);
  EXPECT_EQ(p.application_acls(0).acl(), " ");
  EXPECT_EQ(p.application_acls(1).accesstype(), proto::APPACCESS_VIEW_APP);
  EXPECT_EQ(p.application_acls(1).acl(), "alice ml");
  // On the wire as Hadoop's ContainerLaunchContextProto has it: field 6,
  // an enum at 1 and the ACL text at 2.
  auto wire = p.SerializeAsString();
  EXPECT_NE(wire.find(std::string{"\x32\x0c\x08\x01\x12\x08"
                                  "alice ml",
                                  14}),
            std::string::npos);
  launch.acls = {{"ADMIN", "*"}};
  proto::ContainerLaunchContextProto bad;
  auto err = convert::to_proto(launch, &bad);
  ASSERT_FALSE(err);
  EXPECT_NE(err.error().message().find("unknown application access type 'ADMIN'"),
            std::string::npos);
}

TEST(yarn_convert, granted_containers_keep_their_token_opaque) {
  proto::ContainerProto p;
  auto* id = p.mutable_id();
  id->mutable_app_attempt_id()->mutable_application_id()->set_cluster_timestamp(17);
  id->mutable_app_attempt_id()->mutable_application_id()->set_id(1);
  id->mutable_app_attempt_id()->set_attemptid(1);
  id->set_id(2);
  p.mutable_nodeid()->set_host("node1");
  p.mutable_nodeid()->set_port(45454);
  p.set_node_http_address("node1:8042");
  p.mutable_resource()->set_memory(256);
  p.mutable_resource()->set_virtual_cores(1);
  p.mutable_priority()->set_priority(4);
  auto* tok = p.mutable_container_token();
  tok->set_identifier("id");
  tok->set_password("pw");
  tok->set_kind("ContainerToken");
  tok->set_service("node1:45454");
  auto c = convert::container_from_proto(p);
  EXPECT_EQ(c.id, "container_17_0001_01_000002");
  EXPECT_EQ(c.host, "node1");
  EXPECT_EQ(c.port, 45454);
  EXPECT_EQ(c.http_address, "node1:8042");
  EXPECT_EQ(c.priority, 4);
  EXPECT_EQ(c.capability, (resource{256, 1, 0}));
  auto back = hadoop::parse_token_proto(c.token);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, "ContainerToken");
  EXPECT_EQ(back->service, "node1:45454");
}

TEST(yarn_convert, container_ids_set_both_app_fields) {
  auto id = parse_container_id("container_e03_17_0001_02_000009");
  ASSERT_TRUE(id);
  proto::ContainerIdProto p;
  convert::to_proto(*id, &p);
  EXPECT_EQ(p.app_id().cluster_timestamp(), 17);
  EXPECT_EQ(p.app_attempt_id().application_id().id(), 1);
  EXPECT_EQ(p.app_attempt_id().attemptid(), 2);
  EXPECT_EQ(p.id(), (int64_t{3} << 40) | 9);
  EXPECT_EQ(convert::from_proto(p), *id);
}

TEST(yarn_convert, application_report_states_and_tokens) {
  proto::ApplicationReportProto p;
  p.mutable_applicationid()->set_cluster_timestamp(5);
  p.mutable_applicationid()->set_id(7);
  p.set_yarn_application_state(6);
  p.set_final_application_status(1);
  p.set_diagnostics("done");
  auto* tok = p.mutable_am_rm_token();
  tok->set_identifier("i");
  tok->set_password("p");
  tok->set_kind("YARN_AM_RM_TOKEN");
  tok->set_service("");
  p.mutable_currentapplicationattemptid()->mutable_application_id()->set_id(7);
  p.mutable_currentapplicationattemptid()->set_attemptid(1);
  auto r = convert::from_proto(p);
  EXPECT_EQ(to_string(r.id), "application_5_0007");
  EXPECT_EQ(r.state, application_state::finished);
  EXPECT_STREQ(to_string(r.state), "FINISHED");
  EXPECT_EQ(r.final, final_status::succeeded);
  ASSERT_TRUE(r.am_rm_token);
  EXPECT_EQ(r.am_rm_token->kind, "YARN_AM_RM_TOKEN");
  ASSERT_TRUE(r.current_attempt);
  EXPECT_EQ(r.current_attempt->attempt, 1);
  p.set_yarn_application_state(99);
  EXPECT_EQ(convert::from_proto(p).state, application_state::unknown);
}

TEST(yarn_convert, application_report_says_where_log_aggregation_is) {
  proto::ApplicationReportProto p;
  EXPECT_EQ(convert::from_proto(p).log_aggregation, log_aggregation_state::unknown);
  p.set_log_aggregation_status(3); // LOG_RUNNING
  EXPECT_EQ(convert::from_proto(p).log_aggregation, log_aggregation_state::running);
  EXPECT_FALSE(is_final(log_aggregation_state::running));
  EXPECT_FALSE(is_final(log_aggregation_state::running_with_failure));
  EXPECT_FALSE(is_final(log_aggregation_state::not_started));
  p.set_log_aggregation_status(4); // LOG_SUCCEEDED
  EXPECT_EQ(convert::from_proto(p).log_aggregation, log_aggregation_state::succeeded);
  for (auto x : {log_aggregation_state::disabled, log_aggregation_state::succeeded,
                 log_aggregation_state::failed, log_aggregation_state::timed_out})
    EXPECT_TRUE(is_final(x));
  p.set_log_aggregation_status(42);
  EXPECT_EQ(convert::from_proto(p).log_aggregation, log_aggregation_state::unknown);
}

} // namespace
} // namespace tony::yarn
