#pragma once

// Hadoop IPC (RPC version 9) framing, as pure functions over bytes so that
// golden tests and fuzzers reach them without sockets.
//
//   connection:  "hrpc" | 09 | service class 00 | auth protocol (00 NONE, DF SASL)
//   every frame: u32 big-endian length of the rest | delimited messages
//   request:     RpcRequestHeaderProto | RequestHeaderProto | request
//   response:    RpcResponseHeaderProto | (on SUCCESS) response
//   "delimited" = protobuf varint length + message bytes.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message_lite.h>

#include "hadoop/expected.hpp"
#include "hadoop/proto/hadoop_rpc.pb.h"

namespace tony::hadoop {

constexpr uint8_t rpc_version = 9;

enum class auth_protocol : uint8_t {
  none = 0x00,
  sasl = 0xDF,
};

/// Call ids with a fixed meaning; ordinary calls count up from 0.
constexpr int32_t connection_context_call_id = -3;
constexpr int32_t ping_call_id = -4;
constexpr int32_t sasl_call_id = -33;

/// Responses larger than this are treated as a protocol violation (Hadoop's
/// ipc.maximum.response.length default).
constexpr uint32_t default_max_response_bytes = 128u * 1024u * 1024u;

/// The 7 bytes a client writes first.
std::string connection_preamble(auth_protocol auth);

/// Protobuf sint32 zigzag mapping: -33 -> 65 (0x41).
constexpr uint32_t zigzag32(int32_t x) {
  return (static_cast<uint32_t>(x) << 1) ^ static_cast<uint32_t>(x >> 31);
}

constexpr int32_t unzigzag32(uint32_t x) {
  return static_cast<int32_t>((x >> 1) ^ (~(x & 1) + 1));
}

void append_varint(std::string& out, uint64_t x);

/// Appends varint(size) + bytes of `msg`.
void append_delimited(std::string& out, const google::protobuf::MessageLite& msg);

/// A complete frame: 4-byte big-endian length, then each message delimited.
std::string make_frame(std::initializer_list<const google::protobuf::MessageLite*> msgs);

/// The header of every request. `client_id` is 16 bytes for calls and the
/// connection context, empty for SASL and ping; retry_count is 0 for a
/// first try and -1 for context, SASL and ping.
proto::RpcRequestHeaderProto
make_request_header(int32_t call_id, std::string_view client_id, int32_t retry_count);

/// The frame of a method call.
std::string make_call_frame(int32_t call_id, std::string_view client_id,
                            int32_t retry_count, const std::string& method,
                            const std::string& protocol,
                            const google::protobuf::MessageLite& request);

/// The idle ping: a header alone.
std::string make_ping_frame();

/// The length prefix of a frame, checked against `max_bytes`.
expected<uint32_t> decode_frame_length(std::string_view four_bytes,
                                       uint32_t max_bytes = default_max_response_bytes);

enum class rpc_status : uint8_t { success = 0, error = 1, fatal = 2 };

/// A decoded response frame (without its length prefix).
struct rpc_response {
  int32_t call_id = 0;
  rpc_status status = rpc_status::success;
  std::string exception_class;
  std::string error_message;
  int32_t error_detail = 0;
  /// On success: the bytes after the header, i.e. one delimited message.
  std::string_view body;
};

/// Decodes the response header of `frame` (the bytes after the length).
/// `body` points into `frame`.
expected<rpc_response> decode_response(std::string_view frame);

/// Parses `bytes` into `msg`, requiring every required field, without
/// protobuf's logging (input here is untrusted and may be garbage).
bool parse_quietly(std::string_view bytes, google::protobuf::MessageLite& msg);

/// Parses exactly one delimited message from `bytes` into `msg` (no bytes
/// may follow). `what` names the message in errors.
expected<void> parse_delimited(std::string_view bytes, google::protobuf::MessageLite& msg,
                               const char* what);

/// Decodes the RpcSaslProto carried by a SASL response frame body.
expected<proto::RpcSaslProto> decode_sasl(std::string_view body);

/// "SUCCESS", "NEGOTIATE", ...
const char* sasl_state_name(int state);

// -- SASL wrapping (QOP auth-int and auth-conf) ------------------------------
//
//   client:  ordinary frames ─▶ pieces of at most the negotiated raw send
//            size ─▶ wrap(piece) ─▶ one WRAP message per piece:
//            u32 length | RpcRequestHeaderProto (call id -33) |
//            RpcSaslProto {state WRAP, token}
//   server:  one WRAP response (call id -33, SUCCESS) per response frame;
//            its unwrapped token is that whole frame, length included.
//
// Unwrapped bytes are a stream of ordinary frames, cut anywhere: a token
// may hold part of a frame, one frame or several (Hadoop's
// WrappedOutputStream writes through a buffer of the raw send size).

/// The frame of one SASL WRAP message carrying `token`.
std::string make_wrap_frame(std::string_view token);

/// `plain` cut into consecutive pieces of at most `max_piece` bytes (at
/// least one byte each; none for empty input).
std::vector<std::string_view> split_for_wrap(std::string_view plain, size_t max_piece);

/// The token of a WRAP response (the body of a call id -33 frame), or an
/// error if the body is not a WRAP message.
expected<std::string> decode_wrap(std::string_view body);

/// Reassembles ordinary frames from unwrapped bytes.
class frame_assembler {
public:
  explicit frame_assembler(uint32_t max_frame_bytes = default_max_response_bytes)
      : max_frame_bytes_(max_frame_bytes) {
    // nop
  }

  /// Adds unwrapped bytes.
  void append(std::string_view bytes) { buffer_.append(bytes.data(), bytes.size()); }

  /// The next complete frame without its length prefix, nullopt while
  /// incomplete, an error for a length of 0 or above the limit.
  expected<std::optional<std::string>> next();

  /// Bytes received but not yet returned as a frame.
  size_t pending() const noexcept { return buffer_.size() - consumed_; }

private:
  uint32_t max_frame_bytes_;
  std::string buffer_;
  size_t consumed_ = 0;
};

} // namespace tony::hadoop
