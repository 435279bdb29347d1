#pragma once

// The client side of one SASL mechanism on one connection, shaped like
// javax.security.sasl.SaslClient because Hadoop's SaslRpcClient drives its
// mechanisms that way (ipc_connection does the same, see doc/hadoop-rpc.md):
//
//   NEGOTIATE (server) ─▶ evaluate(inline challenge, or "" when the mechanism
//                         has an initial response) ─▶ INITIATE token
//   CHALLENGE (server) ─▶ evaluate(token) ─▶ RESPONSE token
//   SUCCESS   (server) ─▶ evaluate(token) if it carries one; complete() must
//                         now be true, or the server claimed success before
//                         it proved itself
//
// Once complete with a QOP other than auth, the mechanism is the
// connection's security layer: wrap() protects outgoing bytes, unwrap()
// checks (and decrypts) incoming tokens. A mechanism is used by one
// connection; wrap and unwrap may run on different threads but never two
// calls at once (the connection serializes them).

#include <cstddef>
#include <string>
#include <string_view>

#include "hadoop/expected.hpp"
#include "hadoop/sasl_qop.hpp"

namespace tony::hadoop {

class sasl_mechanism {
public:
  virtual ~sasl_mechanism() = default;

  /// "DIGEST-MD5", "GSSAPI".
  virtual const char* name() const noexcept = 0;

  /// True if the client speaks first (GSSAPI): INITIATE then carries
  /// evaluate("").
  virtual bool has_initial_response() const noexcept = 0;

  /// Answers a server token; the answer may be empty.
  virtual expected<std::string> evaluate(std::string_view challenge) = 0;

  /// True once the mechanism authenticated the server too.
  virtual bool complete() const noexcept = 0;

  /// Valid once complete().
  virtual qop negotiated_qop() const noexcept = 0;

  /// The largest input of one wrap() (the negotiated raw send size).
  /// Valid once complete() with a QOP other than auth.
  virtual size_t max_wrap_input() const noexcept = 0;

  /// Protects `plain` for the peer: the token of one SASL WRAP message.
  virtual expected<std::string> wrap(std::string_view plain) = 0;

  /// Checks and opens one token of a SASL WRAP message from the peer.
  virtual expected<std::string> unwrap(std::string_view token) = 0;
};

} // namespace tony::hadoop
