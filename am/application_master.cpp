#include "am/application_master.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/actor_types.hpp"
#include "am/registry_door.hpp"
#include "messages/error.hpp"
#include "messages/type_ids.hpp"

namespace tony {

namespace {

struct am_system_config : caf::actor_system_config {
  am_system_config() {
    load<caf::io::middleman>();
    tony::add_all_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
    // Workers that sleep until there is work, as in tony-executor: the
    // work-stealing workers' polling cost the AM 1.1-1.35 s of CPU during
    // a 64-task launch on two cores, sharing 0.6-0.8 s (bench/notes.md).
    set("scheduler.policy", caf::atom("sharing"));
  }
};

} // namespace

application_master::application_master()
    : cfg_(std::make_unique<am_system_config>())
    , sys_(std::make_unique<caf::actor_system>(*cfg_)) {
  // nop
}

application_master::~application_master() {
  if (door_)
    door_->stop();
  door_.reset(); // its listener hands sockets to this system's broker
  stop_am(actors_);
  for (auto hdl : {caf::actor_cast<caf::actor>(rm_), caf::actor_cast<caf::actor>(nm_)})
    if (hdl)
      caf::anon_send_exit(hdl, caf::exit_reason::user_shutdown);
  // No handle may outlive the wait below: a detached actor's thread (the
  // YARN adapters') ends only when its last reference is gone.
  actors_ = am_actors{};
  rm_ = nullptr;
  nm_ = nullptr;
  sys_.reset(); // waits for every actor
}

expected<uint16_t> application_master::open(monitor_config monitor,
                                            registry_config registry,
                                            const std::string& bind_address,
                                            bool spec_channel) {
  monitor_cfg_ = monitor;
  auto secret = registry.secret;
  auto plan = plan_registry_door(registry, monitor.job.total_tasks(), spec_channel);
  specs_ = plan.specs;
  actors_ = spawn_am(*sys_, std::move(monitor), std::move(registry));
  // Only peers that prove the job secret reach CAF or the spec channel
  // (runtime/gate).
  auto door = gate::publish(*sys_, actors_.registry, bind_address, 0, std::move(secret),
                            plan.gate);
  if (!door)
    return make_error(errc::infrastructure, "cannot publish the registry on " +
                                                bind_address + ": " +
                                                describe(door.error()));
  door_ = std::move(*door);
  return door_->port();
}

std::string application_master::close_door() {
  if (!door_)
    return "never opened";
  door_->stop();
  auto result = gate::summary(door_->counts());
  if (specs_)
    result += "; spec channel: " + gate::summary(specs_->counts());
  return result;
}

void application_master::start(am_drivers drivers) {
  rm_ = drivers.rm;
  nm_ = drivers.nm;
  start_am(*sys_, actors_, std::move(drivers), monitor_cfg_.timing);
}

expected<job_status> application_master::status(std::chrono::milliseconds timeout) {
  expected<job_status> result{
      make_error(errc::infrastructure, "the ApplicationMaster is shutting down")};
  caf::scoped_actor self{*sys_};
  self->request(actors_.monitor, timeout, status_atom_v)
      .receive([&](job_status& st) { result = std::move(st); },
               [&](caf::error& err) {
                 result = make_error(errc::infrastructure,
                                     "the lifecycle monitor did not answer: " +
                                         sys_->render(err));
               });
  return result;
}

void application_master::kill(std::string reason) {
  caf::anon_send(actors_.monitor, kill_atom_v, std::move(reason));
}

void application_master::publish_tokens(std::string credentials) {
  // From an actor of this process: the registry takes tokens from nobody
  // else (a remote peer's message is dropped).
  caf::scoped_actor self{*sys_};
  self->send(actors_.registry, tokens_atom_v, std::move(credentials));
}

job_status application_master::wait() {
  job_status result;
  caf::scoped_actor self{*sys_};
  self->request(actors_.monitor, caf::infinite, wait_atom_v)
      .receive(
          [&](job_status& st) {
            result = std::move(st);
            // Every answered wait owes a bye before the linger ends; the AM
            // has what it waited for (without this, every AM lingered the
            // whole limit).
            self->send(actors_.monitor, bye_atom_v);
          },
          [&](caf::error& err) {
            result.state = job_state::failed;
            result.diagnostics = "the lifecycle monitor failed: " + sys_->render(err);
          });
  return result;
}

void application_master::linger(std::chrono::milliseconds limit) {
  caf::scoped_actor self{*sys_};
  self->request(actors_.monitor, limit, linger_atom_v)
      .receive([](bool) { spdlog::info("tony-am: every client has the final status"); },
               [&](caf::error&) {
                 spdlog::info("tony-am: not every client confirmed the final status "
                              "within {} ms; ending anyway",
                              limit.count());
               });
}

} // namespace tony
