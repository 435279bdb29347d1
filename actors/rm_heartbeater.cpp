#include "actors/rm_heartbeater.hpp"

#include <chrono>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "core/allocation_ledger.hpp"
#include "messages/error.hpp"
#include "messages/type_ids.hpp"

namespace tony {

namespace {

struct heartbeater_state {
  rm_client_actor rm;
  allocation_listener_actor listener;
  am_registration am;
  am_timing timing;
  core::allocation_ledger ledger;

  bool registered = false;
  bool finishing = false;
  bool in_flight = false; // an allocate call is outstanding
  caf::actor_clock::time_point last_success;
  bool reported_failure = false;
  int64_t failures = 0; // consecutive failed calls
  int64_t tick_gen = 0; // only the newest scheduled tick counts
  float progress = 0;   // the job's, sent with every allocate
  resource headroom;    // the last sent to the listener
  int32_t nodes = -1;   // likewise; -1: nothing sent yet

  static inline const char* name = "rm_heartbeater";
};

using hb_pointer = rm_heartbeater_actor::stateful_pointer<heartbeater_state>;

void schedule_tick(hb_pointer self) {
  auto& st = self->state;
  if (st.finishing)
    return;
  auto ms = st.ledger.pending() ? st.timing.allocate_fast_ms : st.timing.allocate_slow_ms;
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
    self->send(st.listener, rm_error_atom_v,
               "the resource manager did not answer " + what + " for " +
                   std::to_string(st.timing.rm_failure_limit_ms / 1000) +
                   " s: " + describe(err),
               false);
  }
}

void allocate(hb_pointer self);

// The RM no longer knows this attempt: no call of this AM will be answered
// again. Said once; the heartbeater stops calling, and there is nothing to
// unregister.
void attempt_gone(hb_pointer self, const std::string& why) {
  auto& st = self->state;
  if (st.finishing)
    return;
  st.finishing = true;
  st.registered = false;
  spdlog::error("rm_heartbeater: {}", why);
  self->send(st.listener, rm_error_atom_v, why, true);
}

void on_allocated(hb_pointer self, const allocate_request& req, allocate_response& resp) {
  auto& st = self->state;
  st.in_flight = false;
  st.failures = 0;
  st.last_success = self->clock().now();
  if (resp.resync) {
    // The RM restarted or failed over and the AM registered again: the new
    // RM knows none of the asks, and its response ids start at 0.
    spdlog::warn("rm_heartbeater: the resource manager lost the AM's registration "
                 "(restart or failover); registered again, sending every "
                 "outstanding ask again");
    st.ledger.resync();
    allocate(self);
    return;
  }
  st.ledger.confirm(req, resp);
  if (!resp.allocated.empty())
    self->send(st.listener, allocated_atom_v, std::move(resp.allocated));
  if (!resp.completed.empty())
    self->send(st.listener, completed_atom_v, std::move(resp.completed));
  if (resp.num_cluster_nodes != st.nodes || !(resp.headroom == st.headroom)) {
    st.nodes = resp.num_cluster_nodes;
    st.headroom = resp.headroom;
    self->send(st.listener, cluster_atom_v, st.headroom, st.nodes);
  }
  if (resp.shutdown) {
    attempt_gone(self, "the resource manager ordered the AM to shut down (AM_SHUTDOWN): "
                       "it no longer knows this AM attempt");
    return;
  }
  // Asks or releases that changed while the call was out go now.
  if (st.ledger.has_changes())
    allocate(self);
}

void allocate(hb_pointer self) {
  auto& st = self->state;
  if (!st.registered || st.finishing || st.in_flight)
    return;
  auto req = st.ledger.next_request();
  req.progress = st.progress;
  st.in_flight = true;
  self->request(st.rm, std::chrono::milliseconds(st.timing.rpc_timeout_ms),
                allocate_atom_v, req)
      .then([=](allocate_response& resp) { on_allocated(self, req, resp); },
            [=](caf::error& err) {
              self->state.in_flight = false;
              if (is_attempt_gone(err))
                attempt_gone(self, describe(err));
              else
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
            self->send(st.listener, rm_ready_atom_v, std::move(reg));
            schedule_tick(self);
          },
          [=](caf::error& err) {
            // Registration is the first contact: an RM that refuses it will not
            // serve the job; report at once.
            self->send(
                self->state.listener, rm_error_atom_v,
                "cannot register the ApplicationMaster with the resource manager: " +
                    describe(err),
                false);
          });
}

// Unregisters, trying again while the RM does not answer, for at most
// rm_failure_limit_ms from the first try: a job that failed because every RM
// was down reports its outcome and diagnostics to the RM that comes back
// (else YARN only says the AM's container exited).
void try_unregister(hb_pointer self, final_report report,
                    caf::typed_response_promise<bool> rp,
                    caf::actor_clock::time_point since, int tries) {
  auto& st = self->state;
  self->request(st.rm, std::chrono::milliseconds(st.timing.rpc_timeout_ms), finish_atom_v,
                report)
      .then([=](bool unregistered) mutable { rp.deliver(unregistered); },
            [=](caf::error& err) mutable {
              // The RM failed the attempt while the AM was ending (an
              // allocate that would have said so was still out): there is
              // nothing to unregister, and the AM ends as for any gone
              // attempt, not after trying again.
              if (is_attempt_gone(err)) {
                spdlog::error("rm_heartbeater: nothing to unregister: {}", describe(err));
                self->send(self->state.listener, rm_error_atom_v, describe(err), true);
                rp.deliver(false);
                return;
              }
              auto limit =
                  std::chrono::milliseconds(self->state.timing.rm_failure_limit_ms);
              if (self->clock().now() - since < limit && tries < 30) {
                spdlog::warn("rm_heartbeater: unregister failed, trying again: {}",
                             describe(err));
                try_unregister(self, std::move(report), rp, since, tries + 1);
                return;
              }
              spdlog::error("rm_heartbeater: unregister failed: {}", describe(err));
              rp.deliver(false);
            });
}

caf::result<bool> finish(hb_pointer self, final_report& report) {
  auto& st = self->state;
  st.finishing = true;
  if (!st.registered)
    return true;
  auto rp = self->make_response_promise<bool>();
  try_unregister(self, std::move(report), rp, self->clock().now(), 1);
  return rp;
}

} // namespace

rm_heartbeater_actor spawn_rm_heartbeater(caf::actor_system& sys, rm_client_actor rm,
                                          allocation_listener_actor listener,
                                          am_registration am, am_timing timing) {
  auto impl = [](hb_pointer self, rm_client_actor rm, allocation_listener_actor listener,
                 am_registration am,
                 am_timing timing) -> rm_heartbeater_actor::behavior_type {
    auto& st = self->state;
    st.rm = std::move(rm);
    st.listener = std::move(listener);
    st.am = std::move(am);
    st.timing = timing;
    st.last_success = self->clock().now();
    return {
        [=](start_atom) { register_am(self); },
        [=](ask_atom, std::vector<container_ask>& asks) {
          for (auto& ask : asks)
            self->state.ledger.add(ask);
          allocate(self);      // do not wait for the next tick,
          schedule_tick(self); // and poll fast from now on
        },
        [=](release_atom, std::vector<std::string>& ids) {
          for (auto& id : ids)
            self->state.ledger.release(std::move(id));
        },
        [=](cancel_atom) {
          self->state.ledger.cancel_all();
          allocate(self);
        },
        [=](avoid_atom, std::vector<std::string>& hosts) {
          for (auto& host : hosts)
            self->state.ledger.avoid(std::move(host));
          allocate(self);
        },
        [=](tick_atom, int64_t gen) {
          if (gen != self->state.tick_gen)
            return; // superseded by a newer schedule
          allocate(self);
          schedule_tick(self);
        },
        [=](finish_atom, final_report& report) { return finish(self, report); },
        [=](progress_atom, float progress) { self->state.progress = progress; },
    };
  };
  return sys.spawn(impl, std::move(rm), std::move(listener), std::move(am), timing);
}

} // namespace tony
