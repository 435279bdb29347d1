#pragma once

// HTTP Negotiate (SPNEGO, RFC 4559) on a server tony runs, as Hadoop's
// daemons take it on their web pages (hadoop.http.authentication.type =
// kerberos): `tony-history serve` on a secure cluster.
//
//   GET /                          ──▶ 401, WWW-Authenticate: Negotiate
//   GET /  Authorization: Negotiate <token>
//        ──▶ hadoop::gss_acceptor ──▶ "alice@REALM" ──▶ short name "alice"
//        ──▶ the route, for alice; the reply token in WWW-Authenticate
//
// Every request authenticates (no session cookie): `curl --negotiate -u :`
// and browsers set up for Negotiate send a token each time they are asked.
// The principal's short name is Hadoop's DEFAULT rule: the first component
// of a principal of the server's realm ("alice/host@R" is alice); a
// principal of another realm maps to no user and is refused, as DEFAULT
// refuses it. hadoop.security.auth_to_local's own rules are not evaluated.

#include <memory>
#include <optional>
#include <string>

#include <httplib.h>

#include "hadoop/gssapi_server.hpp"

namespace tony::http {

/// `pattern` ("HTTP/_HOST@REALM") with _HOST made the host this server
/// answers as, lower case, as Hadoop substitutes it: the bind address, or
/// `local_host` (the machine's canonical name) for a wildcard bind.
std::string server_principal(const std::string& pattern, const std::string& bind,
                             const std::string& local_host);

/// The machine's canonical host name (gethostname, then getaddrinfo's
/// canonical name), lower case.
std::string canonical_local_host();

/// Hadoop's DEFAULT auth_to_local rule: the first component of a principal
/// of `realm`; nullopt for another realm or a malformed name.
std::optional<std::string> short_name_of(const std::string& principal,
                                         const std::string& realm);

/// The base64 token of an Authorization header "Negotiate <token>" (the
/// scheme in any case); nullopt when the header is another scheme or none.
std::optional<std::string> negotiate_token(const std::string& authorization);

class spnego_guard {
public:
  /// `realm`: the users' realm (the server principal's, else the default).
  spnego_guard(std::unique_ptr<hadoop::gss_acceptor> acceptor, std::string realm,
               std::string server_name);

  /// The visitor's user name; or nullopt with `res` answered: 401 asking
  /// for Negotiate (no token: what to do), 403 for a token that does not
  /// authenticate or a principal that maps to no user (why).
  std::optional<std::string> authenticate(const httplib::Request& req,
                                          httplib::Response& res) const;

  const std::string& realm() const noexcept { return realm_; }

private:
  std::unique_ptr<hadoop::gss_acceptor> acceptor_;
  std::string realm_;
  std::string server_name_; // "tony-history"
};

} // namespace tony::http
