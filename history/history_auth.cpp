#include "history/history_auth.hpp"

#include "base/text.hpp"
#include "hadoop/gssapi_server.hpp"
#include "hadoop/kerberos.hpp"

namespace tony::history {

namespace {

// The realm after the principal's '@', else krb5.conf's default.
std::string realm_of(const std::string& principal) {
  auto at = principal.rfind('@');
  if (at != std::string::npos)
    return principal.substr(at + 1);
  auto realm = hadoop::default_realm();
  return realm ? *realm : std::string{};
}

} // namespace

result<serve_security, std::string> serve_security_of(const hadoop::configuration& conf,
                                                      const auth_flags& flags,
                                                      const std::string& bind) {
  auto auth = flags.auth.empty()
                  ? base::lower(conf.get_or("hadoop.http.authentication.type", "simple"))
                  : flags.auth;
  serve_security s;
  if (auth == "none" || auth == "simple") {
    s.said = "no authentication: every visitor sees every job";
    if (!flags.auth.empty())
      s.said += " (--auth none)";
    else if (base::lower(conf.get_or("hadoop.security.authentication", "simple")) ==
             "kerberos")
      s.said += " (the cluster is Kerberos, but its hadoop.http.authentication.type is "
                "not kerberos; --auth kerberos asks for SPNEGO)";
    return s;
  }
  if (auth != "kerberos")
    return std::string{"tony-history: --auth \"" + auth +
                       "\" is none of: kerberos (SPNEGO), none"};
  auto pattern = flags.spnego_principal;
  if (pattern.empty())
    pattern = conf.get_or("hadoop.http.authentication.kerberos.principal", "");
  if (pattern.empty()) {
    auto realm = hadoop::default_realm();
    if (!realm)
      return "tony-history: SPNEGO needs the server's principal, and " +
             realm.error().message() + "; pass --spnego-principal HTTP/_HOST@REALM";
    pattern = "HTTP/_HOST@" + *realm;
  }
  auto keytab = flags.spnego_keytab;
  if (keytab.empty())
    keytab = conf.get_or("hadoop.http.authentication.kerberos.keytab", "");
  auto principal = http::server_principal(pattern, bind, http::canonical_local_host());
  auto acceptor = hadoop::gss_acceptor::make(principal, keytab);
  if (!acceptor)
    return "tony-history: SPNEGO for " + principal + ": " + acceptor.error().message() +
           " (or serve without authentication: --auth none)";
  auto realm = realm_of(principal == "*" ? std::string{} : principal);
  auto said = "SPNEGO as " + (*acceptor)->describe() + ", users of realm " + realm;
  s.spnego =
      std::make_shared<http::spnego_guard>(std::move(*acceptor), realm, "tony-history");
  if (base::lower(conf.get_or("yarn.acl.enable", "false")) == "true") {
    s.admins = base::access_list{conf.get_or("yarn.admin.acl", "*")};
    said += "; ACLs on (yarn.acl.enable): each job for its owner, its view ACL and "
            "yarn.admin.acl ('" +
            s.admins->to_string() + "')";
  } else {
    said += "; ACLs off (yarn.acl.enable): every authenticated user sees every job";
  }
  s.said = said;
  return s;
}

} // namespace tony::history
