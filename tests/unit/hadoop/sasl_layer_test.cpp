// The pieces of SASL wrapping and Kerberos principal checks that need no
// server: WRAP frames as golden bytes (the bytes Hadoop's
// WrappedOutputStream and Server.wrapWithSasl produce), cutting frames into
// pieces of the negotiated size, reassembling frames from unwrapped tokens,
// hadoop.rpc.protection, and the server-principal rules of SaslRpcClient.

#include <gtest/gtest.h>

#include <string>

#include "hadoop/proto/hadoop_rpc.pb.h"
#include "hadoop/rpc_codec.hpp"
#include "hadoop/sasl_qop.hpp"
#include "hadoop/server_principal.hpp"

namespace tony::hadoop {
namespace {

std::string bytes(std::initializer_list<int> xs) {
  std::string out;
  for (auto x : xs)
    out.push_back(static_cast<char>(x));
  return out;
}

std::string frame_of(const std::string& body) {
  auto n = body.size();
  return bytes({static_cast<int>(n >> 24), static_cast<int>((n >> 16) & 0xFF),
                static_cast<int>((n >> 8) & 0xFF), static_cast<int>(n & 0xFF)}) +
         body;
}

// -- WRAP frames ---------------------------------------------------------------

TEST(sasl_wrap, a_wrap_request_matches_the_golden_bytes) {
  auto golden = bytes({0x00, 0x00, 0x00, 0x12,  // length 18
                       0x0A,                    // header: 10 bytes
                       0x08, 0x02,              // rpcKind = 2 (protobuf)
                       0x10, 0x00,              // rpcOp = 0 (final)
                       0x18, 0x41,              // callId = -33 (zigzag 65)
                       0x22, 0x00,              // clientId = ""
                       0x28, 0x01,              // retryCount = -1
                       0x06,                    // RpcSaslProto: 6 bytes
                       0x10, 0x05,              // state = 5 WRAP
                       0x1A, 0x02, 'a',  'b'}); // token = "ab"
  EXPECT_EQ(make_wrap_frame("ab"), golden);
}

TEST(sasl_wrap, a_wrap_response_from_the_server_decodes_to_its_token) {
  // Server.wrapWithSasl: header {callId -33, status SUCCESS} + WRAP message.
  auto body = bytes({0x08,                               // header: 8 bytes
                     0x08, 0xDF, 0xFF, 0xFF, 0xFF, 0x0F, // callId = -33 as uint32
                     0x10, 0x00,                         // status = SUCCESS
                     0x06, 0x10, 0x05, 0x1A, 0x02, 'a', 'b'});
  auto rsp = decode_response(body);
  ASSERT_TRUE(rsp) << rsp.error().message();
  EXPECT_EQ(rsp->call_id, sasl_call_id);
  auto token = decode_wrap(rsp->body);
  ASSERT_TRUE(token) << token.error().message();
  EXPECT_EQ(*token, "ab");
}

TEST(sasl_wrap, a_sasl_reply_that_is_not_wrap_is_refused) {
  proto::RpcSaslProto success;
  success.set_state(proto::RpcSaslProto::SUCCESS);
  std::string body;
  append_delimited(body, success);
  auto token = decode_wrap(body);
  ASSERT_FALSE(token);
  EXPECT_NE(token.error().message().find("SUCCESS"), std::string::npos);
}

TEST(sasl_wrap, frames_are_cut_into_pieces_of_the_negotiated_size) {
  std::string plain(10, 'x');
  auto pieces = split_for_wrap(plain, 4);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].size(), 4u);
  EXPECT_EQ(pieces[1].size(), 4u);
  EXPECT_EQ(pieces[2].size(), 2u);
  EXPECT_EQ(split_for_wrap(plain, 10).size(), 1u);
  EXPECT_EQ(split_for_wrap(plain, 64 * 1024).size(), 1u);
  EXPECT_TRUE(split_for_wrap("", 4).empty());
}

// -- frames from unwrapped bytes -------------------------------------------------

TEST(frame_assembler, returns_frames_split_across_tokens) {
  frame_assembler in;
  auto whole = frame_of("hello") + frame_of("world!");
  in.append(whole.substr(0, 3));
  auto none = in.next();
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  in.append(whole.substr(3, 4));
  ASSERT_FALSE(*in.next());
  in.append(whole.substr(7));
  auto first = in.next();
  ASSERT_TRUE(first && *first);
  EXPECT_EQ(**first, "hello");
  auto second = in.next();
  ASSERT_TRUE(second && *second);
  EXPECT_EQ(**second, "world!");
  EXPECT_FALSE(*in.next());
  EXPECT_EQ(in.pending(), 0u);
}

TEST(frame_assembler, returns_several_frames_of_one_token) {
  frame_assembler in;
  in.append(frame_of("a") + frame_of("bb") + frame_of("ccc"));
  for (auto want : {"a", "bb", "ccc"}) {
    auto got = in.next();
    ASSERT_TRUE(got && *got);
    EXPECT_EQ(**got, want);
  }
}

TEST(frame_assembler, refuses_an_oversized_or_empty_frame) {
  frame_assembler in{100};
  in.append(bytes({0x00, 0x00, 0x10, 0x00}));
  auto big = in.next();
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), error_code::protocol);
  frame_assembler empty;
  empty.append(bytes({0, 0, 0, 0}));
  EXPECT_FALSE(empty.next());
}

// -- hadoop.rpc.protection ---------------------------------------------------------

TEST(sasl_qop, parses_hadoop_rpc_protection) {
  auto one = parse_rpc_protection("privacy");
  ASSERT_TRUE(one);
  EXPECT_TRUE(one->contains(qop::auth_conf));
  EXPECT_FALSE(one->contains(qop::auth));
  auto two = parse_rpc_protection(" Authentication , INTEGRITY ");
  ASSERT_TRUE(two);
  EXPECT_TRUE(two->contains(qop::auth));
  EXPECT_TRUE(two->contains(qop::auth_int));
  EXPECT_FALSE(two->contains(qop::auth_conf));
  EXPECT_EQ(to_string(*two), "authentication, integrity");
  auto bad = parse_rpc_protection("secret");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("'secret'"), std::string::npos);
  EXPECT_FALSE(parse_rpc_protection(" , "));
}

TEST(sasl_qop, picks_the_strongest_offered_layer_the_client_accepts) {
  qop chosen = qop::auth;
  EXPECT_TRUE(qop_set::all().pick(0x07, chosen));
  EXPECT_EQ(chosen, qop::auth_conf);
  EXPECT_TRUE(qop_set::all().pick(0x03, chosen));
  EXPECT_EQ(chosen, qop::auth_int);
  EXPECT_TRUE(qop_set{1}.pick(0x07, chosen));
  EXPECT_EQ(chosen, qop::auth);
  EXPECT_FALSE(qop_set{1}.pick(0x04, chosen));
}

// -- server principals ----------------------------------------------------------------

TEST(server_principal, host_substitution_lowers_the_host) {
  EXPECT_EQ(substitute_host("rm/_HOST@EXAMPLE.COM", "RM1.Example.com"),
            "rm/rm1.example.com@EXAMPLE.COM");
  EXPECT_EQ(substitute_host("rm/fixed.host@EXAMPLE.COM", "other"),
            "rm/fixed.host@EXAMPLE.COM");
  EXPECT_EQ(substitute_host("rm@EXAMPLE.COM", "h"), "rm@EXAMPLE.COM");
}

TEST(server_principal, globs_follow_hadoop_glob_pattern) {
  EXPECT_TRUE(glob_match("rm/*@EXAMPLE.COM", "rm/host1.example.com@EXAMPLE.COM"));
  EXPECT_FALSE(glob_match("rm/*@EXAMPLE.COM", "nn/host1@EXAMPLE.COM"));
  EXPECT_TRUE(glob_match("{rm,nn}/host?@*", "nn/host7@R"));
  EXPECT_TRUE(glob_match("rm/host[0-9]@R", "rm/host3@R"));
  EXPECT_FALSE(glob_match("rm/host[!0-9]@R", "rm/host3@R"));
  EXPECT_TRUE(glob_match("a.b", "a.b"));
  EXPECT_FALSE(glob_match("a.b", "axb"));
  EXPECT_FALSE(glob_match("{unbalanced", "{unbalanced"));
}

TEST(server_principal, the_configured_principal_with_host_is_accepted) {
  kerberos_service rm{"yarn.resourcemanager.principal", "rm/_HOST@EXAMPLE.COM", ""};
  auto ok =
      check_server_principal(rm, "rm/rm1.example.com@EXAMPLE.COM", "rm1.example.com");
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(*ok, "rm/rm1.example.com@EXAMPLE.COM");
}

TEST(server_principal, another_principal_is_refused_as_possible_impersonation) {
  kerberos_service rm{"yarn.resourcemanager.principal", "rm/_HOST@EXAMPLE.COM", ""};
  auto bad =
      check_server_principal(rm, "nn/rm1.example.com@EXAMPLE.COM", "rm1.example.com");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), error_code::auth);
  EXPECT_NE(bad.error().message().find("possible impersonation"), std::string::npos);
  EXPECT_NE(bad.error().message().find("rm/rm1.example.com@EXAMPLE.COM"),
            std::string::npos)
      << bad.error().message();
  // The right service on another host is refused too.
  EXPECT_FALSE(
      check_server_principal(rm, "rm/evil.example.com@EXAMPLE.COM", "rm1.example.com"));
}

TEST(server_principal, a_pattern_replaces_the_exact_check) {
  kerberos_service nn{"dfs.namenode.kerberos.principal", "nn/_HOST@EXAMPLE.COM",
                      "nn/*.example.com@EXAMPLE.COM"};
  EXPECT_TRUE(
      check_server_principal(nn, "nn/a.example.com@EXAMPLE.COM", "b.example.com"));
  auto bad = check_server_principal(nn, "nn/a.evil.org@EXAMPLE.COM", "a.evil.org");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find(".pattern"), std::string::npos);
}

TEST(server_principal, an_unconfigured_principal_says_which_key_to_set) {
  kerberos_service rm{"yarn.resourcemanager.principal", "", ""};
  auto bad = check_server_principal(rm, "rm/h@R", "h");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("yarn.resourcemanager.principal"),
            std::string::npos);
}

TEST(server_principal, the_canonical_host_of_a_numeric_address_without_a_name_is_itself) {
  // 192.0.2.0/24 is TEST-NET-1: no reverse name anywhere.
  EXPECT_EQ(canonical_host(endpoint{"192.0.2.7", 8032}), "192.0.2.7");
}

} // namespace
} // namespace tony::hadoop
