#pragma once

// tony-submit's window into a running AM: connects to the AM's registry (a
// CAF remote actor behind the AM's gate, which wants the job secret) and
// asks it for the job's status. Every call is bounded; a failed connection
// is retried on the next poll, unless the AM refused the secret.

#include <optional>
#include <string>

#include <caf/actor_system.hpp>

#include "actors/registry.hpp"
#include "messages/types.hpp"

namespace tony {

class am_watcher {
public:
  am_watcher(caf::actor_system& sys, std::string secret)
      : sys_(sys)
      , secret_(std::move(secret)) {
    // nop
  }

  /// Connects if not yet connected; true when connected.
  bool connect(const std::string& host, uint16_t port);

  bool connected() const { return static_cast<bool>(registry_); }

  /// Why the last connect failed for good (the AM refused the secret, the
  /// peer is no tony AM); empty while retrying may still help.
  const std::string& refusal() const { return refusal_; }

  /// The AM's current status, or nothing when it does not answer in time.
  std::optional<job_status> poll(std::chrono::milliseconds timeout);

private:
  caf::actor_system& sys_;
  std::string secret_;
  registry_actor registry_;
  std::string refusal_;
};

} // namespace tony
