#pragma once

// SASL quality of protection as Hadoop names it. hadoop.rpc.protection
// lists what a side accepts: authentication -> auth, integrity -> auth-int,
// privacy -> auth-conf. Anything but auth wraps every RPC after the SASL
// handshake (doc/hadoop-rpc.md, "GSSAPI and wrapping").

#include <cstdint>
#include <string>
#include <string_view>

#include "hadoop/expected.hpp"

namespace tony::hadoop {

/// The values are the bits of RFC 4752's security-layer octet.
enum class qop : uint8_t {
  auth = 1,      // authentication only
  auth_int = 2,  // integrity: every message carries a MAC
  auth_conf = 4, // privacy: every message is encrypted
};

/// "auth", "auth-int", "auth-conf".
const char* to_string(qop x);

/// "authentication", "integrity", "privacy" (hadoop.rpc.protection names).
const char* protection_name(qop x);

/// A set of QOPs a client accepts. The default accepts all three; the
/// mechanisms then take the strongest the server offers.
class qop_set {
public:
  constexpr qop_set() = default;

  constexpr explicit qop_set(uint8_t bits)
      : bits_(bits) {
    // nop
  }

  static constexpr qop_set all() { return qop_set{7}; }

  constexpr bool contains(qop x) const noexcept {
    return (bits_ & static_cast<uint8_t>(x)) != 0;
  }

  constexpr uint8_t bits() const noexcept { return bits_; }

  constexpr bool empty() const noexcept { return bits_ == 0; }

  /// The strongest member of `offered` that this set contains, if any.
  constexpr bool pick(uint8_t offered, qop& out) const noexcept {
    for (auto x : {qop::auth_conf, qop::auth_int, qop::auth}) {
      if (contains(x) && (offered & static_cast<uint8_t>(x)) != 0) {
        out = x;
        return true;
      }
    }
    return false;
  }

  friend constexpr bool operator==(qop_set x, qop_set y) { return x.bits_ == y.bits_; }
  friend constexpr bool operator!=(qop_set x, qop_set y) { return x.bits_ != y.bits_; }

private:
  uint8_t bits_ = 7;
};

/// "authentication, privacy": the set in hadoop.rpc.protection's words.
std::string to_string(qop_set x);

/// Parses a hadoop.rpc.protection value: a comma list of authentication,
/// integrity and privacy (case-insensitive, blanks ignored).
expected<qop_set> parse_rpc_protection(std::string_view text);

} // namespace tony::hadoop
