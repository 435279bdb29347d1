#include "tests/actors/harness.hpp"

namespace tony::testing {

rm_client_actor::behavior_type
fake_rm(rm_client_actor::stateful_pointer<fake_rm_state> self,
        rm_registration registration) {
  self->state.registration = std::move(registration);
  return {
      [=](register_atom, const am_registration& am) -> caf::result<rm_registration> {
        auto& st = self->state;
        st.registrations.push_back(am);
        if (st.refuse_registration)
          return caf_error(errc::infrastructure, "connection refused");
        return st.registration;
      },
      [=](allocate_atom, const allocate_request& req) -> caf::result<allocate_response> {
        auto& st = self->state;
        st.allocations.push_back(req);
        if (st.fail_allocate)
          return caf_error(errc::infrastructure, "connection refused");
        if (st.attempt_not_found)
          return attempt_gone_error("ApplicationAttemptNotFoundException: Application "
                                    "attempt appattempt_1_0001_000001 doesn't exist in "
                                    "ApplicationMasterService cache.");
        if (st.order_shutdown) {
          st.order_shutdown = false;
          allocate_response resp;
          resp.response_id = req.response_id + 1;
          resp.shutdown = true;
          return resp;
        }
        if (st.lose_registration) {
          st.lose_registration = false;
          st.outstanding.clear();
          allocate_response resp;
          resp.resync = true;
          return resp;
        }
        for (auto& ask : req.asks)
          st.outstanding[ask.priority] = ask;
        for (auto& id : req.releases)
          st.released.insert(id);
        allocate_response resp;
        resp.response_id = req.response_id + 1;
        resp.allocated.swap(st.to_grant);
        if (st.auto_grant)
          for (auto& [prio, ask] : st.outstanding)
            for (; ask.count > 0; --ask.count)
              resp.allocated.push_back(st.make_container(prio, ask.capability));
        resp.completed.swap(st.to_complete);
        resp.num_cluster_nodes = 3;
        return resp;
      },
      [=](finish_atom, const final_report& report) -> caf::result<bool> {
        auto& st = self->state;
        ++st.finish_calls;
        if (st.finish_attempt_not_found)
          return attempt_gone_error("ApplicationAttemptNotFoundException: Application "
                                    "attempt appattempt_1_0001_000001 doesn't exist in "
                                    "ApplicationMasterService cache.");
        if (st.unanswered_finishes > 0) {
          --st.unanswered_finishes;
          return caf_error(errc::infrastructure, "connection refused");
        }
        st.finishes.push_back(report);
        return true;
      },
  };
}

nm_client_actor::behavior_type
fake_nm(nm_client_actor::stateful_pointer<fake_nm_state> self,
        std::set<std::string> fail_start) {
  self->state.fail_start = std::move(fail_start);
  return {
      [=](start_atom, const launch_spec& spec) -> caf::result<std::string> {
        auto& st = self->state;
        st.started.push_back(spec);
        if (st.fail_start.count(spec.target.id) > 0)
          return caf_error(errc::infrastructure, "NodeManager refused the container");
        return spec.target.id;
      },
      [=](stop_atom, const container& c) {
        self->state.stopped.push_back(c);
        return true;
      },
      [=](status_atom,
          const std::vector<container>& cs) -> caf::result<std::vector<std::string>> {
        auto& st = self->state;
        std::vector<std::string> ids;
        for (auto& c : cs)
          ids.push_back(c.id);
        st.status_calls.push_back(ids);
        std::vector<std::string> words;
        for (auto& c : cs) {
          if (st.fail_status.count(c.id) > 0)
            return caf_error(errc::infrastructure, "NodeManager did not answer");
          auto i = st.phases.find(c.id);
          if (i == st.phases.end() || i->second.empty()) {
            words.push_back(st.others);
            continue;
          }
          words.push_back(i->second.front());
          if (i->second.size() > 1)
            i->second.erase(i->second.begin());
        }
        return words;
      },
  };
}

executor_actor::behavior_type
fake_executor(executor_actor::stateful_pointer<fake_executor_state> self, task_id task) {
  self->state.task = std::move(task);
  return {
      [=](spec_atom, const cluster_spec& spec) { self->state.specs.push_back(spec); },
      [=](stop_atom, const std::string& reason) { self->state.stops.push_back(reason); },
      [=](tokens_atom, const job_tokens& x) { self->state.tokens.push_back(x); },
  };
}

job_status saved_running_job(const job_spec& job) {
  job_status st;
  st.app_id = "application_1_0001";
  st.state = job_state::running;
  st.attempt = 1;
  st.started_ms = 1;
  for (auto& type : job.tasks)
    for (int32_t i = 0; i < type.instances; ++i) {
      task_status ts;
      ts.task = {type.name, i};
      ts.attempt = 1;
      ts.state = task_state::running;
      ts.container_id = "container_" + type.name + "_" + std::to_string(i);
      ts.host = "node.test";
      ts.port = 2000 + i;
      ts.tracked = type.tracked;
      st.tasks.push_back(ts);
    }
  return st;
}

std::vector<container> containers_of(const job_status& st) {
  std::vector<container> result;
  for (auto& t : st.tasks) {
    container c;
    c.id = t.container_id;
    c.host = t.host;
    c.port = 45454;
    result.push_back(c);
  }
  return result;
}

job_spec default_job() {
  job_spec job;
  job.name = "harness";
  job.framework = "tensorflow";
  job.command = "python3 train.py";
  job.src_dir = "/tmp";
  task_type_spec worker;
  worker.name = "worker";
  worker.instances = 2;
  worker.capability = {1024, 1, 0};
  worker.command = job.command;
  worker.priority = 1;
  task_type_spec ps;
  ps.name = "ps";
  ps.instances = 1;
  ps.capability = {512, 1, 0};
  ps.command = job.command;
  ps.tracked = false;
  ps.priority = 2;
  job.tasks = {worker, ps};
  return job;
}

harness::harness(job_spec j)
    : job(std::move(j)) {
  rm = sys.spawn(fake_rm, rm_registration{{8192, 8, 4}, {0, 0, 0}, "default"});
  nm = sys.spawn(fake_nm, std::set<std::string>{});
}

harness::~harness() {
  for (auto& [t, e] : executors)
    self->send_exit(e, caf::exit_reason::user_shutdown);
  stop_am(am);
  self->send_exit(rm, caf::exit_reason::user_shutdown);
  self->send_exit(nm, caf::exit_reason::user_shutdown);
  sched.run();
}

void harness::start(bool run) {
  monitor_config mcfg;
  mcfg.job = job;
  mcfg.app_id = "application_1_0001";
  mcfg.tracking_url = "http://am.test:8080";
  mcfg.on_change = on_change;
  mcfg.am_attempt = am_attempt;
  mcfg.resume = resume;
  mcfg.on_sample = on_sample;
  mcfg.before_unregister = before_unregister;
  mcfg.on_attempt_gone = [this] { ++attempt_gone_calls; };
  registry_config rcfg{"application_1_0001", secret, 1000};
  rcfg.takes_over = am_attempt > 1;
  if (with_spec_channel)
    rcfg.spec_channel = [frames = channel_frames](std::shared_ptr<const std::string> f) {
      frames->push_back(*f);
    };
  am = spawn_am(sys, mcfg, std::move(rcfg));
  am_drivers drivers;
  drivers.rm = rm;
  drivers.nm = nm;
  drivers.registration = {"am.test", 4242, mcfg.tracking_url};
  auto j = job;
  drivers.make_launch = [j](const task_id& t, int32_t attempt, int32_t restart,
                            const container& c) {
    launch_spec spec;
    spec.target = c;
    spec.env = executor_env(j, t, attempt, restart,
                            {"application_1_0001", "am.test", 4242, secret});
    spec.command = {"tony-executor"};
    return spec;
  };
  start_am(sys, am, std::move(drivers), mcfg.timing);
  monitor = am.monitor;
  registry = am.registry;
  if (run)
    settle();
}

void harness::advance(caf::timespan d) {
  // Step in small increments so periodic timers fire in order.
  auto step = std::chrono::milliseconds(50);
  caf::timespan done{0};
  while (done < d) {
    auto next = std::min<caf::timespan>(step, d - done);
    sched.clock().advance_time(next);
    done += next;
    sched.run();
  }
}

caf::expected<registration_ack> harness::register_task(const task_id& t, int32_t attempt,
                                                       std::string secret_text,
                                                       std::string host) {
  auto exec = sys.spawn(fake_executor, t);
  executors[t] = exec;
  executor_hello hello;
  hello.task = t;
  hello.attempt = attempt;
  hello.container_id = container_of(t).id;
  hello.host = host.empty() ? container_of(t).host : host;
  hello.port = 2000 + t.index + (t.type == "ps" ? 100 : 0);
  hello.secret = std::move(secret_text);
  hello.reads_spec_channel = executors_read_channel;
  auto rh = self->request(registry, caf::infinite, register_atom_v, hello, exec);
  sched.run();
  caf::expected<registration_ack> result = caf::sec::unexpected_response;
  rh.receive([&](registration_ack& ack) { result = std::move(ack); },
             [&](caf::error& err) { result = std::move(err); });
  return result;
}

caf::expected<registration_ack> harness::register_again(const task_id& t,
                                                        const std::string& container_id,
                                                        int32_t attempt) {
  auto exec = sys.spawn(fake_executor, t);
  executors[t] = exec;
  executor_hello hello;
  hello.task = t;
  hello.attempt = attempt;
  hello.container_id = container_id;
  hello.host = "node.test";
  hello.port = 2000 + t.index;
  hello.secret = secret;
  hello.resumed = true;
  hello.reads_spec_channel = executors_read_channel;
  auto rh = self->request(registry, caf::infinite, register_atom_v, hello, exec);
  sched.run();
  caf::expected<registration_ack> result = caf::sec::unexpected_response;
  rh.receive([&](registration_ack& ack) { result = std::move(ack); },
             [&](caf::error& err) { result = std::move(err); });
  return result;
}

void harness::register_all(int32_t attempt) {
  for (auto& type : job.tasks)
    for (int32_t i = 0; i < type.instances; ++i)
      CAF_REQUIRE(register_task({type.name, i}, attempt));
}

void harness::exit_task(const task_id& t, int32_t code, std::string stderr_tail,
                        int32_t attempt, int32_t signal) {
  task_exit x{t, attempt, code, signal, std::move(stderr_tail), container_of(t).id};
  auto rh = self->request(registry, caf::infinite, exit_atom_v, x);
  sched.run();
  rh.receive([](bool) {},
             [](caf::error& err) { CAF_FAIL("exit report failed: " << err); });
}

void harness::heartbeat(const task_id& t, int32_t attempt, task_sample sample) {
  self->send(registry, heartbeat_atom_v, t, attempt, std::move(sample));
  sched.run();
}

void harness::heartbeat_progress(const task_id& t, float progress, int32_t attempt) {
  task_sample sample;
  sample.progress = progress;
  self->send(registry, heartbeat_atom_v, t, attempt, sample);
  sched.run();
}

void harness::kill_executor(const task_id& t) {
  self->send_exit(executors.at(t), caf::exit_reason::kill);
  sched.run();
}

void harness::complete_container(const std::string& container_id, int32_t exit_status,
                                 std::string diagnostics) {
  rm_state().to_complete.push_back({container_id, exit_status, std::move(diagnostics)});
}

container harness::container_of(const task_id& t) {
  container result;
  for (auto& spec : nm_state().started)
    if (spec.env.at("TONY_TASK_TYPE") == t.type &&
        spec.env.at("TONY_TASK_INDEX") == std::to_string(t.index))
      result = spec.target;
  return result;
}

job_status harness::status() {
  job_status result;
  auto rh = self->request(monitor, caf::infinite, status_atom_v);
  sched.run();
  rh.receive([&](job_status& st) { result = std::move(st); },
             [&](caf::error& err) { CAF_FAIL("status failed: " << err); });
  return result;
}

std::string harness::task_state(const task_id& t) {
  for (auto& ts : status().tasks)
    if (ts.task == t)
      return to_string(ts.state);
  return "<none>";
}

std::set<std::string> harness::stopped_ids() {
  std::set<std::string> result;
  for (auto& c : nm_state().stopped)
    result.insert(c.id);
  return result;
}

} // namespace tony::testing
