#pragma once

// SASL DIGEST-MD5 (RFC 2831) with a Hadoop token, on Cyrus SASL (libsasl2
// and its digestmd5 plugin from libsasl2-modules) instead of hand-written
// crypto. What Hadoop's token servers expect (SaslRpcClient,
// SaslRpcServer):
//
//   user name  base64(token identifier)     password  base64(token password)
//   realm      the server's ("default")     digest-uri protocol "/" serverId
//                                                      ("/default")
//
// The library computes the response, checks the server's rspauth (a server
// that does not know the token's password cannot pass), and, when the
// server asks for integrity or privacy, is the security layer: auth-int
// adds an HMAC-MD5 to every message, auth-conf encrypts with rc4 (Cyrus's
// 3des does not work with Debian 12's OpenSSL 3: its DES keys fail the
// parity check, so the strongest working cipher is chosen below 3des's
// rank; see doc/hadoop-rpc.md).

#include <memory>
#include <string>

#include "hadoop/sasl_mechanism.hpp"
#include "hadoop/token.hpp"

namespace tony::hadoop {

/// A DIGEST-MD5 client for `tok`. `protocol` and `server_id` come from the
/// server's SaslAuth entry; `accepted` limits the QOPs this client agrees
/// to (of those the server offers, the strongest accepted one is taken).
expected<std::unique_ptr<sasl_mechanism>>
make_digest_md5_client(const token& tok, const std::string& protocol,
                       const std::string& server_id, qop_set accepted = qop_set::all());

} // namespace tony::hadoop
