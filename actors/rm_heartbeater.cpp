#include "actors/rm_heartbeater.hpp"

#include <chrono>
#include <map>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"

namespace tony {

namespace {

struct heartbeater_state {
  rm_client_actor rm;
  lifecycle_monitor_actor monitor;
  am_registration am;
  am_timing timing;

  bool registered = false;
  bool finishing = false;
  bool in_flight = false; // an allocate call is outstanding
  int32_t response_id = 0;
  std::map<int32_t, container_ask> outstanding; // by priority
  std::map<int32_t, container_ask> dirty;       // changed since the last call
  std::vector<std::string> releases;
  caf::actor_clock::time_point last_success;
  bool reported_failure = false;
  int64_t failures = 0; // consecutive failed calls
  int64_t tick_gen = 0; // only the newest scheduled tick counts

  bool asks_pending() const {
    for (auto& [prio, ask] : outstanding)
      if (ask.count > 0)
        return true;
    return !dirty.empty() || !releases.empty();
  }

  static inline const char* name = "rm_heartbeater";
};

using hb_pointer = rm_heartbeater_actor::stateful_pointer<heartbeater_state>;

void schedule_tick(hb_pointer self) {
  auto& st = self->state;
  if (st.finishing)
    return;
  auto ms = st.asks_pending() ? st.timing.allocate_fast_ms : st.timing.allocate_slow_ms;
  self->delayed_send(self, std::chrono::milliseconds(ms), tick_atom_v, ++st.tick_gen);
}

void on_rm_failure(hb_pointer self, const std::string& what, const caf::error& err) {
  auto& st = self->state;
  auto down_for = self->clock().now() - st.last_success;
  // One line per outage, then one per 50 failures: the log stays readable.
  if (st.failures++ % 50 == 0)
    spdlog::warn("rm_heartbeater: {} failed ({} in a row): {}", what, st.failures,
                 describe(err));
  if (!st.reported_failure &&
      down_for >= std::chrono::milliseconds(st.timing.rm_failure_limit_ms)) {
    st.reported_failure = true;
    self->send(st.monitor, rm_error_atom_v,
               "the resource manager did not answer " + what + " for " +
                   std::to_string(st.timing.rm_failure_limit_ms / 1000) +
                   " s: " + describe(err));
  }
}

void allocate(hb_pointer self) {
  auto& st = self->state;
  if (!st.registered || st.finishing || st.in_flight)
    return;
  allocate_request req;
  req.response_id = st.response_id;
  for (auto& [prio, ask] : st.dirty)
    req.asks.push_back(ask);
  req.releases = st.releases;
  st.in_flight = true;
  self->request(st.rm, std::chrono::milliseconds(st.timing.rpc_timeout_ms),
                allocate_atom_v, req)
      .then(
          [=](allocate_response& resp) {
            auto& st = self->state;
            st.in_flight = false;
            st.last_success = self->clock().now();
            // What we sent is now the RM's view: forget it unless it changed since.
            for (auto& ask : req.asks) {
              auto i = st.dirty.find(ask.priority);
              if (i != st.dirty.end() && i->second.count == ask.count)
                st.dirty.erase(i);
            }
            st.releases.erase(st.releases.begin(),
                              st.releases.begin() +
                                  static_cast<std::ptrdiff_t>(req.releases.size()));
            st.response_id = resp.response_id;
            for (auto& c : resp.allocated) {
              auto i = st.outstanding.find(c.priority);
              if (i != st.outstanding.end() && i->second.count > 0)
                --i->second.count;
            }
            if (!resp.allocated.empty())
              self->send(st.monitor, allocated_atom_v, std::move(resp.allocated));
            if (!resp.completed.empty())
              self->send(st.monitor, completed_atom_v, std::move(resp.completed));
            if (resp.shutdown && !st.finishing)
              self->send(st.monitor, rm_error_atom_v,
                         std::string{"the resource manager ordered the AM to shut down"});
            // Asks or releases that changed while the call was out go now.
            if (!st.dirty.empty() || !st.releases.empty())
              allocate(self);
          },
          [=](caf::error& err) {
            self->state.in_flight = false;
            on_rm_failure(self, "allocate", err);
          });
}

void register_am(hb_pointer self) {
  auto& st = self->state;
  self->request(st.rm, std::chrono::milliseconds(st.timing.rpc_timeout_ms),
                register_atom_v, st.am)
      .then(
          [=](rm_registration& reg) {
            auto& st = self->state;
            st.registered = true;
            st.last_success = self->clock().now();
            self->send(st.monitor, rm_ready_atom_v, std::move(reg));
            schedule_tick(self);
          },
          [=](caf::error& err) {
            // Registration is the first contact: an RM that refuses it will not
            // serve the job; report at once.
            self->send(
                self->state.monitor, rm_error_atom_v,
                "cannot register the ApplicationMaster with the resource manager: " +
                    describe(err));
          });
}

} // namespace

rm_heartbeater_actor spawn_rm_heartbeater(caf::actor_system& sys, rm_client_actor rm,
                                          lifecycle_monitor_actor monitor,
                                          am_registration am, am_timing timing) {
  auto impl = [](hb_pointer self, rm_client_actor rm, lifecycle_monitor_actor monitor,
                 am_registration am,
                 am_timing timing) -> rm_heartbeater_actor::behavior_type {
    auto& st = self->state;
    st.rm = std::move(rm);
    st.monitor = std::move(monitor);
    st.am = std::move(am);
    st.timing = timing;
    st.last_success = self->clock().now();
    register_am(self);
    return {
        [=](ask_atom, std::vector<container_ask>& asks) {
          auto& st = self->state;
          for (auto& ask : asks) {
            auto& entry = st.outstanding[ask.priority];
            auto count = entry.count;
            entry = ask;
            entry.count = count + ask.count;
            st.dirty[ask.priority] = entry;
          }
          allocate(self);      // do not wait for the next tick,
          schedule_tick(self); // and poll fast from now on
        },
        [=](release_atom, std::vector<std::string>& ids) {
          auto& st = self->state;
          st.releases.insert(st.releases.end(), ids.begin(), ids.end());
        },
        [=](cancel_atom) {
          auto& st = self->state;
          for (auto& [prio, ask] : st.outstanding) {
            if (ask.count > 0) {
              ask.count = 0;
              st.dirty[prio] = ask;
            }
          }
          allocate(self);
        },
        [=](tick_atom, int64_t gen) {
          if (gen != self->state.tick_gen)
            return; // superseded by a newer schedule
          allocate(self);
          schedule_tick(self);
        },
        [=](finish_atom, final_report& report) -> caf::result<bool> {
          auto& st = self->state;
          st.finishing = true;
          if (!st.registered)
            return true;
          auto rp = self->make_response_promise<bool>();
          self->request(st.rm, std::chrono::milliseconds(st.timing.rpc_timeout_ms),
                        finish_atom_v, std::move(report))
              .then([=](bool unregistered) mutable { rp.deliver(unregistered); },
                    [=](caf::error& err) mutable {
                      spdlog::error("rm_heartbeater: unregister failed: {}",
                                    describe(err));
                      rp.deliver(false);
                    });
          return rp;
        },
    };
  };
  return sys.spawn(impl, std::move(rm), std::move(monitor), std::move(am), timing);
}

} // namespace tony
