#include "runtime/gate/handshake.hpp"

#include <algorithm>
#include <cstring>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace tony::gate {

namespace {

constexpr std::string_view magic = "TONYGATE";
constexpr std::string_view verdict_ok = "OKAY";
constexpr std::string_view verdict_deny = "DENY";
constexpr std::string_view client_label = "tony-gate/1 client";
constexpr std::string_view server_label = "tony-gate/1 server";

// magic | version | three reserved zero bytes
constexpr size_t preamble_size = 12;

using mac = std::array<uint8_t, mac_size>;

template <size_t N>
void put_preamble(std::array<uint8_t, N>& out) {
  std::memcpy(out.data(), magic.data(), magic.size());
  out[8] = protocol_version;
  out[9] = out[10] = out[11] = 0;
}

// 0: ok, 1: wrong magic, 2: wrong version.
template <size_t N>
int check_preamble(const std::array<uint8_t, N>& in) {
  if (std::memcmp(in.data(), magic.data(), magic.size()) != 0)
    return 1;
  return in[8] == protocol_version ? 0 : 2;
}

// Where the purpose sits in a proof (the first reserved byte).
constexpr size_t purpose_offset = 9;

// label | server nonce | client nonce, and the purpose byte when it is not
// BASP's 0 (BASP's proof is the one of before the purpose existed).
mac compute_mac(std::string_view label, std::string_view secret, const nonce& server,
                const nonce& client, purpose what = purpose::basp) {
  std::array<uint8_t, 18 + 2 * nonce_size + 1> msg{};
  static_assert(client_label.size() == 18 && server_label.size() == 18);
  std::memcpy(msg.data(), label.data(), label.size());
  std::copy(server.begin(), server.end(), msg.begin() + 18);
  std::copy(client.begin(), client.end(), msg.begin() + 18 + nonce_size);
  auto size = msg.size() - 1;
  if (what != purpose::basp)
    msg[size++] = static_cast<uint8_t>(what);
  mac out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), msg.data(), size,
       out.data(), &len);
  return out;
}

bool known(uint8_t what) {
  return what == static_cast<uint8_t>(purpose::basp) ||
         what == static_cast<uint8_t>(purpose::spec_channel);
}

} // namespace

std::optional<nonce> random_nonce() {
  nonce n{};
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1)
    return std::nullopt;
  return n;
}

hello_bytes encode_hello(const nonce& server) {
  hello_bytes out{};
  put_preamble(out);
  std::copy(server.begin(), server.end(), out.begin() + preamble_size);
  return out;
}

hello_check decode_hello(const hello_bytes& bytes, nonce& server) {
  switch (check_preamble(bytes)) {
  case 1:
    return hello_check::not_a_gate;
  case 2:
    return hello_check::bad_version;
  default:
    break;
  }
  std::copy_n(bytes.begin() + preamble_size, nonce_size, server.begin());
  return hello_check::ok;
}

proof_bytes encode_proof(std::string_view secret, const nonce& server,
                         const nonce& client, purpose what) {
  proof_bytes out{};
  put_preamble(out);
  out[purpose_offset] = static_cast<uint8_t>(what);
  std::copy(client.begin(), client.end(), out.begin() + preamble_size);
  auto m = compute_mac(client_label, secret, server, client, what);
  std::copy(m.begin(), m.end(), out.begin() + preamble_size + nonce_size);
  return out;
}

proof_check check_proof(std::string_view secret, const nonce& server,
                        const proof_bytes& bytes, nonce& client, purpose& what) {
  switch (check_preamble(bytes)) {
  case 1:
    return proof_check::not_a_peer;
  case 2:
    return proof_check::bad_version;
  default:
    break;
  }
  if (!known(bytes[purpose_offset]))
    return proof_check::unknown_purpose;
  auto asked = static_cast<purpose>(bytes[purpose_offset]);
  nonce theirs{};
  std::copy_n(bytes.begin() + preamble_size, nonce_size, theirs.begin());
  auto expected = compute_mac(client_label, secret, server, theirs, asked);
  if (CRYPTO_memcmp(expected.data(), bytes.data() + preamble_size + nonce_size,
                    mac_size) != 0)
    return proof_check::bad_secret;
  client = theirs;
  what = asked;
  return proof_check::ok;
}

proof_check check_proof(std::string_view secret, const nonce& server,
                        const proof_bytes& bytes, nonce& client) {
  purpose what = purpose::basp;
  nonce theirs{};
  auto result = check_proof(secret, server, bytes, theirs, what);
  if (result == proof_check::ok && what != purpose::basp)
    return proof_check::unknown_purpose;
  if (result == proof_check::ok)
    client = theirs;
  return result;
}

verdict_bytes encode_verdict(bool accepted, std::string_view secret, const nonce& server,
                             const nonce& client) {
  verdict_bytes out{};
  auto word = accepted ? verdict_ok : verdict_deny;
  std::memcpy(out.data(), word.data(), word.size());
  if (accepted) {
    auto m = compute_mac(server_label, secret, server, client);
    std::copy(m.begin(), m.end(), out.begin() + 4);
  }
  return out;
}

verdict_check check_verdict(std::string_view secret, const nonce& server,
                            const nonce& client, const verdict_bytes& bytes) {
  if (std::memcmp(bytes.data(), verdict_deny.data(), 4) == 0)
    return verdict_check::denied;
  if (std::memcmp(bytes.data(), verdict_ok.data(), 4) != 0)
    return verdict_check::not_a_gate;
  auto expected = compute_mac(server_label, secret, server, client);
  if (CRYPTO_memcmp(expected.data(), bytes.data() + 4, mac_size) != 0)
    return verdict_check::impostor;
  return verdict_check::accepted;
}

const char* to_string(hello_check x) {
  switch (x) {
  case hello_check::ok:
    return "ok";
  case hello_check::not_a_gate:
    return "not a tony AM (no gate hello)";
  case hello_check::bad_version:
    return "another version of the gate protocol";
  }
  return "?";
}

const char* to_string(proof_check x) {
  switch (x) {
  case proof_check::ok:
    return "ok";
  case proof_check::not_a_peer:
    return "not a gate proof";
  case proof_check::bad_version:
    return "another version of the gate protocol";
  case proof_check::bad_secret:
    return "wrong job secret";
  case proof_check::unknown_purpose:
    return "asks for a service this gate does not offer";
  }
  return "?";
}

const char* to_string(purpose x) {
  switch (x) {
  case purpose::basp:
    return "BASP";
  case purpose::spec_channel:
    return "spec channel";
  }
  return "?";
}

const char* to_string(verdict_check x) {
  switch (x) {
  case verdict_check::accepted:
    return "accepted";
  case verdict_check::denied:
    return "the AM refused the job secret";
  case verdict_check::impostor:
    return "the peer does not know the job secret (not this job's AM)";
  case verdict_check::not_a_gate:
    return "not a tony AM (no gate verdict)";
  }
  return "?";
}

} // namespace tony::gate
