// Token files in both formats, checked against byte arrays built by hand
// from the format (Credentials.java: "HDTS", format byte, Writable or
// delimited CredentialsProto), plus corrupt and truncated input.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

#include "hadoop/credentials.hpp"

namespace tony::hadoop {
namespace {

std::string bytes(std::initializer_list<int> xs) {
  std::string out;
  for (auto x : xs)
    out.push_back(static_cast<char>(x));
  return out;
}

const std::string kind = "YARN_AM_RM_TOKEN";
const std::string service = "127.0.0.1:8030";
const std::string secret(130, 'z');

// HDTS 00 | 1 token: "amrm" -> {id 010203, pw AABB, kind, service}
//         | 1 secret: "s" -> 130 bytes (length 130 needs a two-byte vint)
std::string writable_golden() {
  std::string out = "HDTS";
  out += bytes({0x00, 0x01});
  out += bytes({0x04}) + "amrm";
  out += bytes({0x03, 0x01, 0x02, 0x03});
  out += bytes({0x02, 0xAA, 0xBB});
  out += bytes({0x10}) + kind;
  out += bytes({0x0E}) + service;
  out += bytes({0x01});
  out += bytes({0x01}) + "s";
  out += bytes({0x8F, 0x82}) + secret;
  return out;
}

// HDTS 01 | varint 63 | CredentialsProto {tokens {alias, token}, secrets {alias, secret}}
std::string protobuf_golden() {
  std::string token = bytes({0x0A, 0x03, 0x01, 0x02, 0x03}) +
                      bytes({0x12, 0x02, 0xAA, 0xBB}) + bytes({0x1A, 0x10}) + kind +
                      bytes({0x22, 0x0E}) + service;
  EXPECT_EQ(token.size(), 43u);
  std::string kv = bytes({0x0A, 0x04}) + "amrm" + bytes({0x12, 0x2B}) + token;
  std::string secret_kv = bytes({0x0A, 0x01}) + "s" + bytes({0x1A, 0x03}) + "xyz";
  std::string body = bytes({0x0A, 0x33}) + kv + bytes({0x12, 0x08}) + secret_kv;
  EXPECT_EQ(body.size(), 63u);
  return "HDTS" + bytes({0x01, 0x3F}) + body;
}

token sample_token() {
  return token{bytes({1, 2, 3}), bytes({0xAA, 0xBB}), kind, service};
}

TEST(hadoop_credentials, reads_the_writable_format) {
  auto creds = parse_credentials(writable_golden());
  ASSERT_TRUE(creds) << creds.error().message();
  ASSERT_EQ(creds->tokens().size(), 1u);
  EXPECT_EQ(creds->tokens()[0].first, "amrm");
  EXPECT_EQ(creds->tokens()[0].second, sample_token());
  ASSERT_EQ(creds->secrets().size(), 1u);
  EXPECT_EQ(creds->secrets()[0].second, secret);
}

TEST(hadoop_credentials, writes_the_writable_format_byte_for_byte) {
  credentials creds;
  creds.add_token("amrm", sample_token());
  creds.add_secret("s", secret);
  EXPECT_EQ(serialize_credentials(creds, credentials_format::writable),
            writable_golden());
}

TEST(hadoop_credentials, reads_the_protobuf_format) {
  auto creds = parse_credentials(protobuf_golden());
  ASSERT_TRUE(creds) << creds.error().message();
  ASSERT_EQ(creds->tokens().size(), 1u);
  EXPECT_EQ(creds->tokens()[0].second, sample_token());
  ASSERT_EQ(creds->secrets().size(), 1u);
  EXPECT_EQ(creds->secrets()[0].second, "xyz");
}

TEST(hadoop_credentials, writes_the_protobuf_format_byte_for_byte) {
  credentials creds;
  creds.add_token("amrm", sample_token());
  creds.add_secret("s", "xyz");
  EXPECT_EQ(serialize_credentials(creds, credentials_format::protobuf),
            protobuf_golden());
}

TEST(hadoop_credentials, empty_credentials_are_valid_in_both_formats) {
  credentials empty;
  EXPECT_EQ(serialize_credentials(empty), "HDTS" + bytes({0x00, 0x00, 0x00}));
  for (auto format : {credentials_format::writable, credentials_format::protobuf}) {
    auto back = parse_credentials(serialize_credentials(empty, format));
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->empty());
  }
}

TEST(hadoop_credentials, selects_tokens_by_kind_and_service) {
  credentials creds;
  creds.add_token("a", token{"i1", "p1", "NMToken", "host1:8041"});
  creds.add_token("b", token{"i2", "p2", "NMToken", "host2:8041"});
  creds.add_token("c", token{"i3", "p3", "YARN_AM_RM_TOKEN", ""});
  ASSERT_NE(creds.find("YARN_AM_RM_TOKEN"), nullptr);
  EXPECT_EQ(creds.find("YARN_AM_RM_TOKEN")->identifier, "i3");
  ASSERT_NE(creds.find("NMToken", "host2:8041"), nullptr);
  EXPECT_EQ(creds.find("NMToken", "host2:8041")->identifier, "i2");
  EXPECT_EQ(creds.find("NMToken", "host3:8041"), nullptr);
  EXPECT_EQ(creds.find_all("NMToken").size(), 2u);
  creds.add_token("a", token{"i9", "p9", "NMToken", "host1:8041"});
  EXPECT_EQ(creds.tokens().size(), 3u);
  EXPECT_EQ(creds.find("NMToken", "host1:8041")->identifier, "i9");
}

TEST(hadoop_credentials, every_truncation_is_a_clear_error) {
  for (auto& golden : {writable_golden(), protobuf_golden()}) {
    for (size_t n = 0; n < golden.size(); ++n) {
      auto creds = parse_credentials(golden.substr(0, n), "token file t");
      ASSERT_FALSE(creds) << "prefix of " << n << " bytes parsed";
      EXPECT_NE(creds.error().message().find("token file t"), std::string::npos);
    }
  }
}

TEST(hadoop_credentials, corrupt_input_names_what_is_wrong) {
  auto not_hdts = parse_credentials("HDTX\x00\x00\x00", "token file t");
  ASSERT_FALSE(not_hdts);
  EXPECT_NE(not_hdts.error().message().find("HDTS"), std::string::npos);

  auto unknown_format = parse_credentials("HDTS\x07", "token file t");
  ASSERT_FALSE(unknown_format);
  EXPECT_NE(unknown_format.error().message().find("format byte 7"), std::string::npos);

  auto truncated = parse_credentials(writable_golden().substr(0, 12), "token file t");
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.error().message().find("truncated at byte"), std::string::npos);

  // A huge token count with nothing behind it fails at the first token.
  auto huge = parse_credentials("HDTS" + bytes({0x00, 0x8C, 0x7F, 0xFF, 0xFF, 0xFF}));
  ASSERT_FALSE(huge);

  auto negative = parse_credentials("HDTS" + bytes({0x00, 0x01, 0xFF}));
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message().find("negative"), std::string::npos);
}

TEST(hadoop_credentials, token_proto_round_trips) {
  auto bytes_ = serialize_token_proto(sample_token());
  auto back = parse_token_proto(bytes_);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, sample_token());
  EXPECT_FALSE(parse_token_proto("\xFF\xFF"));
}

TEST(hadoop_credentials, reads_files_and_the_environment) {
  char path[] = "/tmp/tony-credentials-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  auto golden = writable_golden();
  ASSERT_EQ(::write(fd, golden.data(), golden.size()),
            static_cast<ssize_t>(golden.size()));
  ::close(fd);
  auto creds = read_credentials_file(path);
  ASSERT_TRUE(creds);
  EXPECT_EQ(creds->tokens().size(), 1u);

  ::setenv("HADOOP_TOKEN_FILE_LOCATION", path, 1);
  auto from_env = credentials_from_environment();
  ASSERT_TRUE(from_env);
  EXPECT_NE(from_env->find("YARN_AM_RM_TOKEN"), nullptr);
  ::unsetenv("HADOOP_TOKEN_FILE_LOCATION");
  auto unset = credentials_from_environment();
  ASSERT_FALSE(unset);
  EXPECT_EQ(unset.error().code(), error_code::not_found);
  std::remove(path);

  auto missing = read_credentials_file("/nonexistent/container_tokens");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), error_code::io);
  EXPECT_NE(missing.error().message().find("/nonexistent/container_tokens"),
            std::string::npos);
}

} // namespace
} // namespace tony::hadoop
