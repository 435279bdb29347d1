#pragma once

// The client side of SASL DIGEST-MD5 (RFC 2831) as Hadoop uses it for
// token authentication: qop "auth" only (no integrity or privacy layer),
// algorithm md5-sess, user name and password are the base64 of the token's
// identifier and password, and the digest-uri is protocol + "/" + serverId
// from the server's SaslAuth ("/default" for YARN's token servers).
//
//   server challenge ──▶ respond() ──▶ client response
//   server "rspauth=…" ──▶ verify_rspauth()        (proves the server knew
//                                                   the password too)

#include <string>
#include <string_view>
#include <vector>

#include "runtime/hadoop/expected.hpp"
#include "runtime/hadoop/token.hpp"

namespace tony::hadoop {

/// The directives of a digest-challenge that the client uses.
struct digest_challenge {
  std::vector<std::string> realms;
  std::string nonce;
  std::vector<std::string> qop_options; // empty means "auth"
  bool utf8 = false;                    // charset=utf-8
  std::string algorithm;                // must be md5-sess
};

/// Parses `name=value,name="quoted value",...`.
expected<digest_challenge> parse_digest_challenge(std::string_view text);

/// The inputs of one digest computation.
struct digest_params {
  std::string username;
  std::string realm;
  std::string password;
  std::string nonce;
  std::string cnonce;
  std::string nc = "00000001";
  std::string qop = "auth";
  std::string digest_uri;
  std::string authzid; // usually empty
};

/// The 32 hex digits of the client's `response` directive.
std::string digest_response_value(const digest_params& x);

/// The 32 hex digits the server must send back as `rspauth`.
std::string digest_rspauth_value(const digest_params& x);

/// One DIGEST-MD5 authentication with a Hadoop token.
class digest_md5_client {
public:
  /// `protocol` and `server_id` come from the server's SaslAuth entry.
  /// `cnonce` is random unless given (tests pin it).
  digest_md5_client(const token& tok, const std::string& protocol,
                    const std::string& server_id, std::string cnonce = {});

  /// Answers the server's challenge with the digest-response text.
  expected<std::string> respond(std::string_view challenge);

  /// Checks the server's final message ("rspauth=…").
  expected<void> verify_rspauth(std::string_view server_final);

  /// True once the server proved knowledge of the password.
  bool complete() const noexcept { return complete_; }

  /// Valid after respond(): the parameters used.
  const digest_params& params() const noexcept { return params_; }

private:
  digest_params params_;
  bool responded_ = false;
  bool complete_ = false;
};

} // namespace tony::hadoop
