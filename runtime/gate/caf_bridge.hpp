#pragma once

// The gate in front of CAF's middleman. CAF never listens on a port of its
// own here: the gate's listener accepts, runs the handshake (gate_session),
// and only a connection that proved the job secret becomes a BASP connection
// of the middleman, on the same socket.
//
//   AM:    listener ──proof ok──▶ scribe from the socket ──▶ BASP broker
//          (publish_atom with a scribe: the broker's own way of serving a
//           connection it did not accept; it writes the server handshake)
//   peer:  connect_through_gate ──▶ scribe from the socket ──▶ BASP broker
//          (connect_atom, as the middleman actor does after its own connect)
//
// A peer whose proof asks for the spec channel instead (an executor after
// its registration; handshake.hpp) goes to the gate's spec_channel, which
// only ever writes to it; without one such a peer is closed.
//
// Whoever connects costs the AM a pending session (handshake.hpp: 76 bytes
// of input) until it proves the secret; BASP, which allocates what a header
// claims, only ever reads from peers that did.

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>

#include "messages/error.hpp"
#include "runtime/gate/listener.hpp"
#include "runtime/gate/spec_channel.hpp"

namespace tony::gate {

struct gate_options {
  /// Connections waiting for their proof at once; a new one beyond this
  /// closes the oldest waiting one.
  size_t max_pending = 1024;
  /// How long a connection may take to prove the secret.
  std::chrono::milliseconds deadline{10000};
  /// At the cap, how long the oldest waits before a newcomer closes it
  /// (listener_options::evict_after): honest executors prove the secret
  /// in milliseconds, so a burst of them takes turns in the backlog.
  std::chrono::milliseconds evict_after{500};
  /// The listening socket's backlog (the kernel caps it at somaxconn).
  int backlog = 1024;
  /// Where connections asking for the spec channel go (started already);
  /// null: such connections are closed.
  std::shared_ptr<spec_channel> specs;
};

/// An actor published behind the gate, for as long as this object lives.
class published_gate {
public:
  ~published_gate();

  uint16_t port() const { return listener_->port(); }

  listener_counts counts() const { return listener_->counts(); }

  /// Stops accepting; connections already handed to CAF stay.
  void stop() { listener_->stop(); }

  /// Publishes `whom` (whose interface is `sigs`) on host:port (0: any).
  static expected<std::unique_ptr<published_gate>>
  publish(caf::actor_system& sys, caf::strong_actor_ptr whom, std::set<std::string> sigs,
          const std::string& host, uint16_t port, std::string secret,
          gate_options opts = {});

private:
  published_gate() = default;
  std::unique_ptr<listener> listener_;
};

/// Publishes a typed or dynamic actor handle behind the gate.
template <class Handle>
expected<std::unique_ptr<published_gate>>
publish(caf::actor_system& sys, const Handle& whom, const std::string& host,
        uint16_t port, std::string secret, gate_options opts = {}) {
  return published_gate::publish(sys, caf::actor_cast<caf::strong_actor_ptr>(whom),
                                 sys.message_types(whom), host, port, std::move(secret),
                                 opts);
}

/// Whether `err` from remote_actor means the AM refused the job secret.
bool is_refusal(const error& err);

/// Whether retrying cannot help: a refused secret, or a peer that is not a
/// tony AM (or not this job's).
bool is_final(const error& err);

/// Connects to the actor published behind the gate at host:port: TCP, the
/// handshake with `secret`, then BASP; all within `timeout`. Errors as
/// connect_through_gate (gate_session.hpp), and errc::protocol when the
/// published actor's interface is not `ifs`.
expected<caf::strong_actor_ptr> remote_actor(caf::actor_system& sys,
                                             const std::string& host, uint16_t port,
                                             const std::string& secret,
                                             const std::set<std::string>& ifs,
                                             std::chrono::milliseconds timeout);

template <class Handle>
expected<Handle> remote_actor(caf::actor_system& sys, const std::string& host,
                              uint16_t port, const std::string& secret,
                              std::chrono::milliseconds timeout) {
  auto ptr = remote_actor(sys, host, port, secret, sys.message_types<Handle>(), timeout);
  if (!ptr)
    return ptr.error();
  return caf::actor_cast<Handle>(std::move(*ptr));
}

} // namespace tony::gate
