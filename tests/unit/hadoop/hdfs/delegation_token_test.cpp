// HDFS delegation tokens as values: a token a real NameNode issued (the
// secure test cluster's WebHDFS GETDELEGATIONTOKEN, golden bytes), its
// identifier, the URL form both ways, and the service a token is filed
// under.

#include <gtest/gtest.h>

#include <string>

#include "hadoop/crypto.hpp"
#include "hadoop/hdfs/delegation_token.hpp"

namespace tony::hdfs {
namespace {

// GETDELEGATIONTOKEN&renewer=rm/127.0.21.1@TONY.TEST as root@TONY.TEST, from
// the NameNode of `cluster.sh start --secure --hdfs` (Hadoop 3.4.2) with a
// max lifetime of 180 s.
constexpr const char* golden_url =
    "HAAEcm9vdAR5YXJuAIoBogadW5OKAaIGoBqzAQIUwEWiyaClakfwlUCJu3_P3RREC5gTU1dFQkhERlMgZGVs"
    "ZWdhdGlvbg8xMjcuMC4yMS4xOjkwMDA";

TEST(hdfs_delegation_token, a_namenodes_url_string_decodes_into_its_four_fields) {
  auto tok = from_url_string(golden_url);
  ASSERT_TRUE(tok) << tok.error().message();
  EXPECT_EQ(tok->kind, "SWEBHDFS delegation");
  EXPECT_EQ(tok->service, "127.0.21.1:9000");
  EXPECT_EQ(hadoop::hex_encode(tok->identifier),
            "0004726f6f74047961726e008a01a2069d5b938a01a206a01ab30102");
  EXPECT_EQ(hadoop::hex_encode(tok->password),
            "c045a2c9a0a56a47f0954089bb7fcfdd14440b98");
}

TEST(hdfs_delegation_token, the_identifier_says_owner_renewer_and_dates) {
  auto tok = from_url_string(golden_url);
  ASSERT_TRUE(tok);
  auto id = parse_identifier(tok->identifier);
  ASSERT_TRUE(id) << id.error().message();
  EXPECT_EQ(id->owner, "root");
  EXPECT_EQ(id->renewer, "yarn"); // the RM's principal, short
  EXPECT_EQ(id->real_user, "");
  EXPECT_EQ(id->issue_date_ms, 1795407305619);
  EXPECT_EQ(id->max_date_ms, 1795407485619);
  EXPECT_EQ(id->max_date_ms - id->issue_date_ms, 180000); // the cluster's max lifetime
  EXPECT_EQ(id->sequence_number, 1);
  EXPECT_EQ(id->master_key_id, 2);
}

TEST(hdfs_delegation_token, encoding_gives_back_hadoops_url_string) {
  auto tok = from_url_string(golden_url);
  ASSERT_TRUE(tok);
  EXPECT_EQ(to_url_string(*tok), golden_url);
}

TEST(hdfs_delegation_token, url_strings_use_the_url_safe_alphabet_without_padding) {
  hadoop::token tok{std::string("\xfb\xff\xfe", 3), "\xff", "HDFS_DELEGATION_TOKEN",
                    "10.0.0.1:8020"};
  auto text = to_url_string(tok);
  EXPECT_EQ(text.find_first_of("+/="), std::string::npos) << text;
  auto back = from_url_string(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, tok);
  // Hadoop's decoder takes the standard alphabet and padding too.
  auto standard = hadoop::base64_encode(std::string("\x03\xfb\xff\xfe\x01\xff", 6) +
                                        "\x15HDFS_DELEGATION_TOKEN\x0d"
                                        "10.0.0.1:8020");
  auto again = from_url_string(standard);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(*again, tok);
}

TEST(hdfs_delegation_token, garbage_is_refused_with_what_was_wrong) {
  auto bad = from_url_string("not*base64");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("not a delegation token URL string"),
            std::string::npos);
  auto cut = from_url_string(std::string{golden_url}.substr(0, 40));
  ASSERT_FALSE(cut);
  auto id = parse_identifier(std::string("\x01\x04root", 6));
  ASSERT_FALSE(id);
  EXPECT_NE(id.error().message().find("version 1"), std::string::npos);
  auto short_id = parse_identifier(std::string("\x00\x04ro", 4));
  ASSERT_FALSE(short_id);
  EXPECT_NE(short_id.error().message().find("owner"), std::string::npos);
}

TEST(hdfs_delegation_token, the_service_is_the_namenodes_ip_and_port) {
  auto service = token_service({"localhost", 9000});
  ASSERT_TRUE(service) << service.error().message();
  EXPECT_EQ(*service, "127.0.0.1:9000");
  auto literal = token_service({"127.0.21.1", 8020});
  ASSERT_TRUE(literal);
  EXPECT_EQ(*literal, "127.0.21.1:8020");
  auto unknown = token_service({"no-such-host.invalid", 8020});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), hadoop::error_code::connect_failed);
}

} // namespace
} // namespace tony::hdfs
