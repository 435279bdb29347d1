#pragma once

// Errors of the Hadoop client layer as plain values. This layer does not
// depend on CAF; the actor adapters turn an error into a caf::error with
// error::message() as its text (see doc/hadoop-rpc.md for the mapping).

#include <cstdint>
#include <string>
#include <utility>

namespace tony::hadoop {

/// What kind of failure an error is. The kind decides whether a retry can
/// help: connect_failed and connection_closed may heal, protocol and auth
/// will not.
enum class error_code : uint8_t {
  /// The TCP connection could not be established (refused, unreachable,
  /// name not resolved) within the connect budget.
  connect_failed,
  /// A call or connection setup ran past its deadline.
  timeout,
  /// The connection broke while a call was outstanding.
  connection_closed,
  /// The peer sent something that is not the protocol.
  protocol,
  /// Authentication failed (SASL, missing token, wrong rspauth).
  auth,
  /// The server answered the call with an exception (remote_class() names
  /// the Java class).
  remote,
  /// A local input was malformed: token file, XML, id, address.
  invalid_input,
  /// A local file could not be read.
  io,
  /// A required item (property, token) is absent.
  not_found,
  /// The client was shut down (ipc_client::shut_down): its process is
  /// ending, and no call of it is answered or tried again.
  cancelled,
};

const char* to_string(error_code x);

class error {
public:
  error(error_code code, std::string message)
      : code_(code)
      , message_(std::move(message)) {
    // nop
  }

  /// A server-side exception. `message` is the full human text; the Java
  /// class and the server's own text are kept apart for callers that react
  /// to particular exceptions (e.g. ApplicationMasterNotRegisteredException).
  error(error_code code, std::string message, std::string remote_class,
        std::string remote_message, bool fatal)
      : code_(code)
      , message_(std::move(message))
      , remote_class_(std::move(remote_class))
      , remote_message_(std::move(remote_message))
      , fatal_(fatal) {
    // nop
  }

  error_code code() const noexcept { return code_; }

  /// What went wrong, where, and what to do about it.
  const std::string& message() const noexcept { return message_; }

  /// The Java exception class for remote errors, else empty.
  const std::string& remote_class() const noexcept { return remote_class_; }

  /// The server's exception text for remote errors, else empty.
  const std::string& remote_message() const noexcept { return remote_message_; }

  /// True if the server closed the connection with this error (FATAL).
  bool fatal() const noexcept { return fatal_; }

  /// True if the remote class ends in `simple_name`, e.g.
  /// "ApplicationMasterNotRegisteredException".
  bool is_remote(const std::string& simple_name) const;

  /// Returns a copy whose message is prefixed with `context` and ": ".
  error with_context(const std::string& context) const;

private:
  error_code code_;
  std::string message_;
  std::string remote_class_;
  std::string remote_message_;
  bool fatal_ = false;
};

} // namespace tony::hadoop
