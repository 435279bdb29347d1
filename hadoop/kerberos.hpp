#pragma once

// Kerberos credentials of the user, on MIT krb5 and its GSSAPI library:
// either the user's ticket cache (after `kinit`; KRB5CCNAME or the default
// cache) or a keytab. A keytab login never touches the user's ticket
// cache: its tickets live in a private MEMORY: cache of this process, and
// are renewed from the keytab when they run out (MIT's client keytab
// initiation, at the next connection), so a long-running client stays
// logged in.
//
// login() checks what can be checked before any server is contacted and
// says what to do about each failure: no ticket cache, an expired ticket,
// a ticket of another principal, a keytab without the principal's key, a
// principal the KDC does not know, an unreachable KDC (named with its
// address from krb5.conf). The KDC wait is MIT krb5's own bound (about 30 s
// per KDC that does not answer; a refused port fails at once).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "hadoop/expected.hpp"

namespace tony::hadoop {

struct kerberos_login_request {
  /// "alice@EXAMPLE.COM" (a missing realm means the default realm). Empty
  /// with a ticket cache: whoever the cache belongs to. Required with a
  /// keytab.
  std::string principal;
  /// A keytab file; empty: use the ticket cache.
  std::string keytab;
};

class kerberos_credentials {
public:
  /// Logs in as `request` says. Every error is error_code::auth with a
  /// message that names the principal, the cache or keytab, and the fix.
  static expected<std::shared_ptr<kerberos_credentials>>
  login(const kerberos_login_request& request);

  ~kerberos_credentials();

  kerberos_credentials(const kerberos_credentials&) = delete;
  kerberos_credentials& operator=(const kerberos_credentials&) = delete;

  /// The full principal, "alice@EXAMPLE.COM": Hadoop's user name for the
  /// connection (IpcConnectionContext's effectiveUser with KERBEROS).
  const std::string& principal() const noexcept { return principal_; }

  /// The principal's first component, "alice".
  std::string short_name() const;

  /// "ticket cache FILE:/tmp/krb5cc_0", "keytab /etc/alice.keytab".
  const std::string& source() const noexcept { return source_; }

  /// When the ticket-granting ticket ends (keytab logins renew it).
  std::chrono::system_clock::time_point expires() const noexcept { return expires_; }

  /// True for a keytab login.
  bool from_keytab() const noexcept { return from_keytab_; }

  /// A GSSAPI credential (a gss_cred_id_t) for one connection, released
  /// with release_gss_credential(). Acquired afresh each time: a keytab
  /// login gets a new ticket here when its old one is due, a ticket cache
  /// is re-read (a later kinit counts).
  expected<void*> acquire_gss_credential() const;

  static void release_gss_credential(void* cred) noexcept;

  /// The full name of the ticket cache ("FILE:/tmp/krb5cc_0", or a keytab
  /// login's private "MEMORY:...").
  const std::string& ticket_cache() const noexcept { return ccache_; }

private:
  kerberos_credentials() = default;

  std::string principal_;
  std::string source_;
  std::chrono::system_clock::time_point expires_;
  bool from_keytab_ = false;
  std::string ccache_;        // the cache's full name
  std::string client_keytab_; // "FILE:<keytab>" for keytab logins
};

/// While alive, GSSAPI calls on this thread that use the default
/// credentials use `creds`' ticket cache instead of KRB5CCNAME's: libcurl's
/// SPNEGO takes no credential handle, so this is how a keytab login's
/// private cache reaches it (MIT's gss_krb5_ccache_name is per thread).
/// Not nestable; the thread's default is restored at the end.
class default_credentials_scope {
public:
  explicit default_credentials_scope(const kerberos_credentials& creds);
  ~default_credentials_scope();

  default_credentials_scope(const default_credentials_scope&) = delete;
  default_credentials_scope& operator=(const default_credentials_scope&) = delete;
};

/// The realm Kerberos maps `host` to (krb5.conf [domain_realm]), else the
/// default realm.
expected<std::string> realm_of_host(const std::string& host);

/// The default realm of krb5.conf.
expected<std::string> default_realm();

/// The text of a GSSAPI status code: a major code (`mech` false) or a
/// minor code of the Kerberos mechanism (`mech` true).
std::string gss_status_text(uint32_t code, bool mech);

/// "127.0.0.1:88, kdc2:88 (kdc in /etc/krb5.conf)": where the KDCs of
/// `realm` are configured, for messages.
std::string describe_kdcs(const std::string& realm);

} // namespace tony::hadoop
