// libFuzzer target: the client's view of everything a server may send.
// The input is a byte stream cut into frames the way the connection reader
// does (4-byte length, bounded); each frame goes through the response
// decoder, SASL messages through the SASL decoder and the DIGEST-MD5 client
// (Cyrus SASL parsing the challenge and rspauth), WRAP tokens through the
// frame reassembly, and success bodies through the YARN response parsers
// and converters.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hadoop/digest_md5.hpp"
#include "hadoop/rpc_codec.hpp"
#include "hadoop/token.hpp"
#include "hadoop/yarn/convert.hpp"
#include "hadoop/yarn/proto/yarn.pb.h"

namespace {

using namespace tony;

void sasl(std::string_view body) {
  auto msg = hadoop::decode_sasl(body);
  if (!msg)
    return;
  hadoop::token tok{"identifier", "password", "YARN_AM_RM_TOKEN", ""};
  for (auto& auth : msg->auths()) {
    auto client = hadoop::make_digest_md5_client(tok, auth.protocol(), auth.serverid());
    if (!client)
      continue;
    if (auto response = (*client)->evaluate(auth.challenge());
        response && msg->has_token())
      (void)(*client)->evaluate(msg->token());
  }
  // A WRAP token's unwrapped bytes are frames again, cut anywhere.
  if (msg->state() == hadoop::proto::RpcSaslProto::WRAP) {
    hadoop::frame_assembler frames{1 << 20};
    frames.append(msg->token());
    for (;;) {
      auto next = frames.next();
      if (!next || !*next)
        break;
      (void)hadoop::decode_response(**next);
    }
  }
}

void yarn_bodies(std::string_view body) {
  yarn::proto::AllocateResponseProto allocate;
  if (hadoop::parse_delimited(body, allocate, "allocate")) {
    for (auto& c : allocate.allocated_containers())
      (void)yarn::convert::container_from_proto(c);
    for (auto& s : allocate.completed_container_statuses())
      (void)yarn::convert::completion_from_proto(s);
    for (auto& nm : allocate.nm_tokens())
      (void)yarn::convert::node_key(nm.nodeid());
  }
  yarn::proto::GetApplicationReportResponseProto report;
  if (hadoop::parse_delimited(body, report, "report"))
    (void)yarn::convert::from_proto(report.application_report());
  yarn::proto::GetClusterNodesResponseProto nodes;
  if (hadoop::parse_delimited(body, nodes, "nodes"))
    for (auto& n : nodes.nodereports())
      (void)yarn::convert::from_proto(n);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in{reinterpret_cast<const char*>(data), size};
  while (in.size() >= 4) {
    auto len = hadoop::decode_frame_length(in.substr(0, 4), 1 << 20);
    if (!len || *len > in.size() - 4)
      break;
    auto frame = in.substr(4, *len);
    in.remove_prefix(4 + *len);
    auto rsp = hadoop::decode_response(frame);
    if (!rsp)
      continue;
    if (rsp->call_id == hadoop::sasl_call_id)
      sasl(rsp->body);
    else if (rsp->status == hadoop::rpc_status::success)
      yarn_bodies(rsp->body);
  }
  return 0;
}
