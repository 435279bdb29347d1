#pragma once

// One Hadoop IPC connection: connect (with retries), authenticate, send the
// connection context, then carry any number of concurrent calls.
//
//   open():   TCP connect ─▶ preamble ─▶ [SASL] ─▶ connection context
//   call():   frame out under the write lock, wait for the reply by call id
//   reader:   a thread reads frames and completes calls by call id; it
//             pings when idle and closes after max_idle without calls
//
// SASL picks TOKEN (DIGEST-MD5) with a token, KERBEROS (GSSAPI) with
// Kerberos credentials, as the server offers them. When the handshake
// settles on auth-int or auth-conf, every later frame out (context, calls,
// pings) travels wrapped in SASL WRAP messages and every frame in must
// arrive wrapped; with plain auth nothing per call changes.
//
// A call that runs past its deadline returns timeout and its late reply is
// dropped; the connection stays usable. A broken connection (EOF, garbage,
// FATAL) fails every outstanding call and is never reused.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include <google/protobuf/message_lite.h>

#include "hadoop/connection_params.hpp"
#include "hadoop/deadline.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/rpc_codec.hpp"
#include "hadoop/sasl_mechanism.hpp"
#include "hadoop/tcp_socket.hpp"

namespace tony::hadoop {

class ipc_connection {
public:
  /// Connects and authenticates before `until`. `client_id` is the 16-byte
  /// id sent with every call. When `stop` is given and becomes true, the
  /// retries of a refused connect end at once (error_code::cancelled).
  static expected<std::unique_ptr<ipc_connection>>
  open(const connection_params& params, const connection_options& opts,
       std::string client_id, deadline until, const std::atomic<bool>* stop = nullptr);

  ~ipc_connection();

  ipc_connection(const ipc_connection&) = delete;
  ipc_connection& operator=(const ipc_connection&) = delete;

  /// Calls `method` and returns the response body (one delimited message).
  /// Thread-safe. If `sent` is given it tells whether the request reached
  /// the socket (a caller may retry an unsent call on a new connection).
  expected<std::string> call(const std::string& method,
                             const google::protobuf::MessageLite& request, deadline until,
                             bool* sent = nullptr);

  /// False once the connection broke or was closed.
  bool usable() const;

  /// Fails outstanding calls and stops the reader.
  void close();

  const connection_params& params() const noexcept { return params_; }

  /// "TOKEN", "KERBEROS" or "SIMPLE": what the handshake settled on.
  const std::string& auth_method() const noexcept { return auth_method_; }

  /// The negotiated quality of protection (auth for SIMPLE).
  qop negotiated_qop() const noexcept { return qop_; }

private:
  struct pending_call {
    std::string method;
    std::optional<expected<std::string>> result;
  };

  ipc_connection(connection_params params, connection_options opts, std::string client_id,
                 tcp_socket sock);

  // What a SASL reply asks of the handshake next.
  enum class sasl_step { more, done };

  expected<void> handshake(deadline until);
  expected<void> sasl_handshake(deadline until);
  expected<proto::RpcSaslProto> read_sasl_reply(deadline until);
  expected<sasl_step> on_negotiate(const proto::RpcSaslProto& msg, deadline until);
  expected<void> on_success(const proto::RpcSaslProto& msg);
  expected<std::unique_ptr<sasl_mechanism>>
  make_mechanism(const proto::RpcSaslProto::SaslAuth& auth);
  expected<void> send_sasl(const proto::RpcSaslProto& msg, deadline until);
  std::string simple_refusal() const;
  std::string client_can() const;
  std::string server_requirement_hint(const proto::RpcSaslProto& msg) const;
  expected<std::string> read_frame(deadline until);
  // Writes one whole frame (wrapped on a protected connection).
  expected<void> write_frame(const std::string& frame, deadline until);
  expected<std::string> wrap_frame(const std::string& frame);

  void reader_loop();
  // Handles one ordinary response frame; false once the connection is done.
  bool dispatch(std::string_view frame);
  // Unwraps one WRAP frame and dispatches the frames it completes.
  bool dispatch_wrapped(std::string_view frame);
  void fail_all(error reason);
  error remote_error(const std::string& what, const struct rpc_response& rsp) const;

  const connection_params params_;
  const connection_options opts_;
  const std::string client_id_;
  tcp_socket sock_;
  std::string auth_method_ = "SIMPLE";
  qop qop_ = qop::auth;

  // The mechanism during the handshake; afterwards, with auth-int or
  // auth-conf, the security layer (set before the reader starts, then
  // only used under sasl_mtx_).
  std::unique_ptr<sasl_mechanism> sasl_;
  bool wrapped_ = false;
  size_t max_wrap_ = 0;
  std::mutex sasl_mtx_;
  frame_assembler unwrapped_; // reader thread only

  std::mutex write_mtx_;
  std::atomic<int32_t> next_call_id_{0};

  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::unordered_map<int32_t, std::shared_ptr<pending_call>> pending_;
  std::optional<error> broken_;
  clock::time_point last_call_;
  clock::time_point last_write_;
  bool closing_ = false;

  std::thread reader_;
};

} // namespace tony::hadoop
