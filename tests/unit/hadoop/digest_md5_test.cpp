// SASL DIGEST-MD5 (RFC 2831) through Cyrus SASL, as tony's token
// connections use it: the responses the library computes are checked
// against an independent computation (tests/unit/hadoop/rfc2831.hpp, itself
// checked against the RFC's worked example), rspauth is verified, and the
// QOP the server asks for is negotiated or refused clearly.

#include <gtest/gtest.h>

#include <string>

#include "hadoop/crypto.hpp"
#include "hadoop/digest_md5.hpp"
#include "tests/unit/hadoop/rfc2831.hpp"

namespace tony::hadoop {
namespace {

using testing::digest_params;
using testing::directive;

digest_params rfc2831_example() {
  digest_params p;
  p.username = "chris";
  p.realm = "elwood.innosoft.com";
  p.password = "secret";
  p.nonce = "OA6MG9tEQGm2hh";
  p.cnonce = "OA6MHXh6VqTrRk";
  p.nc = "00000001";
  p.qop = "auth";
  p.digest_uri = "imap/elwood.innosoft.com";
  return p;
}

token hadoop_token() {
  std::string id;
  for (int i = 1; i <= 20; ++i)
    id.push_back(static_cast<char>(i));
  std::string pw;
  for (int i = 0; i < 5; ++i)
    pw += "\xde\xad\xbe\xef";
  return token{id, pw, "YARN_AM_RM_TOKEN", ""};
}

std::string challenge(const std::string& qop) {
  return "realm=\"default\",nonce=\"bm9uY2UtZnJvbS1obWFzdGVy\",qop=\"" + qop +
         "\",charset=utf-8,cipher=\"3des,rc4,des,rc4-56,rc4-40\",algorithm=md5-sess";
}

// What the server computes from the client's response: the same digest
// with the cnonce and qop the client chose.
digest_params server_view(const std::string& response) {
  digest_params p;
  p.username = directive(response, "username");
  p.realm = "default";
  p.password = base64_encode(hadoop_token().password);
  p.nonce = "bm9uY2UtZnJvbS1obWFzdGVy";
  p.cnonce = directive(response, "cnonce");
  p.nc = directive(response, "nc");
  p.qop = directive(response, "qop");
  p.digest_uri = directive(response, "digest-uri");
  return p;
}

std::unique_ptr<sasl_mechanism> client(qop_set accepted = qop_set::all()) {
  auto made = make_digest_md5_client(hadoop_token(), "", "default", accepted);
  EXPECT_TRUE(made) << made.error().message();
  return made ? std::move(*made) : nullptr;
}

TEST(rfc2831_reference, worked_example_response) {
  EXPECT_EQ(testing::digest_response_value(rfc2831_example()),
            "d388dad90d4bbd760a152321f2143af7");
}

TEST(rfc2831_reference, worked_example_rspauth) {
  EXPECT_EQ(testing::digest_rspauth_value(rfc2831_example()),
            "ea40f60335c427b5527b84dbabcdfffd");
}

TEST(digest_md5, answers_a_hadoop_challenge_as_rfc_2831_computes_it) {
  auto c = client();
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->has_initial_response());
  auto response = c->evaluate(challenge("auth"));
  ASSERT_TRUE(response) << response.error().message();
  EXPECT_EQ(directive(*response, "username"), base64_encode(hadoop_token().identifier));
  EXPECT_EQ(directive(*response, "realm"), "default");
  EXPECT_EQ(directive(*response, "digest-uri"), "/default");
  EXPECT_EQ(directive(*response, "nc"), "00000001");
  EXPECT_EQ(directive(*response, "qop"), "auth");
  auto p = server_view(*response);
  EXPECT_EQ(directive(*response, "response"), testing::digest_response_value(p));
  EXPECT_FALSE(c->complete());
  auto last = c->evaluate("rspauth=" + testing::digest_rspauth_value(p));
  ASSERT_TRUE(last) << last.error().message();
  EXPECT_EQ(*last, "");
  EXPECT_TRUE(c->complete());
  EXPECT_EQ(c->negotiated_qop(), qop::auth);
}

TEST(digest_md5, a_wrong_rspauth_is_an_auth_error) {
  auto c = client();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->evaluate(challenge("auth")));
  auto bad = c->evaluate("rspauth=00000000000000000000000000000000");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), error_code::auth);
  EXPECT_NE(bad.error().message().find("rspauth"), std::string::npos);
  EXPECT_FALSE(c->complete());
}

TEST(digest_md5, takes_privacy_with_rc4_when_the_server_asks_for_it) {
  auto c = client();
  ASSERT_TRUE(c);
  auto response = c->evaluate(challenge("auth-conf"));
  ASSERT_TRUE(response) << response.error().message();
  EXPECT_EQ(directive(*response, "qop"), "auth-conf");
  EXPECT_EQ(directive(*response, "cipher"), "rc4");
  auto p = server_view(*response);
  EXPECT_EQ(directive(*response, "response"), testing::digest_response_value(p));
  ASSERT_TRUE(c->evaluate("rspauth=" + testing::digest_rspauth_value(p)));
  EXPECT_TRUE(c->complete());
  EXPECT_EQ(c->negotiated_qop(), qop::auth_conf);
  EXPECT_GT(c->max_wrap_input(), 1000u);
}

TEST(digest_md5, takes_the_strongest_qop_the_server_offers) {
  auto c = client();
  ASSERT_TRUE(c);
  auto response = c->evaluate(challenge("auth,auth-int"));
  ASSERT_TRUE(response) << response.error().message();
  EXPECT_EQ(directive(*response, "qop"), "auth-int");
}

TEST(digest_md5, refuses_a_qop_the_client_configuration_excludes) {
  auto c = client(qop_set{static_cast<uint8_t>(qop::auth)});
  ASSERT_TRUE(c);
  auto r = c->evaluate(challenge("auth-conf"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("auth-conf"), std::string::npos)
      << r.error().message();
  EXPECT_NE(r.error().message().find("hadoop.rpc.protection"), std::string::npos)
      << r.error().message();
}

TEST(digest_md5, a_malformed_challenge_is_an_error_not_a_crash) {
  for (std::string bad : {"", "nonce", "nonce=\"abc,algorithm=md5-sess",
                          "realm=\"default\",qop=\"auth\",algorithm=md5-sess"}) {
    auto c = client();
    ASSERT_TRUE(c);
    auto r = c->evaluate(bad);
    EXPECT_FALSE(r) << "accepted: " << bad;
  }
}

TEST(digest_md5, a_first_message_that_is_already_rspauth_is_refused) {
  // Cyrus would take it for the end of a fast reauthentication and crash
  // reading a response it never computed (found by fuzz_rpc_frames).
  for (std::string first : {"rspauth=0123456789abcdef0123456789abcdef", "RSPAUTH=x"}) {
    auto c = client();
    ASSERT_TRUE(c);
    auto r = c->evaluate(first);
    ASSERT_FALSE(r) << first;
    EXPECT_EQ(r.error().code(), error_code::auth);
    EXPECT_FALSE(c->complete());
  }
}

TEST(digest_md5, a_random_cnonce_differs_between_clients) {
  auto a = client();
  auto b = client();
  ASSERT_TRUE(a && b);
  auto ra = a->evaluate(challenge("auth"));
  auto rb = b->evaluate(challenge("auth"));
  ASSERT_TRUE(ra && rb);
  EXPECT_NE(directive(*ra, "cnonce"), directive(*rb, "cnonce"));
  EXPECT_GE(directive(*ra, "cnonce").size(), 16u);
}

TEST(hadoop_crypto, base64_round_trips_and_matches_known_values) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  for (auto text : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    auto back = base64_decode(base64_encode(text));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, text);
  }
  EXPECT_FALSE(base64_decode("Zm9v!"));
}

TEST(hadoop_crypto, the_reference_md5_of_the_empty_string) {
  EXPECT_EQ(hex_encode(testing::md5("")), "d41d8cd98f00b204e9800998ecf8427e");
}

} // namespace
} // namespace tony::hadoop
