#include "hadoop/gssapi_server.hpp"

#include <fstream>
#include <optional>

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>

#include "hadoop/kerberos.hpp"

namespace tony::hadoop {

namespace {

std::string gss_text(OM_uint32 major, OM_uint32 minor) {
  auto text = gss_status_text(major, false);
  if (minor != 0)
    text += " (" + gss_status_text(minor, true) + ")";
  return text;
}

// Whether `keytab` holds a key of `principal`; the reason when not. Asked
// of the keytab directly: MIT's acquire leaks the name it copied when it
// finds no key (krb5 1.20), and its message does not name the file.
std::optional<std::string> missing_key(const std::string& principal,
                                       const std::string& keytab) {
  krb5_context ctx = nullptr;
  if (krb5_init_context(&ctx) != 0)
    return std::string{"the Kerberos library cannot start (krb5.conf?)"};
  std::optional<std::string> why;
  krb5_principal name = nullptr;
  krb5_keytab kt = nullptr;
  krb5_keytab_entry entry{};
  auto text = [&](krb5_error_code rc) {
    auto* m = krb5_get_error_message(ctx, rc);
    std::string result = m;
    krb5_free_error_message(ctx, m);
    return result;
  };
  if (auto rc = krb5_parse_name(ctx, principal.c_str(), &name); rc != 0)
    why = "invalid principal '" + principal + "': " + text(rc);
  else if (rc = krb5_kt_resolve(ctx, ("FILE:" + keytab).c_str(), &kt); rc != 0)
    why = text(rc);
  else if (rc = krb5_kt_get_entry(ctx, kt, name, 0, 0, &entry); rc != 0)
    why = text(rc);
  else
    krb5_free_keytab_entry_contents(ctx, &entry);
  if (kt != nullptr)
    krb5_kt_close(ctx, kt);
  if (name != nullptr)
    krb5_free_principal(ctx, name);
  krb5_free_context(ctx);
  return why;
}

} // namespace

expected<std::unique_ptr<gss_acceptor>> gss_acceptor::make(const std::string& principal,
                                                           const std::string& keytab) {
  if (keytab.empty())
    return error{error_code::not_found,
                 "no keytab for the server's principal " + principal +
                     "; set hadoop.http.authentication.kerberos.keytab in core-site.xml "
                     "or pass --spnego-keytab"};
  if (!std::ifstream{keytab})
    return error{error_code::io, "cannot read the keytab " + keytab +
                                     " (is it there, and readable by this user?)"};
  if (principal != "*")
    if (auto why = missing_key(principal, keytab))
      return error{error_code::auth, "the keytab " + keytab + " holds no key of " +
                                         principal + ": " + *why +
                                         "; list it with klist -k, and add the key "
                                         "with kadmin's ktadd"};
  OM_uint32 minor = 0;
  gss_name_t name = GSS_C_NO_NAME;
  if (principal != "*") {
    gss_buffer_desc buf{principal.size(), const_cast<char*>(principal.data())};
    auto major = gss_import_name(&minor, &buf, GSS_KRB5_NT_PRINCIPAL_NAME, &name);
    if (GSS_ERROR(major))
      return error{error_code::invalid_input,
                   "invalid principal '" + principal + "': " + gss_text(major, minor)};
  }
  auto client_keytab = "FILE:" + keytab;
  gss_key_value_element_desc element{"keytab", client_keytab.c_str()};
  gss_key_value_set_desc store{1, &element};
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  auto major = gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, GSS_C_NO_OID_SET,
                                     GSS_C_ACCEPT, &store, &cred, nullptr, nullptr);
  if (name != GSS_C_NO_NAME) {
    OM_uint32 ignored = 0;
    gss_release_name(&ignored, &name);
  }
  if (GSS_ERROR(major))
    return error{error_code::auth,
                 "the keytab " + keytab + " holds no key of " +
                     (principal == "*" ? std::string{"any principal"} : principal) +
                     ": " + gss_text(major, minor) +
                     "; list it with klist -k, and add the key with kadmin's ktadd"};
  std::unique_ptr<gss_acceptor> result{new gss_acceptor};
  result->cred_ = cred;
  result->description_ = principal + " from keytab " + keytab;
  return result;
}

gss_acceptor::~gss_acceptor() {
  OM_uint32 minor = 0;
  auto cred = static_cast<gss_cred_id_t>(cred_);
  if (cred != GSS_C_NO_CREDENTIAL)
    gss_release_cred(&minor, &cred);
}

expected<gss_acceptor::accepted> gss_acceptor::accept(std::string_view token) const {
  if (token.empty())
    return error{error_code::auth, "an empty Negotiate token"};
  OM_uint32 minor = 0;
  gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;
  gss_name_t client = GSS_C_NO_NAME;
  gss_buffer_desc in{token.size(), const_cast<char*>(token.data())};
  gss_buffer_desc out{0, nullptr};
  OM_uint32 major = 0;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    major = gss_accept_sec_context(&minor, &ctx, static_cast<gss_cred_id_t>(cred_), &in,
                                   GSS_C_NO_CHANNEL_BINDINGS, &client, nullptr, &out,
                                   nullptr, nullptr, nullptr);
  }
  accepted result;
  if (out.length > 0)
    result.reply.assign(static_cast<const char*>(out.value), out.length);
  OM_uint32 ignored = 0;
  gss_release_buffer(&ignored, &out);
  if (ctx != GSS_C_NO_CONTEXT)
    gss_delete_sec_context(&ignored, &ctx, GSS_C_NO_BUFFER);
  auto release_client = [&] {
    if (client != GSS_C_NO_NAME)
      gss_release_name(&ignored, &client);
  };
  if (GSS_ERROR(major)) {
    release_client();
    return error{error_code::auth, gss_text(major, minor)};
  }
  if (major & GSS_S_CONTINUE_NEEDED) {
    release_client();
    return error{error_code::auth, "the client's mechanism wants another round trip; "
                                   "only Kerberos tokens of one are taken"};
  }
  gss_buffer_desc shown{0, nullptr};
  major = gss_display_name(&minor, client, &shown, nullptr);
  release_client();
  if (GSS_ERROR(major))
    return error{error_code::auth, "the client's name: " + gss_text(major, minor)};
  result.principal.assign(static_cast<const char*>(shown.value), shown.length);
  gss_release_buffer(&ignored, &shown);
  return result;
}

} // namespace tony::hadoop
