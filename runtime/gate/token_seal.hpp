#pragma once

// Fresh delegation tokens travel from the AM to its executors inside the
// CAF connection the gate admitted (runtime/gate/handshake.hpp). The gate
// authenticates that connection but does not encrypt it, and a token is a
// credential: so each message seals the tokens with the job secret, which
// both ends hold and nobody else does.
//
//   key      = HMAC-SHA256(job secret, "tony-tokens/1")
//   sealed   = nonce (12 random bytes) | AES-256-GCM ciphertext | tag (16)
//   AAD      = "tony-tokens/1" | app id | generation (4 bytes, big endian)
//
// The AAD binds a sealed blob to its job and generation: a replayed older
// generation, or one of another job, does not open.

#include <cstdint>
#include <string>

#include "messages/error.hpp"

namespace tony::gate {

/// Seals `plaintext` (serialized Hadoop credentials); empty if OpenSSL
/// fails.
std::string seal_tokens(const std::string& secret, const std::string& app_id,
                        int32_t generation, const std::string& plaintext);

/// Opens what seal_tokens made with the same secret, app id and generation;
/// errc::bad_secret when anything differs or the bytes were changed.
expected<std::string> open_tokens(const std::string& secret, const std::string& app_id,
                                  int32_t generation, const std::string& sealed);

} // namespace tony::gate
