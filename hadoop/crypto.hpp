#pragma once

// Encodings and random bytes on OpenSSL: base64 for SASL user names and
// passwords, hex, and random client ids. (The SASL crypto itself is Cyrus
// SASL's and MIT krb5's.)

#include <cstddef>
#include <string>
#include <string_view>

#include "hadoop/expected.hpp"

namespace tony::hadoop {

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
