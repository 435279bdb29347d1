#pragma once

// The accepting side of Kerberos over GSSAPI, for HTTP Negotiate (SPNEGO,
// RFC 4559) on a server tony runs (`tony-history serve`), as Hadoop's
// KerberosAuthenticationHandler accepts it for its daemons' web pages:
//
//   client ── Authorization: Negotiate <base64 AP-REQ in SPNEGO> ──▶ accept()
//          ◀── the client's principal, and a reply token (mutual auth)
//
// The server's key comes from a keytab (`hadoop.http.authentication.
// kerberos.keytab`), read through MIT's credential store: no process-wide
// KRB5_KTNAME, no ticket cache. A principal of "*" accepts a ticket for any
// principal whose key the keytab holds (Hadoop's "*"); otherwise only that
// one. MIT's replay cache refuses an authenticator seen before.

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "hadoop/expected.hpp"

namespace tony::hadoop {

class gss_acceptor {
public:
  /// Reads `principal`'s key from `keytab` ("HTTP/host@REALM", or "*").
  /// error_code::io when the keytab cannot be read, auth when it holds no
  /// key of the principal; the message names both and the fix.
  static expected<std::unique_ptr<gss_acceptor>> make(const std::string& principal,
                                                      const std::string& keytab);

  ~gss_acceptor();

  gss_acceptor(const gss_acceptor&) = delete;
  gss_acceptor& operator=(const gss_acceptor&) = delete;

  struct accepted {
    std::string principal; // the client's, "alice@REALM"
    std::string reply;     // the token to send back (may be empty)
  };

  /// One complete exchange: the client's token in, its principal out.
  /// error_code::auth for a token that does not authenticate (wrong key,
  /// a replay, clock skew, garbage), with GSSAPI's words; a mechanism that
  /// wants another round trip is refused too (HTTP keeps no context).
  /// Thread-safe.
  expected<accepted> accept(std::string_view token) const;

  /// What the server is: "HTTP/host@REALM from keytab /etc/http.keytab".
  const std::string& describe() const noexcept { return description_; }

private:
  gss_acceptor() = default;

  void* cred_ = nullptr; // gss_cred_id_t
  std::string description_;
  mutable std::mutex mutex_; // one accept at a time on the credential
};

} // namespace tony::hadoop
