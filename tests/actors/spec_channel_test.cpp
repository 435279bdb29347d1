// The registry with a spec channel (actors/registry.hpp): an executor that
// reads the channel is told so in its ack and gets its specs only there, one
// frame for everyone; the frame of a restarted task's registration is
// published before its ack; an executor that does not read the channel, or
// an AM without one, gets the spec over BASP as before. After an AM restart,
// the executors that register again are told to open the new AM's channel,
// where a later spec reaches them.

#define CAF_SUITE spec_channel

#include "tests/actors/harness.hpp"

using namespace tony;
using namespace tony::testing;

namespace {

const task_id w0{"worker", 0};
const task_id w1{"worker", 1};
const task_id ps0{"ps", 0};

// The map of a published frame.
cluster_map map_of(const std::string& frame) {
  auto spec = from_channel_frame(frame);
  CAF_REQUIRE(spec);
  auto cluster = decode_cluster(spec->encoded);
  CAF_REQUIRE(cluster);
  return *cluster;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(spec_channel_tests, harness)

CAF_TEST(readers are told to open the channel and get the spec there once) {
  with_spec_channel = true;
  executors_read_channel = true;
  start();
  for (auto t : {w0, w1, ps0}) {
    auto ack = register_task(t);
    CAF_REQUIRE(ack);
    CAF_CHECK(ack->spec_channel);
  }
  CAF_REQUIRE_EQUAL(channel_frames->size(), 1u);
  auto frame = from_channel_frame(channel_frames->at(0));
  CAF_REQUIRE(frame);
  CAF_CHECK_EQUAL(frame->attempt, 1);
  auto cluster = map_of(channel_frames->at(0));
  CAF_CHECK_EQUAL(cluster.at("worker").size(), 2u);
  CAF_CHECK_EQUAL(cluster.at("ps").size(), 1u);
  CAF_CHECK_EQUAL(cluster.at("worker")[1], container_of(w1).host + ":2001");
  for (auto t : {w0, w1, ps0})
    CAF_CHECK(exec_state(t).specs.empty()); // nothing over BASP
  CAF_CHECK_EQUAL(status().state, "RUNNING");
}

CAF_TEST(nothing is published before the barrier) {
  with_spec_channel = true;
  executors_read_channel = true;
  start();
  CAF_REQUIRE(register_task(w0));
  CAF_REQUIRE(register_task(ps0));
  CAF_CHECK(channel_frames->empty());
  CAF_CHECK_NOT_EQUAL(status().state, "RUNNING");
}

CAF_TEST(a restarted reader finds its new address published before its ack) {
  job = default_job();
  job.tasks[0].restart = restart_policy::on_failure;
  job.tasks[0].max_restarts = 2;
  with_spec_channel = true;
  executors_read_channel = true;
  start();
  register_all();
  CAF_REQUIRE_EQUAL(channel_frames->size(), 1u);
  exit_task(w1, 3, "flaky\n");
  settle();
  // The new run registers; the frame with its address is out by the time
  // its ack is (the registry publishes first, in the same handler).
  auto exec = sys.spawn(fake_executor, w1);
  executor_hello hello{w1, 1, container_of(w1).id, "moved.test", 2501, secret, 9};
  hello.reads_spec_channel = true;
  self->send(registry, register_atom_v, hello, exec);
  expect((register_atom, executor_hello, executor_actor),
         from(self).to(registry).with(_, _, _));
  CAF_REQUIRE_EQUAL(channel_frames->size(), 2u);
  auto before = map_of(channel_frames->front());
  auto after = map_of(channel_frames->back());
  CAF_CHECK_EQUAL(after.at("worker")[1], "moved.test:2501");
  CAF_CHECK_EQUAL(after.at("worker")[0], before.at("worker")[0]);
  for (auto t : {w0, ps0})
    disallow((spec_atom, cluster_spec), from(registry).to(executors[t]).with(_, _));
  executors[w1] = exec;
  settle();
  CAF_CHECK(exec_state(w1).specs.empty());
  CAF_CHECK_EQUAL(task_state(w1), "RUNNING");
}

CAF_TEST(an executor that does not read the channel gets the spec over basp) {
  with_spec_channel = true;
  executors_read_channel = false;
  start();
  for (auto t : {w0, w1, ps0}) {
    auto ack = register_task(t);
    CAF_REQUIRE(ack);
    CAF_CHECK(!ack->spec_channel);
  }
  for (auto t : {w0, w1, ps0})
    CAF_CHECK_EQUAL(exec_state(t).specs.size(), 1u);
  // The channel has it too, for whoever reads it.
  CAF_CHECK_EQUAL(channel_frames->size(), 1u);
}

CAF_TEST(an am without a channel tells readers so and sends over basp) {
  with_spec_channel = false;
  executors_read_channel = true;
  start();
  for (auto t : {w0, w1, ps0}) {
    auto ack = register_task(t);
    CAF_REQUIRE(ack);
    CAF_CHECK(!ack->spec_channel);
  }
  for (auto t : {w0, w1, ps0}) {
    CAF_REQUIRE_EQUAL(exec_state(t).specs.size(), 1u);
    auto cluster = decode_cluster(exec_state(t).specs[0].encoded);
    CAF_REQUIRE(cluster);
    CAF_CHECK_EQUAL(cluster->at("worker").size(), 2u);
  }
  CAF_CHECK(channel_frames->empty());
}

CAF_TEST(after an AM restart readers open the new channel and get later specs there) {
  job = default_job();
  job.tasks[0].restart = restart_policy::on_failure;
  job.tasks[0].max_restarts = 2;
  with_spec_channel = true;
  executors_read_channel = true;
  am_attempt = 2;
  resume = saved_running_job(job);
  settle(); // the fake RM takes its spawn arguments first
  rm_state().registration.previous_containers = containers_of(*resume);
  start();
  CAF_REQUIRE_EQUAL(status().state, "RUNNING");
  // The adopted executors register again and are told to open this AM's
  // channel; no spec is due (their commands run with the one they have).
  for (auto t : {w0, w1, ps0}) {
    auto ack = register_again(t, "container_" + t.type + "_" + std::to_string(t.index));
    CAF_REQUIRE(ack);
    CAF_CHECK(ack->spec_channel);
  }
  CAF_CHECK(channel_frames->empty());
  // worker 1 fails and runs again in a new container: its new address
  // reaches the others through the new AM's channel, nothing over BASP.
  task_exit x{w1, 1, 3, 0, "flaky\n", "container_worker_1"};
  auto rh = self->request(registry, caf::infinite, exit_atom_v, x);
  sched.run();
  rh.receive([](bool) {},
             [](caf::error& err) { CAF_FAIL("exit report failed: " << err); });
  settle();
  CAF_REQUIRE(!container_of(w1).id.empty()); // launched again
  auto ack = register_task(w1);
  CAF_REQUIRE(ack);
  CAF_CHECK(ack->spec_channel);
  CAF_REQUIRE_EQUAL(channel_frames->size(), 1u);
  auto cluster = map_of(channel_frames->back());
  CAF_CHECK_EQUAL(cluster.at("worker")[0], "node.test:2000");
  CAF_CHECK_EQUAL(cluster.at("worker")[1], container_of(w1).host + ":2001");
  CAF_CHECK_EQUAL(cluster.at("ps")[0], "node.test:2000");
  settle();
  for (auto t : {w0, w1, ps0})
    CAF_CHECK(exec_state(t).specs.empty());
  CAF_CHECK_EQUAL(task_state(w1), "RUNNING");
}

CAF_TEST(after an AM restart without a channel readers get a later spec over basp) {
  job = default_job();
  job.tasks[0].restart = restart_policy::on_failure;
  job.tasks[0].max_restarts = 2;
  with_spec_channel = false; // the new AM runs with TONY_SPEC_CHANNEL=off
  executors_read_channel = true;
  am_attempt = 2;
  resume = saved_running_job(job);
  settle();
  rm_state().registration.previous_containers = containers_of(*resume);
  start();
  for (auto t : {w0, w1, ps0}) {
    auto ack = register_again(t, "container_" + t.type + "_" + std::to_string(t.index));
    CAF_REQUIRE(ack);
    CAF_CHECK(!ack->spec_channel);
  }
  task_exit x{w1, 1, 3, 0, "flaky\n", "container_worker_1"};
  auto rh = self->request(registry, caf::infinite, exit_atom_v, x);
  sched.run();
  rh.receive([](bool) {},
             [](caf::error& err) { CAF_FAIL("exit report failed: " << err); });
  settle();
  CAF_REQUIRE(register_task(w1));
  settle();
  for (auto t : {w0, ps0}) {
    CAF_REQUIRE_EQUAL(exec_state(t).specs.size(), 1u);
    auto cluster = decode_cluster(exec_state(t).specs[0].encoded);
    CAF_REQUIRE(cluster);
    CAF_CHECK_EQUAL(cluster->at("worker")[1], container_of(w1).host + ":2001");
  }
  CAF_CHECK(channel_frames->empty());
}

CAF_TEST_FIXTURE_SCOPE_END()
