// SPNEGO on tony's servers (web/spnego, hadoop/gssapi_server): _HOST as
// Hadoop substitutes it, Hadoop's DEFAULT short name, the Authorization
// header, and the guard's answers to a visitor without a token (401 asking
// for Negotiate) and with one that does not authenticate (403, why). A real
// Kerberos exchange needs a KDC: the secure tier's `tony-history serve`
// test has one.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <httplib.h>

#include "hadoop/crypto.hpp"
#include "hadoop/gssapi_server.hpp"
#include "web/spnego.hpp"

namespace tony::http {
namespace {

namespace fs = std::filesystem;

TEST(spnego, host_is_the_bind_address_or_the_machines_name) {
  EXPECT_EQ(server_principal("HTTP/_HOST@TONY.TEST", "127.0.2.1", "node1.example"),
            "HTTP/127.0.2.1@TONY.TEST");
  EXPECT_EQ(server_principal("HTTP/_HOST@TONY.TEST", "Gateway.Example", "x"),
            "HTTP/gateway.example@TONY.TEST");
  for (auto wildcard : {"0.0.0.0", "::", ""})
    EXPECT_EQ(server_principal("HTTP/_HOST@R", wildcard, "node1.example"),
              "HTTP/node1.example@R")
        << wildcard;
  EXPECT_EQ(server_principal("HTTP/web.example@R", "0.0.0.0", "node1"),
            "HTTP/web.example@R");
  EXPECT_EQ(server_principal("*", "0.0.0.0", "node1"), "*");
  EXPECT_FALSE(canonical_local_host().empty());
}

TEST(spnego, the_short_name_is_the_first_component_of_the_realms_principals) {
  EXPECT_EQ(short_name_of("alice@TONY.TEST", "TONY.TEST"), "alice");
  EXPECT_EQ(short_name_of("alice/admin@TONY.TEST", "TONY.TEST"), "alice");
  EXPECT_EQ(short_name_of("svc/host.example@TONY.TEST", "TONY.TEST"), "svc");
  EXPECT_EQ(short_name_of("alice@OTHER.TEST", "TONY.TEST"), std::nullopt);
  EXPECT_EQ(short_name_of("alice", "TONY.TEST"), std::nullopt);
  EXPECT_EQ(short_name_of("@TONY.TEST", "TONY.TEST"), std::nullopt);
  EXPECT_EQ(short_name_of("/x@TONY.TEST", "TONY.TEST"), std::nullopt);
}

TEST(spnego, the_token_is_read_from_a_negotiate_header_only) {
  EXPECT_EQ(negotiate_token("Negotiate YIIB"), "YIIB");
  EXPECT_EQ(negotiate_token("negotiate   YIIB  "), "YIIB");
  EXPECT_EQ(negotiate_token("Basic YWxpY2U6eA=="), std::nullopt);
  EXPECT_EQ(negotiate_token("NegotiateYIIB"), std::nullopt);
  EXPECT_EQ(negotiate_token("Negotiate"), std::nullopt);
  EXPECT_EQ(negotiate_token(""), std::nullopt);
}

// A keytab (MIT's format 0x502) holding one aes256 key of `principal`
// ("HTTP/host@REALM"): what kadmin's ktadd writes, made without a KDC.
void write_keytab(const fs::path& path, const std::string& service,
                  const std::string& host, const std::string& realm) {
  std::string entry;
  auto u16 = [&](uint16_t v) {
    entry.push_back(static_cast<char>(v >> 8));
    entry.push_back(static_cast<char>(v & 0xff));
  };
  auto u32 = [&](uint32_t v) {
    u16(static_cast<uint16_t>(v >> 16));
    u16(static_cast<uint16_t>(v & 0xffff));
  };
  auto counted = [&](const std::string& s) {
    u16(static_cast<uint16_t>(s.size()));
    entry += s;
  };
  u16(2); // components
  counted(realm);
  counted(service);
  counted(host);
  u32(1);             // KRB5_NT_PRINCIPAL
  u32(1700000000);    // timestamp
  entry.push_back(1); // key version
  u16(18);            // aes256-cts-hmac-sha1-96
  counted(std::string(32, '\x42'));
  std::string file{"\x05\x02", 2};
  auto size = static_cast<uint32_t>(entry.size());
  for (int shift : {24, 16, 8, 0})
    file.push_back(static_cast<char>((size >> shift) & 0xff));
  file += entry;
  std::ofstream{path, std::ios::binary} << file;
}

class spnego_guard_test : public ::testing::Test {
protected:
  void SetUp() override {
    keytab_ = fs::temp_directory_path() /
              ("tony-spnego-" + std::to_string(::getpid()) + ".keytab");
    write_keytab(keytab_, "HTTP", "web.example", "TONY.TEST");
  }
  void TearDown() override { fs::remove(keytab_); }

  fs::path keytab_;
};

TEST_F(spnego_guard_test, a_keytab_without_the_principals_key_is_named) {
  auto wrong =
      hadoop::gss_acceptor::make("HTTP/other.example@TONY.TEST", keytab_.string());
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message().find("the keytab " + keytab_.string() +
                                         " holds no key of HTTP/other.example@TONY.TEST"),
            std::string::npos)
      << wrong.error().message();
  auto missing = hadoop::gss_acceptor::make("HTTP/web.example@TONY.TEST",
                                            keytab_.string() + ".missing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), hadoop::error_code::io);
  EXPECT_NE(missing.error().message().find("cannot read the keytab"), std::string::npos);
  auto none = hadoop::gss_acceptor::make("HTTP/web.example@TONY.TEST", "");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("hadoop.http.authentication.kerberos.keytab"),
            std::string::npos);
}

TEST_F(spnego_guard_test, no_token_asks_for_negotiate_and_a_bad_one_is_refused) {
  auto acceptor =
      hadoop::gss_acceptor::make("HTTP/web.example@TONY.TEST", keytab_.string());
  ASSERT_TRUE(acceptor) << acceptor.error().message();
  EXPECT_EQ((*acceptor)->describe(),
            "HTTP/web.example@TONY.TEST from keytab " + keytab_.string());
  spnego_guard guard{std::move(*acceptor), "TONY.TEST", "tony-history"};
  httplib::Request req;
  httplib::Response res;
  EXPECT_EQ(guard.authenticate(req, res), std::nullopt);
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(res.get_header_value("WWW-Authenticate"), "Negotiate");
  EXPECT_NE(res.body.find("curl --negotiate -u : URL"), std::string::npos) << res.body;

  for (auto [header, why] :
       {std::pair<std::string, std::string>{"Negotiate !!!",
                                            "the Negotiate token is not base64"},
        std::pair<std::string, std::string>{
            "Negotiate " + hadoop::base64_encode("not a gssapi token at all"),
            "Kerberos authentication failed: "}}) {
    httplib::Request bad;
    bad.headers.emplace("Authorization", header);
    httplib::Response refused;
    EXPECT_EQ(guard.authenticate(bad, refused), std::nullopt) << header;
    EXPECT_EQ(refused.status, 403) << header;
    EXPECT_NE(refused.body.find("tony-history: " + why), std::string::npos)
        << refused.body;
  }
}

} // namespace
} // namespace tony::http
