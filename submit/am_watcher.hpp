#pragma once

// tony-submit's window into a running AM: connects to the AM's registry (a
// CAF remote actor behind the AM's gate, which wants the job secret) and
// asks it for the job's status. Every poll is bounded; a failed connection
// is retried on the next poll, unless the AM refused the secret.
//
// watch_end() also waits for the job's end: the AM answers every waiter with
// the final status when the job ends, and does not exit before each said it
// has it (`bye`), at most a few seconds; so tony-submit always gets the final
// task table, whatever its polling interval.
//
// An application may run several AM attempts (`[am] max_app_attempts`): when
// the AM's connection drops, polls answer "nothing" at once instead of
// waiting on the dead connection, and connect() to another address (the
// next attempt's AM) starts over with it.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "actors/registry.hpp"
#include "messages/types.hpp"

namespace tony {

class am_watcher {
public:
  am_watcher(caf::actor_system& sys, std::string secret)
      : sys_(sys)
      , secret_(std::move(secret))
      , end_(std::make_shared<end_box>()) {
    // nop
  }

  /// Stops waiting for the end.
  ~am_watcher();

  am_watcher(const am_watcher&) = delete;
  am_watcher& operator=(const am_watcher&) = delete;

  /// Connects if not yet connected to the AM at host:port (a connection to
  /// an earlier attempt's AM, at another address or gone, is dropped first);
  /// true when connected.
  bool connect(const std::string& host, uint16_t port);

  /// True once the connected AM's connection dropped (it ended or died).
  bool lost() const;

  bool connected() const { return static_cast<bool>(registry_); }

  /// Why the last connect failed for good (the AM refused the secret, the
  /// peer is no tony AM); empty while retrying may still help.
  const std::string& refusal() const { return refusal_; }

  /// The AM's current status, or nothing when it does not answer in time.
  std::optional<job_status> poll(std::chrono::milliseconds timeout);

  /// Waits, in the background, for the job's final status (once connected).
  void watch_end();

  /// The final status, once the AM sent it.
  std::optional<job_status> final_status() const;

  struct end_box {
    mutable std::mutex mtx;
    std::optional<job_status> status;
    bool lost = false; // the AM's connection dropped
  };

private:
  /// Drops the connection to an earlier AM (the final status stays).
  void forget();

  caf::actor_system& sys_;
  std::string secret_;
  registry_actor registry_;
  std::string refusal_;
  caf::actor waiter_;
  std::shared_ptr<end_box> end_;
  std::string host_;
  uint16_t port_ = 0;
};

} // namespace tony
