#pragma once

// tony-submit's window into a running AM: connects to the AM's registry (a
// CAF remote actor) and asks it for the job's status. Every call is bounded;
// a failed connection is retried on the next poll.

#include <optional>
#include <string>

#include <caf/actor_system.hpp>

#include "actors/registry.hpp"
#include "messages/types.hpp"

namespace tony {

class am_watcher {
public:
  explicit am_watcher(caf::actor_system& sys)
      : sys_(sys) {
    // nop
  }

  /// Connects if not yet connected; true when connected.
  bool connect(const std::string& host, uint16_t port);

  bool connected() const { return static_cast<bool>(registry_); }

  /// The AM's current status, or nothing when it does not answer in time.
  std::optional<job_status> poll(std::chrono::milliseconds timeout);

private:
  caf::actor_system& sys_;
  registry_actor registry_;
};

} // namespace tony
