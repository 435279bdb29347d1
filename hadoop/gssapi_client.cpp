#include "hadoop/gssapi_client.hpp"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>

namespace tony::hadoop {

namespace {

std::string take(gss_buffer_desc& buf) {
  std::string result{static_cast<const char*>(buf.value), buf.length};
  OM_uint32 minor = 0;
  gss_release_buffer(&minor, &buf);
  return result;
}

gss_buffer_desc view(std::string_view x) {
  return gss_buffer_desc{x.size(), const_cast<char*>(x.data())};
}

// Server maximum buffer sizes are 3 bytes (RFC 4752).
constexpr uint32_t max_buffer = 0xFFFFFF;

class gssapi_client final : public sasl_mechanism {
public:
  gssapi_client(std::shared_ptr<const kerberos_credentials> creds, std::string target,
                qop_set accepted)
      : creds_(std::move(creds))
      , target_(std::move(target))
      , accepted_(accepted) {
    // nop
  }

  ~gssapi_client() override {
    OM_uint32 minor = 0;
    if (ctx_ != GSS_C_NO_CONTEXT)
      gss_delete_sec_context(&minor, &ctx_, GSS_C_NO_BUFFER);
    if (name_ != GSS_C_NO_NAME)
      gss_release_name(&minor, &name_);
    if (cred_ != nullptr)
      kerberos_credentials::release_gss_credential(cred_);
  }

  expected<void> init() {
    // A credential per connection: a keytab login renews its ticket here.
    auto cred = creds_->acquire_gss_credential();
    if (!cred)
      return cred.error();
    cred_ = *cred;
    OM_uint32 minor = 0;
    auto buf = view(target_);
    if (GSS_ERROR(gss_import_name(&minor, &buf, GSS_KRB5_NT_PRINCIPAL_NAME, &name_)))
      return error{error_code::auth, "invalid server principal '" + target_ +
                                         "': " + gss_status_text(minor, true)};
    return {};
  }

  const char* name() const noexcept override { return "GSSAPI"; }

  bool has_initial_response() const noexcept override { return true; }

  expected<std::string> evaluate(std::string_view challenge) override {
    if (!established_)
      return step_context(challenge);
    if (!complete_)
      return negotiate_layer(challenge);
    return error{error_code::auth, "GSSAPI: the server sent more after the handshake"};
  }

  bool complete() const noexcept override { return complete_; }

  qop negotiated_qop() const noexcept override { return qop_; }

  size_t max_wrap_input() const noexcept override { return max_wrap_; }

  expected<std::string> wrap(std::string_view plain) override {
    OM_uint32 minor = 0;
    auto in = view(plain);
    gss_buffer_desc out{0, nullptr};
    int conf = 0;
    auto major = gss_wrap(&minor, ctx_, qop_ == qop::auth_conf ? 1 : 0, GSS_C_QOP_DEFAULT,
                          &in, &conf, &out);
    if (GSS_ERROR(major))
      return error{error_code::protocol,
                   "GSSAPI cannot wrap: " + gss_status_text(major, false) + " (" +
                       gss_status_text(minor, true) + ")"};
    return take(out);
  }

  expected<std::string> unwrap(std::string_view token) override {
    OM_uint32 minor = 0;
    auto in = view(token);
    gss_buffer_desc out{0, nullptr};
    int conf = 0;
    auto major = gss_unwrap(&minor, ctx_, &in, &out, &conf, nullptr);
    if (GSS_ERROR(major))
      return error{error_code::protocol,
                   "GSSAPI rejects a wrapped message from the server (tampered with, "
                   "replayed or out of order): " +
                       gss_status_text(major, false) + " (" +
                       gss_status_text(minor, true) + ")"};
    if (qop_ == qop::auth_conf && conf == 0) {
      OM_uint32 ignored = 0;
      gss_release_buffer(&ignored, &out);
      return error{error_code::protocol,
                   "the server sent an unencrypted message on a connection that "
                   "negotiated privacy (auth-conf)"};
    }
    return take(out);
  }

private:
  expected<std::string> step_context(std::string_view token) {
    OM_uint32 minor = 0;
    auto in = view(token);
    gss_buffer_desc out{0, nullptr};
    OM_uint32 flags = GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG |
                      GSS_C_SEQUENCE_FLAG | GSS_C_REPLAY_FLAG;
    OM_uint32 got = 0;
    auto cred = static_cast<gss_cred_id_t>(cred_);
    auto major = gss_init_sec_context(
        &minor, cred, &ctx_, name_, gss_mech_krb5, flags, 0, GSS_C_NO_CHANNEL_BINDINGS,
        ctx_ == GSS_C_NO_CONTEXT ? GSS_C_NO_BUFFER : &in, nullptr, &out, &got, nullptr);
    if (GSS_ERROR(major)) {
      auto result = failure(major, minor);
      OM_uint32 ignored = 0;
      gss_release_buffer(&ignored, &out);
      return result;
    }
    if (major == GSS_S_COMPLETE) {
      if ((got & GSS_C_MUTUAL_FLAG) == 0) {
        OM_uint32 ignored = 0;
        gss_release_buffer(&ignored, &out);
        return error{error_code::auth, "the server " + target_ +
                                           " did not authenticate itself (no mutual "
                                           "authentication)"};
      }
      established_ = true;
    }
    return take(out);
  }

  // The server's security-layer offer; the answer picks one.
  expected<std::string> negotiate_layer(std::string_view token) {
    // A server that answered the AP-REP with an empty challenge waits for
    // an empty response first (GssKrb5Client does the same).
    if (token.empty())
      return std::string{};
    OM_uint32 minor = 0;
    auto in = view(token);
    gss_buffer_desc out{0, nullptr};
    auto major = gss_unwrap(&minor, ctx_, &in, &out, nullptr, nullptr);
    if (GSS_ERROR(major))
      return error{error_code::auth, "GSSAPI: cannot read the server's security-layer "
                                     "offer: " +
                                         gss_status_text(major, false)};
    auto offer = take(out);
    if (offer.size() != 4)
      return error{error_code::auth, "GSSAPI: the server's security-layer offer has " +
                                         std::to_string(offer.size()) +
                                         " bytes, expected 4"};
    auto offered = static_cast<uint8_t>(offer[0]);
    uint32_t server_max = 0;
    for (size_t i = 1; i < 4; ++i)
      server_max = (server_max << 8) | static_cast<unsigned char>(offer[i]);
    qop chosen = qop::auth;
    if (!accepted_.pick(offered, chosen))
      return error{error_code::auth,
                   "the server requires SASL qop " + to_string(qop_set{offered}) +
                       ", but this client accepts only " + to_string(accepted_) +
                       " (hadoop.rpc.protection of the client configuration)"};
    if (chosen != qop::auth) {
      if (server_max == 0)
        return error{error_code::auth, "GSSAPI: the server offers a security layer "
                                       "with a maximum buffer of 0 bytes"};
      OM_uint32 limit = 0;
      major = gss_wrap_size_limit(&minor, ctx_, chosen == qop::auth_conf ? 1 : 0,
                                  GSS_C_QOP_DEFAULT, server_max, &limit);
      if (GSS_ERROR(major) || limit == 0)
        return error{error_code::auth, "GSSAPI: no room for data in the server's "
                                       "maximum buffer of " +
                                           std::to_string(server_max) + " bytes"};
      max_wrap_ = limit;
    }
    // Our answer: the layer and our own maximum (0 without a layer).
    uint32_t ours = chosen == qop::auth ? 0 : max_buffer;
    std::string answer{static_cast<char>(chosen), static_cast<char>((ours >> 16) & 0xFF),
                       static_cast<char>((ours >> 8) & 0xFF),
                       static_cast<char>(ours & 0xFF)};
    auto plain = view(answer);
    int conf = 0;
    major = gss_wrap(&minor, ctx_, 0, GSS_C_QOP_DEFAULT, &plain, &conf, &out);
    if (GSS_ERROR(major))
      return error{error_code::auth, "GSSAPI: cannot wrap the security-layer answer: " +
                                         gss_status_text(major, false)};
    qop_ = chosen;
    complete_ = true;
    return take(out);
  }

  error failure(OM_uint32 major, OM_uint32 minor) const {
    auto realm = target_.substr(target_.rfind('@') + 1);
    auto who = creds_->principal() + " (" + creds_->source() + ")";
    switch (static_cast<krb5_error_code>(minor)) {
    case KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN:
      return error{error_code::auth,
                   "the KDC does not know the server principal " + target_};
    case KRB5KRB_AP_ERR_TKT_EXPIRED:
    case KRB5KDC_ERR_TGT_REVOKED:
      return error{error_code::auth, "the Kerberos ticket of " + who +
                                         " expired: run kinit " + creds_->principal() +
                                         " again, or set [security] keytab"};
    case KRB5_KDC_UNREACH:
      return error{error_code::auth, "cannot reach a KDC of realm " + realm + " at " +
                                         describe_kdcs(realm) + " to get a ticket for " +
                                         target_};
    default:
      break;
    }
    if (GSS_ROUTINE_ERROR(major) == GSS_S_CREDENTIALS_EXPIRED)
      return error{error_code::auth, "the Kerberos credentials of " + who +
                                         " expired: run kinit " + creds_->principal() +
                                         " again, or set [security] keytab"};
    return error{error_code::auth, "GSSAPI authentication of " + who + " to " + target_ +
                                       " failed: " + gss_status_text(major, false) +
                                       " (" + gss_status_text(minor, true) + ")"};
  }

  std::shared_ptr<const kerberos_credentials> creds_;
  std::string target_;
  qop_set accepted_;
  void* cred_ = nullptr;
  gss_name_t name_ = GSS_C_NO_NAME;
  gss_ctx_id_t ctx_ = GSS_C_NO_CONTEXT;
  bool established_ = false;
  bool complete_ = false;
  qop qop_ = qop::auth;
  size_t max_wrap_ = 0;
};

} // namespace

expected<std::unique_ptr<sasl_mechanism>>
make_gssapi_client(std::shared_ptr<const kerberos_credentials> creds,
                   const std::string& server_principal, qop_set accepted) {
  auto client =
      std::make_unique<gssapi_client>(std::move(creds), server_principal, accepted);
  if (auto ok = client->init(); !ok)
    return ok.error();
  return std::unique_ptr<sasl_mechanism>{std::move(client)};
}

} // namespace tony::hadoop
