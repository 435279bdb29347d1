#include "hadoop/rpc_codec.hpp"

#include "hadoop/byte_reader.hpp"

namespace tony::hadoop {

std::string connection_preamble(auth_protocol auth) {
  std::string result = "hrpc";
  result.push_back(static_cast<char>(rpc_version));
  result.push_back('\0'); // service class: default
  result.push_back(static_cast<char>(auth));
  return result;
}

void append_varint(std::string& out, uint64_t x) {
  while (x >= 0x80) {
    out.push_back(static_cast<char>((x & 0x7F) | 0x80));
    x >>= 7;
  }
  out.push_back(static_cast<char>(x));
}

void append_delimited(std::string& out, const google::protobuf::MessageLite& msg) {
  auto size = msg.ByteSizeLong();
  append_varint(out, size);
  auto offset = out.size();
  out.resize(offset + size);
  msg.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&out[offset]));
}

std::string make_frame(std::initializer_list<const google::protobuf::MessageLite*> msgs) {
  std::string out(4, '\0');
  for (auto* msg : msgs)
    append_delimited(out, *msg);
  auto len = static_cast<uint32_t>(out.size() - 4);
  out[0] = static_cast<char>((len >> 24) & 0xFF);
  out[1] = static_cast<char>((len >> 16) & 0xFF);
  out[2] = static_cast<char>((len >> 8) & 0xFF);
  out[3] = static_cast<char>(len & 0xFF);
  return out;
}

proto::RpcRequestHeaderProto
make_request_header(int32_t call_id, std::string_view client_id, int32_t retry_count) {
  proto::RpcRequestHeaderProto header;
  header.set_rpckind(proto::RPC_PROTOCOL_BUFFER);
  header.set_rpcop(proto::RpcRequestHeaderProto::RPC_FINAL_PACKET);
  header.set_callid(call_id);
  header.set_clientid(client_id.data(), client_id.size());
  header.set_retrycount(retry_count);
  return header;
}

std::string make_call_frame(int32_t call_id, std::string_view client_id,
                            int32_t retry_count, const std::string& method,
                            const std::string& protocol,
                            const google::protobuf::MessageLite& request) {
  auto header = make_request_header(call_id, client_id, retry_count);
  proto::RequestHeaderProto request_header;
  request_header.set_methodname(method);
  request_header.set_declaringclassprotocolname(protocol);
  request_header.set_clientprotocolversion(1);
  return make_frame({&header, &request_header, &request});
}

std::string make_ping_frame() {
  auto header = make_request_header(ping_call_id, {}, -1);
  return make_frame({&header});
}

expected<uint32_t> decode_frame_length(std::string_view four_bytes, uint32_t max_bytes) {
  if (four_bytes.size() != 4)
    return error{error_code::protocol, "frame length needs 4 bytes"};
  uint32_t len = 0;
  for (auto c : four_bytes)
    len = (len << 8) | static_cast<uint8_t>(c);
  if (len == 0)
    return error{error_code::protocol, "empty response frame"};
  if (len > max_bytes)
    return error{error_code::protocol,
                 "response frame of " + std::to_string(len) +
                     " bytes exceeds the limit of " + std::to_string(max_bytes) +
                     " (is this a Hadoop RPC port? an HTTP port answers like this)"};
  return len;
}

expected<rpc_response> decode_response(std::string_view frame) {
  byte_reader in{frame};
  auto len = in.read_varint("response header length");
  if (!len)
    return error{error_code::protocol, len.error().message()};
  if (*len > in.remaining())
    return error{error_code::protocol, "response header length " + std::to_string(*len) +
                                           " exceeds the frame (" +
                                           std::to_string(in.remaining()) +
                                           " bytes left)"};
  auto bytes = in.read_bytes(static_cast<size_t>(*len), "response header");
  if (!bytes)
    return error{error_code::protocol, bytes.error().message()};
  proto::RpcResponseHeaderProto header;
  if (!parse_quietly(*bytes, header))
    return error{error_code::protocol, "response header does not parse"};
  rpc_response result;
  result.call_id = static_cast<int32_t>(header.callid());
  result.status = static_cast<rpc_status>(header.status());
  result.exception_class = header.exceptionclassname();
  result.error_message = header.errormsg();
  result.error_detail = header.errordetail();
  result.body = in.rest();
  return result;
}

bool parse_quietly(std::string_view bytes, google::protobuf::MessageLite& msg) {
  return msg.ParsePartialFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
         msg.IsInitialized();
}

expected<void> parse_delimited(std::string_view bytes, google::protobuf::MessageLite& msg,
                               const char* what) {
  byte_reader in{bytes};
  auto len = in.read_varint(what);
  if (!len)
    return error{error_code::protocol, len.error().message()};
  if (*len != in.remaining())
    return error{error_code::protocol, std::string{what} + " length " +
                                           std::to_string(*len) + " does not match the " +
                                           std::to_string(in.remaining()) +
                                           " bytes in the frame"};
  auto body = in.rest();
  if (!parse_quietly(body, msg))
    return error{error_code::protocol, std::string{what} + " does not parse"};
  return {};
}

expected<proto::RpcSaslProto> decode_sasl(std::string_view body) {
  proto::RpcSaslProto msg;
  if (auto ok = parse_delimited(body, msg, "SASL message"); !ok)
    return ok.error();
  return msg;
}

const char* sasl_state_name(int state) {
  switch (state) {
  case proto::RpcSaslProto::SUCCESS:
    return "SUCCESS";
  case proto::RpcSaslProto::NEGOTIATE:
    return "NEGOTIATE";
  case proto::RpcSaslProto::INITIATE:
    return "INITIATE";
  case proto::RpcSaslProto::CHALLENGE:
    return "CHALLENGE";
  case proto::RpcSaslProto::RESPONSE:
    return "RESPONSE";
  case proto::RpcSaslProto::WRAP:
    return "WRAP";
  default:
    return "UNKNOWN";
  }
}

std::string make_wrap_frame(std::string_view token) {
  auto header = make_request_header(sasl_call_id, {}, -1);
  proto::RpcSaslProto msg;
  msg.set_state(proto::RpcSaslProto::WRAP);
  msg.set_token(token.data(), token.size());
  return make_frame({&header, &msg});
}

std::vector<std::string_view> split_for_wrap(std::string_view plain, size_t max_piece) {
  std::vector<std::string_view> result;
  if (max_piece == 0)
    max_piece = 1;
  for (size_t pos = 0; pos < plain.size(); pos += max_piece)
    result.push_back(plain.substr(pos, max_piece));
  return result;
}

expected<std::string> decode_wrap(std::string_view body) {
  auto msg = decode_sasl(body);
  if (!msg)
    return msg.error();
  if (msg->state() != proto::RpcSaslProto::WRAP)
    return error{error_code::protocol, std::string{"expected a SASL WRAP message, got "} +
                                           sasl_state_name(msg->state())};
  return std::move(*msg->mutable_token());
}

expected<std::optional<std::string>> frame_assembler::next() {
  if (pending() < 4)
    return std::optional<std::string>{};
  auto len = decode_frame_length(std::string_view{buffer_}.substr(consumed_, 4),
                                 max_frame_bytes_);
  if (!len)
    return len.error();
  if (pending() - 4 < *len)
    return std::optional<std::string>{};
  std::optional<std::string> frame{buffer_.substr(consumed_ + 4, *len)};
  consumed_ += 4 + *len;
  // Drop what was returned once it outweighs what is kept.
  if (consumed_ > buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  return frame;
}

} // namespace tony::hadoop
