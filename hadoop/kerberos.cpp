#include "hadoop/kerberos.hpp"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>
#include <profile.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <vector>

namespace tony::hadoop {

namespace {

// -- krb5 handles ---------------------------------------------------------------

// One krb5 context per operation: MIT contexts are not shared across
// threads.
class krb5_session {
public:
  krb5_session() = default;
  krb5_session(const krb5_session&) = delete;
  krb5_session& operator=(const krb5_session&) = delete;

  ~krb5_session() {
    if (principal_ != nullptr)
      krb5_free_principal(ctx_, principal_);
    if (keytab_ != nullptr)
      krb5_kt_close(ctx_, keytab_);
    if (cache_ != nullptr)
      krb5_cc_close(ctx_, cache_);
    if (ctx_ != nullptr)
      krb5_free_context(ctx_);
  }

  expected<void> open() {
    if (auto rc = krb5_init_context(&ctx_); rc != 0)
      return error{error_code::auth, "cannot read the Kerberos configuration (" +
                                         config_file() + "): " + message(rc)};
    return {};
  }

  std::string message(krb5_error_code rc) const {
    if (ctx_ == nullptr)
      return std::strerror(rc);
    auto* text = krb5_get_error_message(ctx_, rc);
    std::string result = text != nullptr ? text : "unknown Kerberos error";
    krb5_free_error_message(ctx_, text);
    return result;
  }

  std::string unparse(krb5_const_principal p) const {
    char* name = nullptr;
    if (krb5_unparse_name(ctx_, p, &name) != 0)
      return "?";
    std::string result = name;
    krb5_free_unparsed_name(ctx_, name);
    return result;
  }

  std::string cache_name() const {
    char* name = nullptr;
    if (cache_ == nullptr || krb5_cc_get_full_name(ctx_, cache_, &name) != 0)
      return "?";
    std::string result = name;
    krb5_free_string(ctx_, name);
    return result;
  }

  static std::string config_file() {
    auto* env = std::getenv("KRB5_CONFIG");
    return env != nullptr && *env != '\0' ? env : "/etc/krb5.conf";
  }

  krb5_context ctx_ = nullptr;
  krb5_principal principal_ = nullptr;
  krb5_keytab keytab_ = nullptr;
  krb5_ccache cache_ = nullptr;
};

std::string local_time(krb5_timestamp t) {
  auto secs = static_cast<std::time_t>(static_cast<uint32_t>(t));
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %Z", &tm);
  return buf;
}

std::string kinit_hint(const std::string& principal) {
  return "run kinit " + (principal.empty() ? std::string{"<principal>"} : principal) +
         " or set [security] keytab (tony-submit --keytab)";
}

// The end of the ticket-granting ticket for the client's realm, or 0.
krb5_timestamp tgt_end(krb5_session& s) {
  krb5_cc_cursor cursor;
  if (krb5_cc_start_seq_get(s.ctx_, s.cache_, &cursor) != 0)
    return 0;
  krb5_timestamp end = 0;
  krb5_creds creds;
  const krb5_data* realm = krb5_princ_realm(s.ctx_, s.principal_);
  while (krb5_cc_next_cred(s.ctx_, s.cache_, &cursor, &creds) == 0) {
    if (krb5_is_config_principal(s.ctx_, creds.server) == 0 &&
        krb5_princ_size(s.ctx_, creds.server) == 2) {
      const krb5_data* first = krb5_princ_component(s.ctx_, creds.server, 0);
      const krb5_data* second = krb5_princ_component(s.ctx_, creds.server, 1);
      auto is = [](const krb5_data* d, const char* text, size_t n) {
        return d->length == n && std::memcmp(d->data, text, n) == 0;
      };
      if (is(first, "krbtgt", 6) && is(second, realm->data, realm->length) &&
          static_cast<uint32_t>(creds.times.endtime) > static_cast<uint32_t>(end))
        end = creds.times.endtime;
    }
    krb5_free_cred_contents(s.ctx_, &creds);
  }
  krb5_cc_end_seq_get(s.ctx_, s.cache_, &cursor);
  return end;
}

// -- GSSAPI ---------------------------------------------------------------------

// GSSAPI credentials for `principal` from the cache named `ccache`, renewed
// from `client_keytab` when that is set.
expected<gss_cred_id_t> acquire(const std::string& principal, const std::string& ccache,
                                const std::string& client_keytab) {
  OM_uint32 minor = 0;
  gss_buffer_desc name_buf{principal.size(), const_cast<char*>(principal.data())};
  gss_name_t name = GSS_C_NO_NAME;
  auto major = gss_import_name(&minor, &name_buf, GSS_KRB5_NT_PRINCIPAL_NAME, &name);
  if (GSS_ERROR(major))
    return error{error_code::auth, "invalid Kerberos principal '" + principal +
                                       "': " + gss_status_text(minor, true)};
  std::vector<gss_key_value_element_desc> elements{{"ccache", ccache.c_str()}};
  if (!client_keytab.empty())
    elements.push_back({"client_keytab", client_keytab.c_str()});
  gss_key_value_set_desc store{static_cast<OM_uint32>(elements.size()), elements.data()};
  gss_OID_desc krb5_oid = *gss_mech_krb5;
  gss_OID_set_desc mechs{1, &krb5_oid};
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  major = gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
                                &store, &cred, nullptr, nullptr);
  OM_uint32 ignored = 0;
  gss_release_name(&ignored, &name);
  if (GSS_ERROR(major))
    return error{error_code::auth, "no usable Kerberos credentials for " + principal +
                                       " in " + ccache + ": " +
                                       gss_status_text(major, false) + " (" +
                                       gss_status_text(minor, true) + ")"};
  return cred;
}

// -- the two ways to log in -------------------------------------------------------

struct login_result {
  std::string principal;
  std::string source;
  std::string ccache;
  std::string client_keytab;
  krb5_timestamp expires = 0;
};

expected<login_result> login_from_cache(krb5_session& s, const std::string& wanted) {
  if (auto rc = krb5_cc_default(s.ctx_, &s.cache_); rc != 0)
    return error{error_code::auth, "no Kerberos credentials: " + kinit_hint(wanted) +
                                       " (" + s.message(rc) + ")"};
  auto cache = s.cache_name();
  if (krb5_cc_get_principal(s.ctx_, s.cache_, &s.principal_) != 0)
    return error{error_code::auth, "no Kerberos credentials: " + kinit_hint(wanted) +
                                       " (no ticket cache at " + cache + ")"};
  auto holder = s.unparse(s.principal_);
  if (!wanted.empty()) {
    krb5_principal want = nullptr;
    if (auto rc = krb5_parse_name(s.ctx_, wanted.c_str(), &want); rc != 0)
      return error{error_code::auth,
                   "invalid Kerberos principal '" + wanted + "': " + s.message(rc)};
    bool same = krb5_principal_compare(s.ctx_, want, s.principal_) != 0;
    auto want_name = s.unparse(want);
    krb5_free_principal(s.ctx_, want);
    if (!same)
      return error{error_code::auth, "the ticket cache " + cache + " holds tickets of " +
                                         holder + ", not " + want_name + ": " +
                                         kinit_hint(want_name)};
  }
  auto end = tgt_end(s);
  if (end == 0)
    return error{error_code::auth, "no Kerberos ticket-granting ticket for " + holder +
                                       " in " + cache + ": " + kinit_hint(holder)};
  krb5_timestamp now = 0;
  krb5_timeofday(s.ctx_, &now);
  if (static_cast<uint32_t>(end) <= static_cast<uint32_t>(now))
    return error{error_code::auth, "the Kerberos ticket of " + holder + " in " + cache +
                                       " expired at " + local_time(end) + ": " +
                                       kinit_hint(holder)};
  return login_result{holder, "ticket cache " + cache, cache, {}, end};
}

// The principals a keytab holds, for the message when the wanted one is
// missing.
std::string keytab_principals(krb5_session& s) {
  std::set<std::string> names;
  krb5_kt_cursor cursor;
  if (krb5_kt_start_seq_get(s.ctx_, s.keytab_, &cursor) != 0)
    return "nothing readable";
  krb5_keytab_entry entry;
  while (krb5_kt_next_entry(s.ctx_, s.keytab_, &entry, &cursor) == 0) {
    names.insert(s.unparse(entry.principal));
    krb5_free_keytab_entry_contents(s.ctx_, &entry);
  }
  krb5_kt_end_seq_get(s.ctx_, s.keytab_, &cursor);
  std::string result;
  for (auto& n : names)
    result += (result.empty() ? "" : ", ") + n;
  return result.empty() ? "no keys" : "keys of " + result;
}

error init_creds_failure(krb5_session& s, krb5_error_code rc, const std::string& who,
                         const std::string& keytab) {
  auto realm = std::string{krb5_princ_realm(s.ctx_, s.principal_)->data,
                           krb5_princ_realm(s.ctx_, s.principal_)->length};
  switch (rc) {
  case KRB5_KDC_UNREACH:
  case KRB5_REALM_CANT_RESOLVE:
    return error{error_code::auth, "cannot reach a KDC of realm " + realm + " at " +
                                       describe_kdcs(realm) + ": " + s.message(rc) +
                                       " (is the KDC running? is [realms] of the "
                                       "Kerberos configuration right?)"};
  case KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN:
    return error{error_code::auth, "the KDC of realm " + realm + " does not know " + who +
                                       " (the keytab " + keytab +
                                       " holds keys of a principal that does not exist: "
                                       "misspelt, or deleted?)"};
  case KRB5KDC_ERR_PREAUTH_FAILED:
  case KRB5KRB_AP_ERR_BAD_INTEGRITY:
  case KRB5_PREAUTH_FAILED:
    return error{error_code::auth, "the KDC rejects the key of " + who +
                                       " in the keytab " + keytab +
                                       " (the principal's keys changed since the keytab "
                                       "was made: export a new keytab)"};
  default:
    return error{error_code::auth, "Kerberos login of " + who + " with the keytab " +
                                       keytab + " failed: " + s.message(rc)};
  }
}

expected<login_result> login_from_keytab(krb5_session& s, const std::string& principal,
                                         const std::string& keytab) {
  if (principal.empty())
    return error{error_code::auth,
                 "a keytab needs a principal: set [security] principal "
                 "(tony-submit --principal) to the principal whose keys "
                 "the keytab " +
                     keytab + " holds"};
  if (::access(keytab.c_str(), R_OK) != 0)
    return error{error_code::auth,
                 "cannot read the keytab " + keytab + ": " + std::strerror(errno)};
  if (auto rc = krb5_parse_name(s.ctx_, principal.c_str(), &s.principal_); rc != 0)
    return error{error_code::auth,
                 "invalid Kerberos principal '" + principal + "': " + s.message(rc)};
  auto who = s.unparse(s.principal_);
  auto kt_name = "FILE:" + keytab;
  if (auto rc = krb5_kt_resolve(s.ctx_, kt_name.c_str(), &s.keytab_); rc != 0)
    return error{error_code::auth,
                 "cannot open the keytab " + keytab + ": " + s.message(rc)};
  krb5_keytab_entry entry;
  if (auto rc = krb5_kt_get_entry(s.ctx_, s.keytab_, s.principal_, 0, 0, &entry); rc != 0)
    return error{error_code::auth, "the keytab " + keytab + " holds no key for " + who +
                                       " (it has " + keytab_principals(s) +
                                       "; klist -kt " + keytab + " lists them)"};
  krb5_free_keytab_entry_contents(s.ctx_, &entry);
  // A private cache: the user's own ticket cache is never read or written.
  if (auto rc = krb5_cc_new_unique(s.ctx_, "MEMORY", nullptr, &s.cache_); rc != 0)
    return error{error_code::auth,
                 "cannot create a memory ticket cache: " + s.message(rc)};
  krb5_get_init_creds_opt* opts = nullptr;
  krb5_get_init_creds_opt_alloc(s.ctx_, &opts);
  krb5_get_init_creds_opt_set_out_ccache(s.ctx_, opts, s.cache_);
  krb5_creds creds;
  std::memset(&creds, 0, sizeof creds);
  auto rc = krb5_get_init_creds_keytab(s.ctx_, &creds, s.principal_, s.keytab_, 0,
                                       nullptr, opts);
  krb5_get_init_creds_opt_free(s.ctx_, opts);
  if (rc != 0) {
    krb5_cc_destroy(s.ctx_, s.cache_);
    s.cache_ = nullptr;
    return init_creds_failure(s, rc, who, keytab);
  }
  login_result result{who, "keytab " + keytab, s.cache_name(), kt_name,
                      creds.times.endtime};
  krb5_free_cred_contents(s.ctx_, &creds);
  return result;
}

} // namespace

expected<std::shared_ptr<kerberos_credentials>>
kerberos_credentials::login(const kerberos_login_request& request) {
  krb5_session s;
  if (auto ok = s.open(); !ok)
    return ok.error();
  auto result = request.keytab.empty()
                    ? login_from_cache(s, request.principal)
                    : login_from_keytab(s, request.principal, request.keytab);
  if (!result)
    return result.error();
  std::shared_ptr<kerberos_credentials> creds{new kerberos_credentials};
  creds->principal_ = result->principal;
  creds->source_ = result->source;
  creds->expires_ = std::chrono::system_clock::from_time_t(
      static_cast<std::time_t>(static_cast<uint32_t>(result->expires)));
  creds->from_keytab_ = !request.keytab.empty();
  creds->ccache_ = result->ccache;
  creds->client_keytab_ = result->client_keytab;
  // The object owns the private cache from here on (its destructor
  // destroys it; closing the session's handle does not). Check that
  // GSSAPI takes what the login got.
  auto probe = creds->acquire_gss_credential();
  if (!probe)
    return probe.error();
  release_gss_credential(*probe);
  return creds;
}

kerberos_credentials::~kerberos_credentials() {
  if (!from_keytab_ || ccache_.empty())
    return;
  krb5_session s;
  if (s.open() && krb5_cc_resolve(s.ctx_, ccache_.c_str(), &s.cache_) == 0) {
    krb5_cc_destroy(s.ctx_, s.cache_);
    s.cache_ = nullptr;
  }
}

expected<void*> kerberos_credentials::acquire_gss_credential() const {
  auto cred = acquire(principal_, ccache_, client_keytab_);
  if (!cred)
    return cred.error();
  return static_cast<void*>(*cred);
}

void kerberos_credentials::release_gss_credential(void* cred) noexcept {
  auto handle = static_cast<gss_cred_id_t>(cred);
  OM_uint32 minor = 0;
  if (handle != GSS_C_NO_CREDENTIAL)
    gss_release_cred(&minor, &handle);
}

default_credentials_scope::default_credentials_scope(const kerberos_credentials& creds) {
  OM_uint32 minor = 0;
  gss_krb5_ccache_name(&minor, creds.ticket_cache().c_str(), nullptr);
}

default_credentials_scope::~default_credentials_scope() {
  // A null name drops the thread's own choice: KRB5CCNAME (or the default
  // cache) again.
  OM_uint32 minor = 0;
  gss_krb5_ccache_name(&minor, nullptr, nullptr);
}

std::string kerberos_credentials::short_name() const {
  auto end = principal_.find_first_of("/@");
  return principal_.substr(0, end);
}

expected<std::string> default_realm() {
  krb5_session s;
  if (auto ok = s.open(); !ok)
    return ok.error();
  char* realm = nullptr;
  if (auto rc = krb5_get_default_realm(s.ctx_, &realm); rc != 0)
    return error{error_code::auth, "no default Kerberos realm in " +
                                       krb5_session::config_file() + ": " +
                                       s.message(rc)};
  std::string result = realm;
  krb5_free_default_realm(s.ctx_, realm);
  return result;
}

expected<std::string> realm_of_host(const std::string& host) {
  krb5_session s;
  if (auto ok = s.open(); !ok)
    return ok.error();
  char** realms = nullptr;
  std::string result;
  if (krb5_get_host_realm(s.ctx_, host.c_str(), &realms) == 0) {
    if (realms != nullptr && realms[0] != nullptr)
      result = realms[0];
    krb5_free_host_realm(s.ctx_, realms);
  }
  // No [domain_realm] entry: MIT answers the empty referral realm.
  if (result.empty())
    return default_realm();
  return result;
}

std::string gss_status_text(uint32_t code, bool mech) {
  std::string result;
  OM_uint32 ctx = 0;
  do {
    OM_uint32 minor = 0;
    gss_buffer_desc buf{0, nullptr};
    if (gss_display_status(&minor, code, mech ? GSS_C_MECH_CODE : GSS_C_GSS_CODE,
                           mech ? gss_mech_krb5 : GSS_C_NO_OID, &ctx,
                           &buf) != GSS_S_COMPLETE)
      break;
    if (!result.empty())
      result += "; ";
    result.append(static_cast<const char*>(buf.value), buf.length);
    gss_release_buffer(&minor, &buf);
  } while (ctx != 0);
  return result;
}

std::string describe_kdcs(const std::string& realm) {
  krb5_session s;
  if (!s.open())
    return "(no Kerberos configuration)";
  profile_t profile = nullptr;
  if (krb5_get_profile(s.ctx_, &profile) != 0)
    return "(unknown)";
  const char* path[] = {"realms", realm.c_str(), "kdc", nullptr};
  char** values = nullptr;
  std::string result;
  if (profile_get_values(profile, path, &values) == 0 && values != nullptr) {
    for (auto** v = values; *v != nullptr; ++v)
      result += (result.empty() ? "" : ", ") + std::string{*v};
    profile_free_list(values);
  }
  profile_release(profile);
  if (result.empty())
    result = "(no kdc listed; DNS SRV lookup)";
  return result + " (kdc in " + krb5_session::config_file() + ")";
}

} // namespace tony::hadoop
