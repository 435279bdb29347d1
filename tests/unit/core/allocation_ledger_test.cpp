// The allocation ledger's bookkeeping of YARN's allocate protocol, one rule
// per test.

#include "core/allocation_ledger.hpp"

#include <gtest/gtest.h>

using namespace tony;
using tony::core::allocation_ledger;

namespace {

container_ask ask(int32_t priority, int32_t count) {
  container_ask a{priority, "worker", {1024, 1, 0}, "", count};
  a.nodes = {"n1", "n2"};
  a.racks = {"/r1"};
  return a;
}

container granted_at(int32_t priority) {
  container c;
  c.id = "c" + std::to_string(priority);
  c.priority = priority;
  return c;
}

allocate_response answer(int32_t response_id, std::vector<container> allocated = {}) {
  allocate_response resp;
  resp.response_id = response_id;
  resp.allocated = std::move(allocated);
  return resp;
}

} // namespace

TEST(allocation_ledger, an_ask_states_the_absolute_count_with_its_placement) {
  allocation_ledger l;
  l.add(ask(1, 2));
  l.add(ask(1, 1));
  auto req = l.next_request();
  ASSERT_EQ(req.asks.size(), 1u);
  EXPECT_EQ(req.asks[0].count, 3);
  EXPECT_EQ(req.asks[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(req.asks[0].racks, (std::vector<std::string>{"/r1"}));
  EXPECT_TRUE(l.pending());
}

TEST(allocation_ledger, what_was_sent_is_not_sent_again) {
  allocation_ledger l;
  l.add(ask(1, 2));
  auto req = l.next_request();
  l.confirm(req, answer(1));
  EXPECT_FALSE(l.has_changes());
  EXPECT_TRUE(l.next_request().asks.empty());
  EXPECT_TRUE(l.pending()); // still outstanding
}

TEST(allocation_ledger, a_change_while_a_call_is_out_goes_with_the_next) {
  allocation_ledger l;
  l.add(ask(1, 2));
  auto req = l.next_request();
  l.add(ask(1, 1)); // while the call is out
  l.release("c9");
  l.confirm(req, answer(1));
  auto next = l.next_request();
  ASSERT_EQ(next.asks.size(), 1u);
  EXPECT_EQ(next.asks[0].count, 3);
  EXPECT_EQ(next.releases, (std::vector<std::string>{"c9"}));
}

TEST(allocation_ledger, grants_lower_the_count_without_a_new_ask) {
  allocation_ledger l;
  l.add(ask(1, 2));
  auto req = l.next_request();
  l.confirm(req, answer(1, {granted_at(1), granted_at(1)}));
  EXPECT_EQ(l.outstanding(1), 0);
  EXPECT_FALSE(l.pending());
  EXPECT_TRUE(l.next_request().asks.empty());
}

TEST(allocation_ledger, the_next_call_echoes_the_last_response_id) {
  allocation_ledger l;
  EXPECT_EQ(l.next_request().response_id, 0);
  l.confirm(l.next_request(), answer(7));
  EXPECT_EQ(l.next_request().response_id, 7);
}

TEST(allocation_ledger, cancel_sets_every_outstanding_count_to_zero) {
  allocation_ledger l;
  l.add(ask(1, 2));
  l.add(ask(2, 1));
  l.confirm(l.next_request(), answer(1));
  l.cancel_all();
  auto req = l.next_request();
  ASSERT_EQ(req.asks.size(), 2u);
  EXPECT_EQ(req.asks[0].count, 0);
  EXPECT_EQ(req.asks[1].count, 0);
}

TEST(allocation_ledger, a_negative_ask_withdraws_and_never_goes_below_zero) {
  allocation_ledger l;
  l.add(ask(1, 1));
  l.add(ask(1, -1));
  l.add(ask(1, -1));
  EXPECT_EQ(l.outstanding(1), 0);
  EXPECT_EQ(l.next_request().asks[0].count, 0);
}

TEST(allocation_ledger, releases_go_once) {
  allocation_ledger l;
  l.release("c1");
  auto req = l.next_request();
  EXPECT_TRUE(l.pending());
  l.confirm(req, answer(1));
  EXPECT_TRUE(l.next_request().releases.empty());
  EXPECT_FALSE(l.pending());
}

TEST(allocation_ledger, a_resync_starts_over_with_every_outstanding_ask) {
  allocation_ledger l;
  l.add(ask(1, 2));
  l.add(ask(2, 1));
  l.confirm(l.next_request(), answer(5));
  l.resync();
  auto req = l.next_request();
  EXPECT_EQ(req.response_id, 0);
  ASSERT_EQ(req.asks.size(), 2u);
  EXPECT_EQ(req.asks[0].count, 2);
  EXPECT_EQ(req.asks[1].count, 1);
}

namespace {

allocate_response counting(int32_t response_id, int32_t nodes) {
  auto resp = answer(response_id);
  resp.num_cluster_nodes = nodes;
  return resp;
}

} // namespace

TEST(allocation_ledger, an_avoided_node_is_blacklisted_once) {
  allocation_ledger l;
  l.confirm(l.next_request(), counting(1, 3));
  l.avoid("n2");
  l.avoid("n2");
  EXPECT_TRUE(l.has_changes());
  auto req = l.next_request();
  EXPECT_EQ(req.blacklist_additions, (std::vector<std::string>{"n2"}));
  l.confirm(req, counting(2, 3));
  EXPECT_FALSE(l.has_changes());
  EXPECT_TRUE(l.next_request().blacklist_additions.empty());
  l.avoid("n2"); // already blacklisted
  EXPECT_FALSE(l.has_changes());
  EXPECT_EQ(l.avoided(), (std::vector<std::string>{"n2"}));
}

TEST(allocation_ledger, the_blacklist_always_leaves_one_node) {
  allocation_ledger l;
  l.avoid("n1"); // the node count is unknown before the first answer
  EXPECT_TRUE(l.next_request().blacklist_additions.empty());
  l.confirm(l.next_request(), counting(1, 2));
  l.avoid("n2");
  auto req = l.next_request();
  EXPECT_EQ(req.blacklist_additions, (std::vector<std::string>{"n1"}));
  l.confirm(req, counting(2, 2));
  EXPECT_FALSE(l.has_changes());               // n2 waits: it would leave no node
  l.confirm(l.next_request(), counting(3, 3)); // a node joined
  EXPECT_EQ(l.next_request().blacklist_additions, (std::vector<std::string>{"n2"}));
}

TEST(allocation_ledger, a_resync_sends_the_blacklist_again) {
  allocation_ledger l;
  l.confirm(l.next_request(), counting(1, 3));
  l.avoid("n3");
  l.confirm(l.next_request(), counting(2, 3));
  l.resync();
  EXPECT_EQ(l.next_request().blacklist_additions, (std::vector<std::string>{"n3"}));
}
