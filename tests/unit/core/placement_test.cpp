// Placement over the nodes the ResourceManager listed: what each type's
// asks carry, what the AM's log says, a lost node's share, and a cap per
// node that the nodes cannot hold.

#include "core/placement.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "driver.hpp"

namespace tony {
namespace {

using testing::driver;
using testing::type_of;
using testing::workers_and_ps;

const std::vector<std::string> three_nodes{"node0", "node1", "node2"};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::vector<std::string> notes_of(const driver& d) {
  std::vector<std::string> result;
  for (auto& n : d.ever<core::note>())
    result.push_back(n.text);
  return result;
}

TEST(placement, asks_carry_each_types_placement_and_the_log_says_it) {
  auto job = workers_and_ps();
  type_of(job, "worker").pack = true;
  type_of(job, "ps").max_per_node = 1;
  driver d{job, three_nodes};
  d.start();
  auto asks = d.ever<core::ask_containers>();
  ASSERT_EQ(asks.size(), 2u);
  for (auto& a : asks) {
    EXPECT_EQ(a.ask.nodes, three_nodes);
    EXPECT_EQ(a.ask.pack, a.ask.task_type == "worker");
    EXPECT_EQ(a.ask.max_per_node, a.ask.task_type == "ps" ? 1 : 0);
  }
  auto notes = notes_of(d);
  auto said = [&](const std::string& part) {
    return std::any_of(notes.begin(), notes.end(),
                       [&](auto& n) { return contains(n, part); });
  };
  EXPECT_TRUE(said("placement of worker: packed: each of 3 nodes asked for all 2"));
  EXPECT_TRUE(said("placement of ps: spread: each of 3 nodes asked for its share (1)"));
  EXPECT_TRUE(said("at most 1 per node, node-local only"));
}

TEST(placement, the_local_backend_without_nodes_logs_nothing_of_it) {
  driver d{workers_and_ps(), std::vector<std::string>{}};
  d.start();
  for (auto& n : notes_of(d))
    EXPECT_FALSE(contains(n, "placement")) << n;
  for (auto& a : d.ever<core::ask_containers>())
    EXPECT_TRUE(a.ask.nodes.empty());
}

TEST(placement, a_lost_node_gets_no_share_of_the_next_asks) {
  auto job = workers_and_ps();
  job.policy.max_attempts = 2;
  driver d{job, three_nodes};
  d.run_job();
  std::string lost;
  for (auto& l : d.ever<core::launch>())
    if (l.task == task_id{"worker", 0})
      lost = l.target.host;
  ASSERT_FALSE(lost.empty());
  auto before = d.ever<core::ask_containers>().size();
  d.send(core::executor_lost{d.task({"worker", 0}).container_id, "connection reset"});
  ASSERT_EQ(d.lc.attempt(), 2);
  auto asks = d.ever<core::ask_containers>();
  ASSERT_GT(asks.size(), before);
  for (size_t i = before; i < asks.size(); ++i) {
    auto& nodes = asks[i].ask.nodes;
    if (asks[i].ask.count <= 0)
      continue;
    EXPECT_EQ(nodes.size(), 2u);
    EXPECT_EQ(std::count(nodes.begin(), nodes.end(), lost), 0) << lost;
  }
}

TEST(placement, a_cap_the_listed_nodes_cannot_hold_fails_at_once_saying_why) {
  auto job = workers_and_ps();
  type_of(job, "worker").instances = 5;
  type_of(job, "worker").max_per_node = 1;
  driver d{job, three_nodes};
  d.start();
  EXPECT_EQ(d.job_state(), "FAILED");
  EXPECT_TRUE(d.ever<core::ask_containers>().empty());
  EXPECT_TRUE(contains(d.diagnostics(), "tasks.worker has 5 tasks, at most 1 per node "
                                        "(max_per_node), which needs 5 nodes, but the "
                                        "ResourceManager listed 3 running at submission"))
      << d.diagnostics();
  // Two per node fit: the job asks.
  type_of(job, "worker").max_per_node = 2;
  driver fits{job, three_nodes};
  fits.start();
  EXPECT_EQ(fits.job_state(), "ALLOCATING");
}

// The AM log names the path a capped type takes: SchedulingRequest where
// the ResourceManager enables placement constraints (on any node, even when
// it listed none), node lists where it does not.
TEST(placement, the_line_names_scheduling_request_or_node_lists) {
  task_type_spec worker;
  worker.name = "worker";
  worker.instances = 3;
  worker.capability = {256, 1, 0};
  worker.max_per_node = 1;
  auto by_constraint = core::placement_line(worker, 3, true);
  EXPECT_TRUE(contains(by_constraint, "placement of worker: 3 × "));
  EXPECT_TRUE(contains(by_constraint, "anti-affinity by SchedulingRequest (at most 1 "
                                      "per node"))
      << by_constraint;
  EXPECT_FALSE(contains(by_constraint, "node lists"));
  EXPECT_TRUE(contains(core::placement_line(worker, 0, true), "SchedulingRequest"));
  auto by_lists = core::placement_line(worker, 3, false);
  EXPECT_TRUE(contains(by_lists, "at most 1 per node, node-local only, by node lists"))
      << by_lists;
  EXPECT_FALSE(contains(by_lists, "SchedulingRequest"));
  // Uncapped types say the same either way.
  worker.max_per_node = 0;
  EXPECT_EQ(core::placement_line(worker, 3, true),
            core::placement_line(worker, 3, false));
}

// With the placement processor a spread type's strict ask is a capped
// SchedulingRequest, and the line says so; packed and labelled types, and
// the scheduler handler (which places on heartbeats), keep their lines.
TEST(placement, the_line_names_the_placement_processor_for_a_spread_type) {
  task_type_spec worker;
  worker.name = "worker";
  worker.instances = 4;
  worker.capability = {256, 1, 0};
  auto line = core::placement_line(worker, 3, true, true);
  EXPECT_TRUE(contains(line,
                       "spread: at most its share (2) on each of 3 nodes by "
                       "SchedulingRequest (the ResourceManager's placement processor"))
      << line;
  EXPECT_TRUE(contains(line, "then anywhere")) << line;
  EXPECT_FALSE(
      contains(core::placement_line(worker, 3, true, false), "SchedulingRequest"));
  worker.pack = true;
  EXPECT_FALSE(
      contains(core::placement_line(worker, 3, true, true), "SchedulingRequest"));
  worker.pack = false;
  worker.max_per_node = 1;
  EXPECT_TRUE(contains(core::placement_line(worker, 3, true, true), "anti-affinity"));
}

TEST(placement, refusal_and_line_as_functions) {
  task_type_spec labelled;
  labelled.name = "gpu";
  labelled.node_label = "gpu";
  labelled.max_per_node = 1;
  labelled.instances = 9;
  EXPECT_TRUE(contains(core::placement_line(labelled, 3), "node label gpu"));
  job_spec job;
  job.tasks = {labelled};
  EXPECT_EQ(core::placement_refusal(job, 3), ""); // labels: no node asks
  EXPECT_EQ(core::placement_refusal(job, 0), "");
  EXPECT_EQ(core::usable_nodes(three_nodes, {"node1"}),
            (std::vector<std::string>{"node0", "node2"}));
}

} // namespace
} // namespace tony
