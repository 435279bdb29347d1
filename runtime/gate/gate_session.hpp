#pragma once

// Both ends of the gate's handshake (handshake.hpp) on real sockets: the
// server side as a listener session, the client side as a blocking exchange
// with a deadline. Neither knows CAF; caf_bridge.hpp hands the connection on.

#include <chrono>
#include <memory>
#include <string>

#include "messages/error.hpp"
#include "runtime/gate/handshake.hpp"
#include "runtime/gate/listener.hpp"

namespace tony::gate {

/// The AM's side of one connection: greets with a hello, reads exactly
/// proof_size bytes (in as many pieces as they come), answers OKAY and passes
/// on a right proof, DENY and closes on a wrong one, closes on anything that
/// is not a proof. Holds 76 bytes of input and two nonces. A proof asking
/// for the spec channel passes only where `offer_spec_channel` (else the
/// connection closes, no verdict sent).
std::unique_ptr<session> make_gate_session(std::shared_ptr<const std::string> secret,
                                           bool offer_spec_channel = false);

/// What a connection that passed a gate session asked for (purpose::basp for
/// any other session).
purpose purpose_of(const session& s);

/// Opens a TCP connection to host:port within `timeout`. Errors: errc::
/// infrastructure (refused, unreachable, unknown host), errc::timeout.
expected<int> connect_tcp(const std::string& host, uint16_t port,
                          std::chrono::milliseconds timeout);

/// The peer's side on a connected socket: reads the hello, sends the proof
/// asking for `what`, reads the verdict, all within `timeout`. On success
/// the socket is ready for what it asked (BASP, or reading spec frames).
/// Errors name `where` (host:port) and say what to do: errc::bad_secret (the
/// AM refused the secret), errc::protocol (not a tony AM, or one that does
/// not know the secret), errc::timeout, errc::infrastructure (the connection
/// dropped).
expected<void> client_handshake(int fd, const std::string& secret,
                                const std::string& where,
                                std::chrono::milliseconds timeout,
                                purpose what = purpose::basp);

/// connect_tcp + client_handshake; the socket on success (the caller owns it).
expected<int> connect_through_gate(const std::string& host, uint16_t port,
                                   const std::string& secret,
                                   std::chrono::milliseconds timeout,
                                   purpose what = purpose::basp);

} // namespace tony::gate
