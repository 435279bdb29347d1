#pragma once

// The gate's handshake: what a peer of the AM's registry port must say before
// one byte of it reaches CAF's BASP, whose first header alone makes CAF
// allocate whatever payload size it claims. Every message has a fixed size,
// so the AM never reads more than 76 bytes from a peer that has not proven
// the job secret.
//
//   peer (executor, tony-submit)              AM (the gate)
//     │ ◀──── hello    44 B  "TONYGATE" 01 00 00 00 | server nonce (32)
//     │ ───── proof    76 B  "TONYGATE" 01 PP 00 00 | client nonce (32) | mac_c (32)
//     │ ◀──── verdict  36 B  "OKAY" | mac_s (32)      or  "DENY" | 32 zeros, close
//     │ ═════ what the purpose PP asked for, on the same TCP connection:
//             00 CAF's BASP (the registry), 01 the spec channel (spec_channel.hpp)
//
//   mac_c = HMAC-SHA256(secret, "tony-gate/1 client" | server nonce | client nonce
//                               [| PP, when PP is not 00])
//   mac_s = HMAC-SHA256(secret, "tony-gate/1 server" | server nonce | client nonce)
//
// The purpose is under the peer's mac (but for BASP's 00, so that proof is
// byte for byte the one of before), so nobody on the path can turn one
// service's connection into the other's.
//
// The secret is the job secret's text (its bytes are the HMAC key). Both
// nonces are fresh per connection, so a recorded proof is worth nothing on
// another connection; mac_s tells the peer it reached this job's AM and not
// something else listening on the port. The peer sends nothing of BASP
// before it read the verdict, and reads exactly 36 bytes of it, so neither
// side ever reads the other's BASP bytes into the handshake.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tony::gate {

constexpr size_t nonce_size = 32;
constexpr size_t mac_size = 32;
constexpr size_t hello_size = 44;
constexpr size_t proof_size = 76;
constexpr size_t verdict_size = 36;
constexpr uint8_t protocol_version = 1;

using nonce = std::array<uint8_t, nonce_size>;

/// What a peer wants after the handshake (byte 9 of its proof).
enum class purpose : uint8_t {
  basp = 0,         // CAF's BASP to the published actor (the registry)
  spec_channel = 1, // the spec channel: the AM writes cluster specs, reads nothing
};
using hello_bytes = std::array<uint8_t, hello_size>;
using proof_bytes = std::array<uint8_t, proof_size>;
using verdict_bytes = std::array<uint8_t, verdict_size>;

/// A fresh nonce from OpenSSL's generator; nothing if it fails.
std::optional<nonce> random_nonce();

/// The server's opening message.
hello_bytes encode_hello(const nonce& server);

/// What a peer makes of the first 44 bytes it reads.
enum class hello_check {
  ok,
  not_a_gate,  // the magic is wrong: something else listens on the port
  bad_version, // a gate speaking another version of this protocol
};

/// Checks a hello and, when it is ok, stores its nonce in `server`.
hello_check decode_hello(const hello_bytes& bytes, nonce& server);

/// The peer's proof that it holds `secret`, asking for `what`.
proof_bytes encode_proof(std::string_view secret, const nonce& server,
                         const nonce& client, purpose what = purpose::basp);

enum class proof_check {
  ok,
  not_a_peer,      // the magic is wrong: a stranger or garbage
  bad_version,     // another version of this protocol
  bad_secret,      // the magic is right, the mac is not
  unknown_purpose, // a purpose this version does not know
};

/// Checks a proof against the nonce this connection's hello carried; when it
/// is ok, stores the peer's nonce in `client` and what it asks for in
/// `what`. The mac comparison takes the same time wherever the bytes differ.
proof_check check_proof(std::string_view secret, const nonce& server,
                        const proof_bytes& bytes, nonce& client, purpose& what);

/// check_proof for a peer that may only ask for BASP.
proof_check check_proof(std::string_view secret, const nonce& server,
                        const proof_bytes& bytes, nonce& client);

/// The server's answer: OKAY with its own mac, or DENY.
verdict_bytes encode_verdict(bool accepted, std::string_view secret, const nonce& server,
                             const nonce& client);

enum class verdict_check {
  accepted,
  denied,     // the AM refused the proof: the peer's secret is wrong
  impostor,   // OKAY with a mac that does not prove the secret
  not_a_gate, // neither OKAY nor DENY
};

verdict_check check_verdict(std::string_view secret, const nonce& server,
                            const nonce& client, const verdict_bytes& bytes);

const char* to_string(hello_check x);
const char* to_string(proof_check x);
const char* to_string(verdict_check x);
const char* to_string(purpose x);

} // namespace tony::gate
