#pragma once

// The few primitives SASL DIGEST-MD5 needs, on OpenSSL.

#include <cstddef>
#include <string>
#include <string_view>

#include "runtime/hadoop/expected.hpp"

namespace tony::hadoop {

/// The raw 16-byte MD5 digest of `data`.
std::string md5(std::string_view data);

/// Lower-case hex of `data`.
std::string hex_encode(std::string_view data);

/// Standard base64 with padding and no line breaks (what Hadoop's
/// commons-codec calls produce for SASL user names and passwords).
std::string base64_encode(std::string_view data);

/// Accepts standard base64 with or without padding.
expected<std::string> base64_decode(std::string_view text);

/// `n` cryptographically random bytes.
std::string random_bytes(size_t n);

} // namespace tony::hadoop
