#pragma once

// A loopback Hadoop RPC "server" for unit tests: it accepts connections on
// 127.0.0.1 and runs a scripted handler per connection, so tests can answer
// exactly the bytes they want (good replies, garbage, truncation, silence).
// Every read has a timeout; a broken client can fail a test, never hang it.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/message_lite.h>

#include "hadoop/byte_reader.hpp"
#include "hadoop/proto/hadoop_rpc.pb.h"
#include "hadoop/rpc_codec.hpp"

namespace tony::hadoop::testing {

/// One frame a client sent, split into its delimited messages.
struct client_frame {
  proto::RpcRequestHeaderProto header;
  std::vector<std::string> messages; // the messages after the header, raw
};

/// The server side of one accepted connection.
class fake_peer {
public:
  explicit fake_peer(int fd)
      : fd_(fd) {
    // nop
  }

  ~fake_peer() { close(); }

  /// Reads exactly n bytes, or nullopt on EOF/timeout (5 s).
  std::optional<std::string> read(size_t n) {
    std::string out(n, '\0');
    size_t done = 0;
    while (done < n) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0)
        return std::nullopt;
      auto got = ::recv(fd_, out.data() + done, n - done, 0);
      if (got <= 0)
        return std::nullopt;
      done += static_cast<size_t>(got);
    }
    return out;
  }

  std::optional<std::string> read_preamble() { return read(7); }

  std::optional<client_frame> read_frame() {
    auto len_bytes = read(4);
    if (!len_bytes)
      return std::nullopt;
    uint32_t len = 0;
    for (auto c : *len_bytes)
      len = (len << 8) | static_cast<uint8_t>(c);
    auto body = read(len);
    if (!body)
      return std::nullopt;
    byte_reader in{*body};
    client_frame result;
    bool first = true;
    while (!in.at_end()) {
      auto n = in.read_varint("len");
      if (!n)
        return std::nullopt;
      auto bytes = in.read_bytes(static_cast<size_t>(*n), "msg");
      if (!bytes)
        return std::nullopt;
      if (first) {
        if (!result.header.ParseFromArray(bytes->data(), static_cast<int>(bytes->size())))
          return std::nullopt;
        first = false;
      } else {
        result.messages.emplace_back(*bytes);
      }
    }
    return result;
  }

  void write(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      auto n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0)
        return;
      done += static_cast<size_t>(n);
    }
  }

  void close() {
    if (fd_ >= 0) {
      ::shutdown(fd_, SHUT_RDWR);
      ::close(fd_);
      fd_ = -1;
    }
  }

  /// Discards whatever the client sends until it closes its side; false if
  /// it stays open and silent for 5 s.
  bool wait_for_eof() {
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0)
        return false;
      char buf[4096];
      if (::recv(fd_, buf, sizeof(buf), 0) <= 0)
        return true;
    }
  }

private:
  int fd_;
};

/// Serializes a response frame: header, then (optionally) one message.
inline std::string response_frame(int32_t call_id,
                                  proto::RpcResponseHeaderProto::RpcStatusProto status,
                                  const google::protobuf::MessageLite* msg = nullptr,
                                  const std::string& exception_class = {},
                                  const std::string& error_msg = {}) {
  proto::RpcResponseHeaderProto header;
  header.set_callid(static_cast<uint32_t>(call_id));
  header.set_status(status);
  header.set_serveripcversionnum(9);
  if (!exception_class.empty())
    header.set_exceptionclassname(exception_class);
  if (!error_msg.empty())
    header.set_errormsg(error_msg);
  if (msg != nullptr)
    return make_frame({&header, msg});
  return make_frame({&header});
}

inline std::string sasl_response(const proto::RpcSaslProto& msg) {
  return response_frame(sasl_call_id, proto::RpcResponseHeaderProto::SUCCESS, &msg);
}

/// Listens on 127.0.0.1 (ephemeral port) and runs `handler` for each
/// accepted connection on a thread of its own.
class fake_server {
public:
  using handler = std::function<void(fake_peer&)>;

  explicit fake_server(handler h)
      : handler_(std::move(h)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 16);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread{[this] { run(); }};
  }

  ~fake_server() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    for (auto& t : peers_)
      t.join();
    ::close(fd_);
  }

  uint16_t port() const { return port_; }

  /// Number of connections accepted so far.
  int accepted() const { return accepted_.load(); }

private:
  void run() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0)
        continue;
      int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0)
        continue;
      ++accepted_;
      peers_.emplace_back([this, conn] {
        fake_peer peer{conn};
        handler_(peer);
      });
    }
  }

  handler handler_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
  std::vector<std::thread> peers_; // touched by thread_ only until joined
};

} // namespace tony::hadoop::testing

#include "hadoop/crypto.hpp"
#include "hadoop/token.hpp"
#include "tests/unit/hadoop/rfc2831.hpp"

namespace tony::hadoop::testing {

/// What the fake saw of a client's DIGEST-MD5 login.
struct sasl_login {
  bool ok = false;
  std::string username; // base64 of the token identifier
  std::string problem;
};

/// Plays the server side of a TOKEN/DIGEST-MD5 login with `tok` after the
/// preamble: NEGOTIATE with an inline challenge, checks the client's
/// response, answers SUCCESS with rspauth (or a wrong one if asked).
inline sasl_login serve_sasl(fake_peer& peer, const token& tok,
                             bool wrong_rspauth = false) {
  sasl_login result;
  auto negotiate = peer.read_frame();
  if (!negotiate || negotiate->header.callid() != sasl_call_id) {
    result.problem = "no NEGOTIATE";
    return result;
  }
  const std::string nonce = "fake-nonce-1234";
  proto::RpcSaslProto offer;
  offer.set_state(proto::RpcSaslProto::NEGOTIATE);
  auto* auth = offer.add_auths();
  auth->set_method("TOKEN");
  auth->set_mechanism("DIGEST-MD5");
  auth->set_protocol("");
  auth->set_serverid("default");
  auth->set_challenge("realm=\"default\",nonce=\"" + nonce +
                      "\",qop=\"auth\",charset=utf-8,algorithm=md5-sess");
  peer.write(sasl_response(offer));
  auto initiate = peer.read_frame();
  if (!initiate || initiate->messages.size() != 1) {
    result.problem = "no INITIATE";
    return result;
  }
  proto::RpcSaslProto msg;
  msg.ParseFromString(initiate->messages[0]);
  if (msg.state() != proto::RpcSaslProto::INITIATE || msg.auths_size() != 1 ||
      msg.auths(0).has_challenge()) {
    result.problem = "bad INITIATE";
    return result;
  }
  // Pull username and cnonce out of the response and recompute it.
  auto text = msg.token();
  auto field = [&](const std::string& name) { return directive(text, name); };
  digest_params p;
  p.username = field("username");
  p.realm = "default";
  p.password = base64_encode(tok.password);
  p.nonce = nonce;
  p.cnonce = field("cnonce");
  p.digest_uri = "/default";
  result.username = p.username;
  if (p.username != base64_encode(tok.identifier) || field("digest-uri") != "/default" ||
      field("response") != digest_response_value(p)) {
    result.problem = "wrong digest response: " + text;
    return result;
  }
  proto::RpcSaslProto success;
  success.set_state(proto::RpcSaslProto::SUCCESS);
  success.set_token("rspauth=" +
                    (wrong_rspauth ? std::string(32, '0') : digest_rspauth_value(p)));
  peer.write(sasl_response(success));
  result.ok = true;
  return result;
}

/// Reads the connection context frame; returns its message or nullopt.
inline std::optional<proto::IpcConnectionContextProto> read_context(fake_peer& peer) {
  auto frame = peer.read_frame();
  if (!frame || frame->header.callid() != connection_context_call_id ||
      frame->messages.size() != 1)
    return std::nullopt;
  proto::IpcConnectionContextProto ctx;
  if (!ctx.ParseFromString(frame->messages[0]))
    return std::nullopt;
  return ctx;
}

/// A call frame: header, request header and the request's raw bytes.
struct client_call {
  int32_t call_id = 0;
  proto::RequestHeaderProto request_header;
  std::string request;
};

inline std::optional<client_call> read_call(fake_peer& peer) {
  for (;;) {
    auto frame = peer.read_frame();
    if (!frame)
      return std::nullopt;
    if (frame->header.callid() == ping_call_id)
      continue;
    if (frame->messages.size() != 2)
      return std::nullopt;
    client_call result;
    result.call_id = frame->header.callid();
    if (!result.request_header.ParseFromString(frame->messages[0]))
      return std::nullopt;
    result.request = frame->messages[1];
    return result;
  }
}

/// Accepts preamble + (SIMPLE) context: the common start of a connection.
inline bool accept_simple(fake_peer& peer) {
  auto pre = peer.read_preamble();
  return pre && *pre == connection_preamble(auth_protocol::none) && read_context(peer);
}

/// Accepts preamble + SASL with `tok` + context.
inline bool accept_token(fake_peer& peer, const token& tok) {
  auto pre = peer.read_preamble();
  return pre && *pre == connection_preamble(auth_protocol::sasl) &&
         serve_sasl(peer, tok).ok && read_context(peer);
}

} // namespace tony::hadoop::testing
