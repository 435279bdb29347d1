// The gate's handshake (runtime/gate/handshake.hpp): golden bytes from fixed
// nonces and a fixed secret (the macs computed independently with Python's
// hmac module), and every way a proof or a verdict can be wrong.

#include <gtest/gtest.h>

#include <string>

#include "runtime/gate/handshake.hpp"

namespace tony::gate {
namespace {

const std::string secret =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

nonce counting_from(uint8_t first) {
  nonce n{};
  for (size_t i = 0; i < n.size(); ++i)
    n[i] = static_cast<uint8_t>(first + i);
  return n;
}

template <size_t N>
std::string hex(const std::array<uint8_t, N>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (auto b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 0xF];
  }
  return out;
}

const nonce server_nonce = counting_from(0);
const nonce client_nonce = counting_from(32);

TEST(gate_handshake, hello_golden_bytes) {
  EXPECT_EQ(hex(encode_hello(server_nonce)),
            "544f4e594741544501000000"
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
}

TEST(gate_handshake, proof_golden_bytes) {
  EXPECT_EQ(hex(encode_proof(secret, server_nonce, client_nonce)),
            "544f4e594741544501000000"
            "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
            "e55a4ae28c4d97c5b4a618bb88bd0b527dfd688eee17787b78697b78b949d7ad");
}

TEST(gate_handshake, spec_channel_proof_golden_bytes) {
  // The purpose byte (01) follows the version, and the mac covers it.
  EXPECT_EQ(hex(encode_proof(secret, server_nonce, client_nonce, purpose::spec_channel)),
            "544f4e594741544501010000"
            "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
            "89781a9bc8c4bfd026fd9e28d42b1c3164fbef7d1f253cc2915a5cebd1675d11");
}

TEST(gate_handshake, the_purpose_comes_out_of_the_proof_and_is_under_its_mac) {
  nonce got{};
  purpose what = purpose::basp;
  auto proof = encode_proof(secret, server_nonce, client_nonce, purpose::spec_channel);
  EXPECT_EQ(check_proof(secret, server_nonce, proof, got, what), proof_check::ok);
  EXPECT_EQ(what, purpose::spec_channel);
  EXPECT_EQ(got, client_nonce);
  // Someone on the path turning it into a BASP connection, or back.
  auto turned = proof;
  turned[9] = 0;
  EXPECT_EQ(check_proof(secret, server_nonce, turned, got, what),
            proof_check::bad_secret);
  auto basp = encode_proof(secret, server_nonce, client_nonce);
  basp[9] = 1;
  EXPECT_EQ(check_proof(secret, server_nonce, basp, got, what), proof_check::bad_secret);
  // A purpose this version does not know, and a BASP-only check.
  auto unknown = encode_proof(secret, server_nonce, client_nonce);
  unknown[9] = 7;
  EXPECT_EQ(check_proof(secret, server_nonce, unknown, got, what),
            proof_check::unknown_purpose);
  EXPECT_EQ(check_proof(secret, server_nonce, proof, got), proof_check::unknown_purpose);
}

TEST(gate_handshake, verdict_golden_bytes) {
  EXPECT_EQ(hex(encode_verdict(true, secret, server_nonce, client_nonce)),
            "4f4b4159"
            "1f3d9d5fd43cf446eb3c48e8cf929ab700934b5f1bba34c6604863b3b884b43f");
  EXPECT_EQ(hex(encode_verdict(false, secret, server_nonce, client_nonce)),
            "44454e59" + std::string(64, '0'));
}

TEST(gate_handshake, hello_round_trip_and_strangers) {
  nonce got{};
  EXPECT_EQ(decode_hello(encode_hello(server_nonce), got), hello_check::ok);
  EXPECT_EQ(got, server_nonce);
  auto other_version = encode_hello(server_nonce);
  other_version[8] = 2;
  EXPECT_EQ(decode_hello(other_version, got), hello_check::bad_version);
  hello_bytes basp{}; // what CAF's own listener would send first: a BASP header
  basp[0] = 0x00;
  EXPECT_EQ(decode_hello(basp, got), hello_check::not_a_gate);
}

TEST(gate_handshake, a_right_proof_passes_and_yields_the_client_nonce) {
  nonce got{};
  auto proof = encode_proof(secret, server_nonce, client_nonce);
  EXPECT_EQ(check_proof(secret, server_nonce, proof, got), proof_check::ok);
  EXPECT_EQ(got, client_nonce);
}

TEST(gate_handshake, a_proof_with_another_secret_is_refused) {
  nonce got{};
  auto proof = encode_proof("not-the-secret", server_nonce, client_nonce);
  EXPECT_EQ(check_proof(secret, server_nonce, proof, got), proof_check::bad_secret);
}

TEST(gate_handshake, a_proof_for_another_connection_is_refused) {
  // Replaying a proof recorded on a connection with another server nonce.
  nonce got{};
  auto proof = encode_proof(secret, counting_from(100), client_nonce);
  EXPECT_EQ(check_proof(secret, server_nonce, proof, got), proof_check::bad_secret);
}

TEST(gate_handshake, every_flipped_mac_bit_is_refused) {
  nonce got{};
  auto proof = encode_proof(secret, server_nonce, client_nonce);
  for (size_t i = 44; i < proof_size; ++i) {
    auto bad = proof;
    bad[i] ^= 0x01;
    EXPECT_EQ(check_proof(secret, server_nonce, bad, got), proof_check::bad_secret)
        << "byte " << i;
  }
}

TEST(gate_handshake, a_basp_header_is_no_proof) {
  // A crafted BASP header claiming a 512 MiB payload, padded to 76 bytes.
  proof_bytes basp{};
  basp[4] = 0x20; // payload_len = 0x20000000, big-endian
  nonce got{};
  EXPECT_EQ(check_proof(secret, server_nonce, basp, got), proof_check::not_a_peer);
  auto other_version = encode_proof(secret, server_nonce, client_nonce);
  other_version[8] = 9;
  EXPECT_EQ(check_proof(secret, server_nonce, other_version, got),
            proof_check::bad_version);
}

TEST(gate_handshake, verdicts) {
  auto ok = encode_verdict(true, secret, server_nonce, client_nonce);
  EXPECT_EQ(check_verdict(secret, server_nonce, client_nonce, ok),
            verdict_check::accepted);
  auto deny = encode_verdict(false, secret, server_nonce, client_nonce);
  EXPECT_EQ(check_verdict(secret, server_nonce, client_nonce, deny),
            verdict_check::denied);
  // An impostor that says OKAY without knowing the secret.
  auto forged = encode_verdict(true, "guess", server_nonce, client_nonce);
  EXPECT_EQ(check_verdict(secret, server_nonce, client_nonce, forged),
            verdict_check::impostor);
  verdict_bytes garbage{};
  garbage.fill(0x41);
  EXPECT_EQ(check_verdict(secret, server_nonce, client_nonce, garbage),
            verdict_check::not_a_gate);
}

TEST(gate_handshake, nonces_are_fresh) {
  auto a = random_nonce();
  auto b = random_nonce();
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
}

} // namespace
} // namespace tony::gate
