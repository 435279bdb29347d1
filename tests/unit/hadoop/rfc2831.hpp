#pragma once

// An independent RFC 2831 (DIGEST-MD5) computation for the tests: it
// checks the responses Cyrus SASL produces for tony and lets the fake
// servers answer with a correct (or a deliberately wrong) rspauth. Test
// code only; tony itself computes nothing of this (hadoop/digest_md5).

#include <openssl/evp.h>

#include <string>
#include <string_view>

#include "hadoop/crypto.hpp"

namespace tony::hadoop::testing {

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

inline std::string md5(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, EVP_md5(), nullptr);
  return std::string{reinterpret_cast<const char*>(out), len};
}

inline std::string digest_with_a2(const digest_params& x, std::string a2) {
  // auth-int and auth-conf digest the (empty) entity body too (RFC 2831 2.1.2.1).
  if (x.qop == "auth-int" || x.qop == "auth-conf")
    a2 += ":00000000000000000000000000000000";
  auto a1 =
      md5(x.username + ":" + x.realm + ":" + x.password) + ":" + x.nonce + ":" + x.cnonce;
  if (!x.authzid.empty())
    a1 += ":" + x.authzid;
  auto kd = hex_encode(md5(a1)) + ":" + x.nonce + ":" + x.nc + ":" + x.cnonce + ":" +
            x.qop + ":" + hex_encode(md5(a2));
  return hex_encode(md5(kd));
}

/// The 32 hex digits of the client's `response` directive.
inline std::string digest_response_value(const digest_params& x) {
  return digest_with_a2(x, "AUTHENTICATE:" + x.digest_uri);
}

/// The 32 hex digits the server sends back as `rspauth`.
inline std::string digest_rspauth_value(const digest_params& x) {
  return digest_with_a2(x, ":" + x.digest_uri);
}

/// The value of directive `name` in a digest-response ("" if absent).
inline std::string directive(const std::string& text, const std::string& name) {
  size_t pos = 0;
  while ((pos = text.find(name + "=", pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == ',')
      break;
    pos += name.size();
  }
  if (pos == std::string::npos)
    return {};
  pos += name.size() + 1;
  bool quoted = pos < text.size() && text[pos] == '"';
  if (quoted)
    ++pos;
  auto end = text.find(quoted ? '"' : ',', pos);
  return text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

} // namespace tony::hadoop::testing
