// Golden bytes of Hadoop IPC frames, written by hand from the wire format
// (RpcHeader.proto field numbers, zigzag call ids, 4-byte lengths).

#include <gtest/gtest.h>

#include <string>

#include "hadoop/proto/hadoop_rpc.pb.h"
#include "hadoop/rpc_codec.hpp"

namespace tony::hadoop {
namespace {

std::string bytes(std::initializer_list<int> xs) {
  std::string out;
  for (auto x : xs)
    out.push_back(static_cast<char>(x));
  return out;
}

std::string hex(const std::string& x) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (auto c : x) {
    out += digits[(static_cast<uint8_t>(c) >> 4) & 0xF];
    out += digits[static_cast<uint8_t>(c) & 0xF];
    out += ' ';
  }
  return out;
}

TEST(rpc_codec, zigzag_maps_reserved_call_ids_to_small_varints) {
  EXPECT_EQ(zigzag32(-33), 0x41u);
  EXPECT_EQ(zigzag32(-3), 5u);
  EXPECT_EQ(zigzag32(-4), 7u);
  EXPECT_EQ(zigzag32(0), 0u);
  EXPECT_EQ(zigzag32(1), 2u);
  EXPECT_EQ(zigzag32(-1), 1u);
  EXPECT_EQ(zigzag32(INT32_MIN), 0xFFFFFFFFu);
  for (int32_t x : {0, 1, -1, -33, 1000, INT32_MAX, INT32_MIN})
    EXPECT_EQ(unzigzag32(zigzag32(x)), x);
}

TEST(rpc_codec, preamble_is_hrpc_version_class_and_auth) {
  EXPECT_EQ(connection_preamble(auth_protocol::none),
            bytes({'h', 'r', 'p', 'c', 0x09, 0x00, 0x00}));
  EXPECT_EQ(connection_preamble(auth_protocol::sasl),
            bytes({'h', 'r', 'p', 'c', 0x09, 0x00, 0xDF}));
}

TEST(rpc_codec, sasl_negotiate_frame_matches_the_golden_bytes) {
  auto header = make_request_header(sasl_call_id, {}, -1);
  proto::RpcSaslProto negotiate;
  negotiate.set_state(proto::RpcSaslProto::NEGOTIATE);
  auto frame = make_frame({&header, &negotiate});
  auto golden = bytes({0x00, 0x00, 0x00, 0x0E, // length 14
                       0x0A,                   // header: 10 bytes
                       0x08, 0x02,             // rpcKind = 2
                       0x10, 0x00,             // rpcOp = 0
                       0x18, 0x41,             // callId = -33
                       0x22, 0x00,             // clientId = ""
                       0x28, 0x01,             // retryCount = -1
                       0x02, 0x10, 0x01});     // state = NEGOTIATE
  EXPECT_EQ(hex(frame), hex(golden));
}

TEST(rpc_codec, ping_frame_is_a_header_alone_with_call_id_minus_4) {
  auto golden = bytes({0x00, 0x00, 0x00, 0x0B, 0x0A, 0x08, 0x02, 0x10, 0x00, 0x18, 0x07,
                       0x22, 0x00, 0x28, 0x01});
  EXPECT_EQ(hex(make_ping_frame()), hex(golden));
}

TEST(rpc_codec, call_frame_carries_header_request_header_and_request) {
  std::string client_id;
  for (int i = 0; i < 16; ++i)
    client_id.push_back(static_cast<char>(i));
  const std::string method = "getNewApplication";
  const std::string protocol = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";
  proto::IpcConnectionContextProto request; // an empty message: zero bytes
  auto frame = make_call_frame(7, client_id, 0, method, protocol, request);

  std::string header = bytes({0x08, 0x02, 0x10, 0x00, 0x18, 0x0E, 0x22, 0x10});
  header += client_id;
  header += bytes({0x28, 0x00});
  std::string request_header = bytes({0x0A, static_cast<int>(method.size())}) + method +
                               bytes({0x12, static_cast<int>(protocol.size())}) +
                               protocol + bytes({0x18, 0x01});
  std::string body = bytes({static_cast<int>(header.size())}) + header +
                     bytes({static_cast<int>(request_header.size())}) + request_header +
                     bytes({0x00});
  auto len = static_cast<uint32_t>(body.size());
  auto golden =
      bytes({0, 0, static_cast<int>(len >> 8), static_cast<int>(len & 0xFF)}) + body;
  EXPECT_EQ(hex(frame), hex(golden));
}

TEST(rpc_codec, connection_context_golden_bytes) {
  std::string client_id(16, '\x11');
  auto header = make_request_header(connection_context_call_id, client_id, -1);
  proto::IpcConnectionContextProto context;
  context.mutable_userinfo()->set_effectiveuser("bob");
  context.set_protocol("p");
  auto frame = make_frame({&header, &context});
  std::string h = bytes({0x08, 0x02, 0x10, 0x00, 0x18, 0x05, 0x22, 0x10}) + client_id +
                  bytes({0x28, 0x01});
  std::string c = bytes({0x12, 0x05, 0x0A, 0x03, 'b', 'o', 'b', 0x1A, 0x01, 'p'});
  std::string body =
      bytes({static_cast<int>(h.size())}) + h + bytes({static_cast<int>(c.size())}) + c;
  auto golden = bytes({0, 0, 0, static_cast<int>(body.size())}) + body;
  EXPECT_EQ(hex(frame), hex(golden));
}

TEST(rpc_codec, decodes_a_success_response_and_its_body) {
  // header {callId 3, status SUCCESS, serverIpcVersionNum 9}, body {state 0}
  auto frame = bytes({0x06, 0x08, 0x03, 0x10, 0x00, 0x18, 0x09, 0x02, 0x10, 0x00});
  auto rsp = decode_response(frame);
  ASSERT_TRUE(rsp) << rsp.error().message();
  EXPECT_EQ(rsp->call_id, 3);
  EXPECT_EQ(rsp->status, rpc_status::success);
  proto::RpcSaslProto body;
  ASSERT_TRUE(parse_delimited(rsp->body, body, "body"));
  EXPECT_EQ(body.state(), proto::RpcSaslProto::SUCCESS);
}

TEST(rpc_codec, decodes_an_error_response_with_class_and_message) {
  proto::RpcResponseHeaderProto header;
  header.set_callid(0xFFFFFFDFu); // -33 as uint32
  header.set_status(proto::RpcResponseHeaderProto::FATAL);
  header.set_exceptionclassname("org.apache.hadoop.security.AccessControlException");
  header.set_errormsg("SIMPLE authentication is not enabled.  Available:[TOKEN]");
  header.set_errordetail(15);
  auto frame = make_frame({&header}).substr(4);
  auto rsp = decode_response(frame);
  ASSERT_TRUE(rsp);
  EXPECT_EQ(rsp->call_id, -33);
  EXPECT_EQ(rsp->status, rpc_status::fatal);
  EXPECT_EQ(rsp->exception_class, "org.apache.hadoop.security.AccessControlException");
  EXPECT_EQ(rsp->error_detail, 15);
  EXPECT_TRUE(rsp->body.empty());
}

TEST(rpc_codec, rejects_malformed_responses) {
  EXPECT_FALSE(decode_response(""));
  EXPECT_FALSE(decode_response(bytes({0x7F, 0x08})));       // length past the end
  EXPECT_FALSE(decode_response(bytes({0x02, 0xFF, 0xFF}))); // header does not parse
  EXPECT_FALSE(decode_response(bytes({0x02, 0x08, 0x01}))); // status missing
  EXPECT_FALSE(decode_response(bytes({0x80, 0x80, 0x80}))); // truncated varint
}

TEST(rpc_codec, frame_length_is_bounded) {
  auto ok = decode_frame_length(bytes({0x00, 0x00, 0x01, 0x00}));
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 256u);
  EXPECT_FALSE(decode_frame_length(bytes({0, 0, 0, 0})));
  // "HTTP" read as a length: an HTTP server on an RPC port.
  auto http = decode_frame_length("HTTP");
  ASSERT_FALSE(http);
  EXPECT_NE(http.error().message().find("HTTP"), std::string::npos);
}

TEST(rpc_codec, parse_delimited_rejects_trailing_or_missing_bytes) {
  proto::RpcSaslProto msg;
  EXPECT_FALSE(parse_delimited(bytes({0x02, 0x10, 0x01, 0x00}), msg, "m"));
  EXPECT_FALSE(parse_delimited(bytes({0x03, 0x10, 0x01}), msg, "m"));
  EXPECT_TRUE(parse_delimited(bytes({0x02, 0x10, 0x01}), msg, "m"));
}

} // namespace
} // namespace tony::hadoop
