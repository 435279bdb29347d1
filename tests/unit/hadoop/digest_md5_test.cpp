// SASL DIGEST-MD5 (RFC 2831): the RFC's worked example, a Hadoop-style
// exchange cross-checked with an independent implementation (Python's
// hashlib), challenge parsing and rspauth verification.

#include <gtest/gtest.h>

#include <string>

#include "runtime/hadoop/crypto.hpp"
#include "runtime/hadoop/digest_md5.hpp"

namespace tony::hadoop {
namespace {

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

const char* hadoop_challenge = "realm=\"default\",nonce=\"bm9uY2UtZnJvbS1obWFzdGVy\","
                               "qop=\"auth\",charset=utf-8,algorithm=md5-sess";

TEST(digest_md5, rfc2831_worked_example_response) {
  EXPECT_EQ(digest_response_value(rfc2831_example()), "d388dad90d4bbd760a152321f2143af7");
}

TEST(digest_md5, rfc2831_worked_example_rspauth) {
  EXPECT_EQ(digest_rspauth_value(rfc2831_example()), "ea40f60335c427b5527b84dbabcdfffd");
}

TEST(digest_md5, parses_the_rfc_challenge) {
  auto c =
      parse_digest_challenge("realm=\"elwood.innosoft.com\",nonce=\"OA6MG9tEQGm2hh\","
                             "qop=\"auth\",algorithm=md5-sess,charset=utf-8");
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_EQ(c->realms.size(), 1u);
  EXPECT_EQ(c->realms[0], "elwood.innosoft.com");
  EXPECT_EQ(c->nonce, "OA6MG9tEQGm2hh");
  ASSERT_EQ(c->qop_options.size(), 1u);
  EXPECT_EQ(c->qop_options[0], "auth");
  EXPECT_TRUE(c->utf8);
  EXPECT_EQ(c->algorithm, "md5-sess");
}

TEST(digest_md5, parses_quoting_whitespace_and_qop_lists) {
  auto c = parse_digest_challenge(" realm = \"a \\\"quoted\\\" realm\" , "
                                  "nonce=\"n,1\",qop=\"auth,auth-int , auth-conf\","
                                  "algorithm=MD5-SESS,,maxbuf=65536");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->realms.at(0), "a \"quoted\" realm");
  EXPECT_EQ(c->nonce, "n,1");
  EXPECT_EQ(c->qop_options.size(), 3u);
  EXPECT_EQ(c->qop_options[2], "auth-conf");
}

TEST(digest_md5, rejects_broken_challenges) {
  EXPECT_FALSE(parse_digest_challenge(""));
  EXPECT_FALSE(parse_digest_challenge("nonce=\"abc\""));                  // no algorithm
  EXPECT_FALSE(parse_digest_challenge("algorithm=md5-sess"));             // no nonce
  EXPECT_FALSE(parse_digest_challenge("nonce=\"abc,algorithm=md5-sess")); // unterminated
  EXPECT_FALSE(parse_digest_challenge("nonce"));                          // no '='
  EXPECT_FALSE(parse_digest_challenge("nonce=\"a\" x, algorithm=md5-sess"));
}

TEST(digest_md5, hadoop_token_exchange_matches_an_independent_implementation) {
  auto tok = hadoop_token();
  digest_md5_client client{tok, "", "default", "0123456789abcdef0123456789abcdef"};
  auto response = client.respond(hadoop_challenge);
  ASSERT_TRUE(response) << response.error().message();
  EXPECT_EQ(*response,
            "charset=utf-8,username=\"AQIDBAUGBwgJCgsMDQ4PEBESExQ=\",realm=\"default\","
            "nonce=\"bm9uY2UtZnJvbS1obWFzdGVy\",nc=00000001,"
            "cnonce=\"0123456789abcdef0123456789abcdef\",digest-uri=\"/default\","
            "response=53fb9e730477767339a98b6fcb301a51,qop=auth");
  EXPECT_FALSE(client.complete());
  EXPECT_TRUE(client.verify_rspauth("rspauth=cf7693e25434bc29f5b6566fb7f00608"));
  EXPECT_TRUE(client.complete());
}

TEST(digest_md5, a_wrong_rspauth_is_an_auth_error) {
  digest_md5_client client{hadoop_token(), "", "default", "c"};
  ASSERT_TRUE(client.respond(hadoop_challenge));
  auto bad = client.verify_rspauth("rspauth=00000000000000000000000000000000");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), error_code::auth);
  EXPECT_FALSE(client.complete());
  EXPECT_FALSE(client.verify_rspauth("something=else"));
}

TEST(digest_md5, refuses_integrity_and_privacy_qops) {
  digest_md5_client client{hadoop_token(), "", "default"};
  auto r = client.respond("realm=\"default\",nonce=\"x\",qop=\"auth-conf\","
                          "algorithm=md5-sess");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("hadoop.rpc.protection"), std::string::npos);
}

TEST(digest_md5, a_random_cnonce_differs_between_clients) {
  digest_md5_client a{hadoop_token(), "", "default"};
  digest_md5_client b{hadoop_token(), "", "default"};
  ASSERT_TRUE(a.respond(hadoop_challenge));
  ASSERT_TRUE(b.respond(hadoop_challenge));
  EXPECT_NE(a.params().cnonce, b.params().cnonce);
  EXPECT_EQ(a.params().cnonce.size(), 32u);
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

TEST(hadoop_crypto, md5_of_the_empty_string) {
  EXPECT_EQ(hex_encode(md5("")), "d41d8cd98f00b204e9800998ecf8427e");
}

} // namespace
} // namespace tony::hadoop
