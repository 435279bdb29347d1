// The AM's actors as message scripts: what each sends, to whom, in which
// order, and what it must not send (CAF's expect / disallow). One protocol
// path per scenario; the lifecycle's outcomes are in lifecycle_test.cpp.

#define CAF_SUITE scripts

#include "runtime/gate/token_seal.hpp"
#include "tests/actors/harness.hpp"

using namespace tony;
using namespace tony::testing;

namespace {

const task_id w0{"worker", 0};
const task_id w1{"worker", 1};
const task_id ps0{"ps", 0};

job_spec restarting_workers() {
  auto job = default_job();
  job.tasks[0].restart = restart_policy::on_failure;
  job.tasks[0].max_restarts = 2;
  return job;
}

// The AM host's `linger` request has its answer, and it is `true`.
template <class Handle>
void require_lingered(caf::scoped_actor& host, Handle& lingering) {
  CAF_REQUIRE(!host->mailbox().empty());
  bool lingered = false;
  lingering.receive([&](bool) { lingered = true; },
                    [](caf::error& err) { CAF_FAIL("linger failed: " << err); });
  CAF_CHECK(lingered);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(script_tests, harness)

CAF_TEST(the job starts with registration asks and launches in that order) {
  start(false);
  expect((start_atom, registry_actor, rm_heartbeater_actor, container_launcher_actor),
         from(_).to(monitor).with(_, _, _, _));
  expect((start_atom), from(monitor).to(am.heartbeater).with(_));
  expect((register_atom, am_registration), from(am.heartbeater).to(rm).with(_, _));
  expect((rm_registration), from(rm).to(am.heartbeater).with(_));
  expect((rm_ready_atom, rm_registration), from(am.heartbeater).to(monitor).with(_, _));
  expect((expect_atom, std::vector<task_id>, int32_t),
         from(monitor).to(registry).with(_, std::vector<task_id>{w0, w1, ps0}, 1));
  expect((ask_atom, std::vector<container_ask>),
         from(monitor).to(am.heartbeater).with(_, _));
  expect((allocate_atom, allocate_request), from(am.heartbeater).to(rm).with(_, _));
  expect((allocate_response), from(rm).to(am.heartbeater).with(_));
  expect((allocated_atom, std::vector<container>),
         from(am.heartbeater).to(monitor).with(_, _));
  for (auto t : {w0, w1, ps0})
    expect((launch_atom, task_id, int32_t, int32_t, container),
           from(monitor).to(am.launcher).with(_, t, 1, 0, _));
  disallow((release_atom, std::vector<std::string>),
           from(monitor).to(am.heartbeater).with(_, _));
  expect((start_atom, launch_spec), from(am.launcher).to(nm).with(_, _));
}

CAF_TEST(a failed start is reported to the monitor and fails the job) {
  // The node manager refuses worker:1's container (the second granted).
  self->send_exit(nm, caf::exit_reason::user_shutdown);
  nm = sys.spawn(fake_nm, std::set<std::string>{"container_1_0001_01_3"});
  start();
  auto st = status();
  CAF_MESSAGE("diagnostics: " << st.diagnostics);
  CAF_CHECK_EQUAL(st.state, "FAILED");
  CAF_CHECK(st.diagnostics.find("could not be launched in container_1_0001_01_3") !=
            std::string::npos);
  CAF_CHECK(st.diagnostics.find("NodeManager refused the container") !=
            std::string::npos);
}

CAF_TEST(the registry hands on a registration before the barrier releases) {
  start();
  CAF_REQUIRE(register_task(w0));
  CAF_REQUIRE(register_task(ps0));
  auto exec = sys.spawn(fake_executor, w1);
  executors[w1] = exec;
  executor_hello hello{w1, 1, container_of(w1).id, "h1", 2001, secret, 7};
  self->send(registry, register_atom_v, hello, exec);
  expect((register_atom, executor_hello, executor_actor),
         from(self).to(registry).with(_, _, _));
  expect((registered_atom, executor_hello, executor_actor),
         from(registry).to(monitor).with(_, _, _));
  expect((barrier_atom, int32_t), from(registry).to(monitor).with(_, 1));
  expect((spec_atom, cluster_spec), from(registry).to(executors[w0]).with(_, _));
}

CAF_TEST(expectations from anyone but the supervisor are ignored) {
  start();
  self->send(registry, expect_atom_v, std::vector<task_id>{{"evil", 0}}, int32_t{1});
  settle();
  auto res = register_task({"evil", 0});
  CAF_REQUIRE(!res);
  CAF_CHECK_EQUAL(res.error().code(), static_cast<uint8_t>(errc::unknown_task));
  register_all();
  CAF_CHECK_EQUAL(status().state, "RUNNING");
}

CAF_TEST(a kill stops every executor and unregisters only after they reported) {
  start();
  register_all();
  self->send(monitor, kill_atom_v, std::string{"killed by the user"});
  expect((kill_atom, std::string), from(self).to(monitor).with(_, _));
  expect((cancel_atom), from(monitor).to(am.heartbeater).with(_));
  for (auto t : {w0, w1, ps0})
    expect((stop_atom, std::string),
           from(monitor).to(executors[t]).with(_, "the job is KILLED"));
  disallow((finish_atom, final_report), from(monitor).to(am.heartbeater).with(_, _));
  disallow((stop_all_atom, std::vector<container>),
           from(monitor).to(am.launcher).with(_, _));
  exit_task(w0, 143, "", 1, 15);
  exit_task(w1, 143, "", 1, 15);
  disallow((stop_all_atom, std::vector<container>),
           from(monitor).to(am.launcher).with(_, _));
  self->send(registry, exit_atom_v, task_exit{ps0, 1, 143, 15, "", container_of(ps0).id});
  expect((exit_atom, task_exit), from(self).to(registry).with(_, _));
  expect((exit_atom, task_exit), from(self).to(monitor).with(_, _));
  expect((stop_all_atom, std::vector<container>),
         from(monitor).to(am.launcher).with(_, _));
}

CAF_TEST(a restarted worker gets a new container and the others are not stopped) {
  job = restarting_workers();
  start();
  register_all();
  auto old = container_of(w1);
  self->send(registry, exit_atom_v, task_exit{w1, 1, 3, 0, "flaky\n", old.id});
  expect((exit_atom, task_exit), from(self).to(registry).with(_, _));
  expect((exit_atom, task_exit), from(self).to(monitor).with(_, _));
  expect((stop_all_atom, std::vector<container>),
         from(monitor).to(am.launcher).with(_, _));
  expect((reopen_atom, task_id, int32_t), from(monitor).to(registry).with(_, w1, 1));
  expect((ask_atom, std::vector<container_ask>),
         from(monitor).to(am.heartbeater).with(_, _));
  for (auto t : {w0, ps0})
    disallow((stop_atom, std::string), from(monitor).to(executors[t]).with(_, _));
  settle();
  CAF_CHECK_EQUAL(task_state(w1), "LAUNCHED");
  CAF_CHECK_NOT_EQUAL(container_of(w1).id, old.id);
  CAF_CHECK_EQUAL(nm_state().started.back().env.at("TONY_RESTART"), "1");
}

CAF_TEST(a restarted task registering again sends the new spec to every task) {
  job = restarting_workers();
  start();
  register_all();
  exit_task(w1, 3, "flaky\n");
  settle();
  auto exec = sys.spawn(fake_executor, w1);
  executor_hello hello{w1, 1, container_of(w1).id, "moved.test", 2501, secret, 9};
  self->send(registry, register_atom_v, hello, exec);
  expect((register_atom, executor_hello, executor_actor),
         from(self).to(registry).with(_, _, _));
  expect((registered_atom, executor_hello, executor_actor),
         from(registry).to(monitor).with(_, _, _));
  disallow((barrier_atom, int32_t), from(registry).to(monitor).with(_, _));
  for (auto t : {w0, ps0})
    expect((spec_atom, cluster_spec), from(registry).to(executors[t]).with(_, _));
  expect((spec_atom, cluster_spec), from(registry).to(exec).with(_, _));
  executors[w1] = exec;
  settle();
  auto spec = decode_cluster(exec_state(w0).specs.back().encoded);
  CAF_REQUIRE(spec);
  CAF_CHECK_EQUAL(spec->at("worker")[1], "moved.test:2501");
  CAF_CHECK_EQUAL(task_state(w1), "RUNNING");
  CAF_CHECK_EQUAL(status().state, "RUNNING");
}

CAF_TEST(the end waits for every client that waits for it to say bye) {
  start();
  register_all();
  caf::scoped_actor client{sys};
  auto end = client->request(monitor, caf::infinite, wait_atom_v);
  settle();
  caf::scoped_actor host{sys};
  auto lingering = host->request(monitor, caf::infinite, linger_atom_v);
  settle();
  exit_task(w0, 0);
  exit_task(w1, 0);
  exit_task(ps0, 143, "", 1, 15);
  // The client has its answer; the linger waits for its bye.
  job_status final_status;
  end.receive([&](job_status& st) { final_status = std::move(st); },
              [](caf::error& err) { CAF_FAIL("wait failed: " << err); });
  CAF_CHECK_EQUAL(final_status.state, "SUCCEEDED");
  CAF_CHECK(host->mailbox().empty()); // no answer before the bye
  client->send(monitor, bye_atom_v);
  expect((bye_atom), from(_).to(monitor).with(_));
  require_lingered(host, lingering);
}

CAF_TEST(a waiting client that is gone owes no bye) {
  start();
  register_all();
  caf::scoped_actor host{sys};
  auto lingering = host->request(monitor, caf::infinite, linger_atom_v);
  {
    caf::scoped_actor client{sys};
    auto end = client->request(registry, caf::infinite, wait_atom_v);
    settle();
    exit_task(w0, 0);
    exit_task(w1, 0);
    exit_task(ps0, 143, "", 1, 15);
    end.receive([](job_status& st) { CAF_CHECK_EQUAL(st.state, "SUCCEEDED"); },
                [](caf::error& err) { CAF_FAIL("wait failed: " << err); });
    settle();
    CAF_CHECK(host->mailbox().empty()); // it owes its bye while it is there
  } // the client goes without a bye, as a killed tony-submit does
  settle();
  require_lingered(host, lingering);
}

CAF_TEST(a bye counts for the client that sent it and only once) {
  start();
  register_all();
  caf::scoped_actor first{sys};
  caf::scoped_actor second{sys};
  auto end1 = first->request(registry, caf::infinite, wait_atom_v);
  auto end2 = second->request(registry, caf::infinite, wait_atom_v);
  settle();
  caf::scoped_actor host{sys};
  auto lingering = host->request(monitor, caf::infinite, linger_atom_v);
  exit_task(w0, 0);
  exit_task(w1, 0);
  exit_task(ps0, 143, "", 1, 15);
  for (auto* end : {&end1, &end2})
    end->receive([](job_status& st) { CAF_CHECK_EQUAL(st.state, "SUCCEEDED"); },
                 [](caf::error& err) { CAF_FAIL("wait failed: " << err); });
  // Two byes from the first client: the second still owes its own.
  first->send(registry, bye_atom_v);
  first->send(registry, bye_atom_v);
  settle();
  CAF_CHECK(host->mailbox().empty());
  second->send(registry, bye_atom_v);
  settle();
  require_lingered(host, lingering);
}

CAF_TEST(new tokens reach every registered executor sealed and later ones in the ack) {
  start();
  CAF_REQUIRE(register_task(w0));
  CAF_REQUIRE(register_task(w1));
  self->send(registry, tokens_atom_v, std::string{"credentials, lot 1"});
  expect((tokens_atom, std::string), from(_).to(registry).with(_, _));
  settle();
  for (auto t : {w0, w1}) {
    CAF_REQUIRE_EQUAL(exec_state(t).tokens.size(), 1u);
    auto& lot = exec_state(t).tokens[0];
    CAF_CHECK_EQUAL(lot.generation, 1);
    CAF_CHECK(lot.sealed.find("lot 1") == std::string::npos); // never in the clear
    auto opened = gate::open_tokens(secret, "application_1_0001", 1, lot.sealed);
    CAF_REQUIRE(opened);
    CAF_CHECK_EQUAL(*opened, "credentials, lot 1");
  }
  // ps:0 registers after the lot went out: its ack carries it.
  auto ack = register_task(ps0);
  CAF_REQUIRE(ack);
  CAF_CHECK_EQUAL(ack->tokens.generation, 1);
  auto in_ack = gate::open_tokens(secret, "application_1_0001", 1, ack->tokens.sealed);
  CAF_REQUIRE(in_ack);
  CAF_CHECK_EQUAL(*in_ack, "credentials, lot 1");
  self->send(registry, tokens_atom_v, std::string{"credentials, lot 2"});
  settle();
  for (auto t : {w0, w1, ps0}) {
    CAF_REQUIRE_EQUAL(exec_state(t).tokens.size(), t == ps0 ? 1u : 2u);
    CAF_CHECK_EQUAL(exec_state(t).tokens.back().generation, 2);
  }
}

CAF_TEST(tokens from no actor of the AM are ignored) {
  start();
  CAF_REQUIRE(register_task(w0));
  caf::anon_send(registry, tokens_atom_v, std::string{"forged"});
  settle();
  CAF_CHECK(exec_state(w0).tokens.empty());
  auto ack = register_task(w1);
  CAF_REQUIRE(ack);
  CAF_CHECK_EQUAL(ack->tokens.generation, 0);
  CAF_CHECK(ack->tokens.sealed.empty());
}

CAF_TEST_FIXTURE_SCOPE_END()
