#include "hadoop/digest_md5.hpp"

#include <pthread.h>
#include <sasl/sasl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "hadoop/crypto.hpp"

namespace tony::hadoop {

namespace {

// -- Cyrus SASL, once per process ----------------------------------------------

// Cyrus's default mutexes are no-ops; its DIGEST-MD5 plugin shares a
// reauthentication cache between connections, and the AM opens connections
// from several threads.
void* mutex_alloc() {
  auto* m = new pthread_mutex_t;
  pthread_mutex_init(m, nullptr);
  return m;
}

int mutex_lock(void* m) {
  return pthread_mutex_lock(static_cast<pthread_mutex_t*>(m)) == 0 ? SASL_OK : SASL_FAIL;
}

int mutex_unlock(void* m) {
  return pthread_mutex_unlock(static_cast<pthread_mutex_t*>(m)) == 0 ? SASL_OK
                                                                     : SASL_FAIL;
}

void mutex_free(void* m) {
  auto* mtx = static_cast<pthread_mutex_t*>(m);
  pthread_mutex_destroy(mtx);
  delete mtx;
}

// Without a log callback Cyrus writes to syslog; its messages reach the
// caller through sasl_errdetail() instead.
int quiet_log(void*, int, const char*) {
  return SASL_OK;
}

using sasl_cb_fn = int (*)();

template <class F>
sasl_cb_fn callback_fn(F* f) {
  return reinterpret_cast<sasl_cb_fn>(reinterpret_cast<void*>(f));
}

// The plug-in directory shipped with tony's binaries (<bin>/../lib/tony/sasl2,
// cmake/bundle_libs.sh), so that nodes need no libsasl2-modules; empty when
// there is none (an install without it), and then the system's serves.
std::string bundled_plugin_dir() {
  char buf[4096];
  auto n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return {};
  std::string exe(buf, static_cast<size_t>(n));
  auto dir = exe.substr(0, exe.rfind('/')) + "/../lib/tony/sasl2";
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? dir : std::string{};
}

int init_cyrus() {
  static int result = [] {
    sasl_set_mutex(&mutex_alloc, &mutex_lock, &mutex_unlock, &mutex_free);
    if (auto dir = bundled_plugin_dir(); !dir.empty())
      sasl_set_path(SASL_PATH_TYPE_PLUGIN, dir.data()); // copied by Cyrus
    static sasl_callback_t global[] = {{SASL_CB_LOG, callback_fn(&quiet_log), nullptr},
                                       {SASL_CB_LIST_END, nullptr, nullptr}};
    return sasl_client_init(global);
  }();
  return result;
}

// The qop list of a digest-challenge, for messages only (the library
// parses the challenge itself).
std::string offered_qops(std::string_view challenge) {
  auto pos = challenge.find("qop=");
  if (pos == std::string_view::npos)
    return "auth";
  pos += 4;
  if (pos < challenge.size() && challenge[pos] == '"') {
    auto end = challenge.find('"', pos + 1);
    return std::string{challenge.substr(
        pos + 1, end == std::string_view::npos ? std::string_view::npos : end - pos - 1)};
  }
  auto end = challenge.find(',', pos);
  return std::string{challenge.substr(
      pos, end == std::string_view::npos ? std::string_view::npos : end - pos)};
}

std::string be32(size_t n) {
  std::string out(4, '\0');
  for (int i = 3; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(n & 0xFF);
    n >>= 8;
  }
  return out;
}

uint32_t read_be32(const char* p) {
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n = (n << 8) | static_cast<unsigned char>(p[i]);
  return n;
}

// -- the mechanism ----------------------------------------------------------

class digest_md5_client final : public sasl_mechanism {
public:
  digest_md5_client(const token& tok, qop_set accepted)
      : user_(base64_encode(tok.identifier))
      , accepted_(accepted) {
    auto password = base64_encode(tok.password);
    secret_.resize(sizeof(sasl_secret_t) + password.size());
    auto* secret = reinterpret_cast<sasl_secret_t*>(secret_.data());
    secret->len = password.size();
    std::memcpy(secret->data, password.data(), password.size());
    callbacks_ = {{SASL_CB_AUTHNAME, callback_fn(&get_name), this},
                  {SASL_CB_USER, callback_fn(&get_name), this},
                  {SASL_CB_PASS, callback_fn(&get_secret), this},
                  {SASL_CB_GETREALM, callback_fn(&get_realm), this},
                  {SASL_CB_LIST_END, nullptr, nullptr}};
  }

  ~digest_md5_client() override {
    if (conn_ != nullptr)
      sasl_dispose(&conn_);
  }

  expected<void> init(const std::string& protocol, const std::string& server_id) {
    if (auto rc = init_cyrus(); rc != SASL_OK)
      return error{error_code::auth, std::string{"cannot initialize Cyrus SASL: "} +
                                         sasl_errstring(rc, nullptr, nullptr)};
    // The digest-uri is service "/" serverFQDN: "/default" for YARN.
    auto rc = sasl_client_new(protocol.c_str(), server_id.c_str(), nullptr, nullptr,
                              callbacks_.data(), 0, &conn_);
    if (rc != SASL_OK)
      return error{error_code::auth, std::string{"cannot start a DIGEST-MD5 client: "} +
                                         sasl_errstring(rc, nullptr, nullptr)};
    sasl_security_properties_t props{};
    props.min_ssf = accepted_.contains(qop::auth)       ? 0
                    : accepted_.contains(qop::auth_int) ? 1
                                                        : 2;
    props.max_ssf = accepted_.contains(qop::auth_conf)  ? 128
                    : accepted_.contains(qop::auth_int) ? 1
                                                        : 0;
    // Hadoop's servers wrap a whole response in one token, whatever its
    // size: accept the largest packet RFC 2831 allows.
    props.maxbufsize = 0xFFFFFF;
    sasl_setprop(conn_, SASL_SEC_PROPS, &props);
    return {};
  }

  const char* name() const noexcept override { return "DIGEST-MD5"; }

  bool has_initial_response() const noexcept override { return false; }

  expected<std::string> evaluate(std::string_view challenge) override {
    if (complete_)
      return error{error_code::auth, "DIGEST-MD5: the server sent more after rspauth"};
    const char* out = nullptr;
    unsigned out_len = 0;
    sasl_interact_t* interact = nullptr;
    if (!started_) {
      // Cyrus takes a first message starting with rspauth= as the answer
      // to a fast reauthentication tony never attempted, and then reads a
      // response it never computed (a NULL dereference in
      // libsasl2-modules 2.1.28): a server must challenge first.
      if (challenge.size() >= 8 && strncasecmp(challenge.data(), "rspauth=", 8) == 0)
        return error{error_code::auth,
                     "DIGEST-MD5: the server's first message is a final rspauth, not a "
                     "challenge; refusing it"};
      // No output here: Cyrus would try a "fast reauthentication" from an
      // earlier connection, which Hadoop's servers do not know.
      const char* mech = nullptr;
      auto rc =
          sasl_client_start(conn_, "DIGEST-MD5", &interact, nullptr, nullptr, &mech);
      if (rc == SASL_NOMECH)
        return error{error_code::auth,
                     "Cyrus SASL has no DIGEST-MD5 mechanism: ship lib/tony/sasl2 beside "
                     "tony's binaries (the build makes it) or install libsasl2-modules "
                     "(its digestmd5 plugin)"};
      if (rc != SASL_CONTINUE && rc != SASL_OK)
        return failure(rc, challenge);
      started_ = true;
      challenge_ = std::string{challenge};
    }
    // Cyrus wants a NUL after the input.
    std::string in{challenge};
    auto rc = sasl_client_step(conn_, in.c_str(), static_cast<unsigned>(in.size()),
                               &interact, &out, &out_len);
    if (rc == SASL_OK)
      complete_ = true;
    else if (rc != SASL_CONTINUE)
      return failure(rc, challenge_);
    return std::string{out == nullptr ? "" : out, out_len};
  }

  bool complete() const noexcept override { return complete_; }

  qop negotiated_qop() const noexcept override {
    const void* value = nullptr;
    if (conn_ == nullptr || sasl_getprop(conn_, SASL_SSF, &value) != SASL_OK ||
        value == nullptr)
      return qop::auth;
    auto ssf = *static_cast<const sasl_ssf_t*>(value);
    return ssf == 0 ? qop::auth : ssf == 1 ? qop::auth_int : qop::auth_conf;
  }

  size_t max_wrap_input() const noexcept override {
    const void* value = nullptr;
    if (sasl_getprop(conn_, SASL_MAXOUTBUF, &value) != SASL_OK || value == nullptr)
      return 0;
    return *static_cast<const unsigned*>(value);
  }

  // Cyrus frames its packets with a 4-byte length; Hadoop's WRAP token is
  // the packet without it (Java's SaslClient.wrap).
  expected<std::string> wrap(std::string_view plain) override {
    const char* out = nullptr;
    unsigned out_len = 0;
    auto rc = sasl_encode(conn_, plain.data(), static_cast<unsigned>(plain.size()), &out,
                          &out_len);
    if (rc != SASL_OK)
      return error{error_code::protocol,
                   std::string{"DIGEST-MD5 cannot wrap: "} + sasl_errdetail(conn_)};
    if (out_len < 4 || read_be32(out) != out_len - 4)
      return error{error_code::protocol,
                   "DIGEST-MD5 wrapped " + std::to_string(plain.size()) +
                       " bytes into more than one packet (input above the negotiated "
                       "maximum)"};
    return std::string{out + 4, out_len - 4};
  }

  expected<std::string> unwrap(std::string_view token) override {
    auto packet = be32(token.size());
    packet.append(token);
    const char* out = nullptr;
    unsigned out_len = 0;
    auto rc = sasl_decode(conn_, packet.data(), static_cast<unsigned>(packet.size()),
                          &out, &out_len);
    if (rc != SASL_OK)
      return error{error_code::protocol,
                   std::string{"DIGEST-MD5 rejects a wrapped message from the server "
                               "(tampered with, replayed or out of order): "} +
                       sasl_errdetail(conn_)};
    return std::string{out == nullptr ? "" : out, out_len};
  }

private:
  error failure(int rc, std::string_view challenge) const {
    std::string detail =
        conn_ != nullptr ? sasl_errdetail(conn_) : sasl_errstring(rc, nullptr, nullptr);
    if (rc == SASL_BADSERV)
      return error{
          error_code::auth,
          "the server's DIGEST-MD5 rspauth is wrong: it does not know the token's "
          "password (wrong server, or a token for another cluster)"};
    if (rc == SASL_TOOWEAK || detail.find("layer") != std::string::npos)
      return error{error_code::auth,
                   "the server requires SASL qop '" + offered_qops(challenge) +
                       "', but this client accepts only " + to_string(accepted_) +
                       " (hadoop.rpc.protection of the client configuration)"};
    return error{error_code::auth, "DIGEST-MD5 failed: " + detail};
  }

  static int get_name(void* self, int, const char** result, unsigned* len) {
    auto* x = static_cast<digest_md5_client*>(self);
    *result = x->user_.c_str();
    if (len != nullptr)
      *len = static_cast<unsigned>(x->user_.size());
    return SASL_OK;
  }

  static int get_secret(sasl_conn_t*, void* self, int, sasl_secret_t** result) {
    auto* x = static_cast<digest_md5_client*>(self);
    *result = reinterpret_cast<sasl_secret_t*>(x->secret_.data());
    return SASL_OK;
  }

  static int get_realm(void*, int, const char** offered, const char** result) {
    *result = offered != nullptr && offered[0] != nullptr ? offered[0] : "";
    return SASL_OK;
  }

  std::string user_;
  std::vector<unsigned char> secret_;
  qop_set accepted_;
  std::vector<sasl_callback_t> callbacks_;
  sasl_conn_t* conn_ = nullptr;
  std::string challenge_;
  bool started_ = false;
  bool complete_ = false;
};

} // namespace

expected<std::unique_ptr<sasl_mechanism>>
make_digest_md5_client(const token& tok, const std::string& protocol,
                       const std::string& server_id, qop_set accepted) {
  auto client = std::make_unique<digest_md5_client>(tok, accepted);
  if (auto ok = client->init(protocol, server_id); !ok)
    return ok.error();
  return std::unique_ptr<sasl_mechanism>{std::move(client)};
}

} // namespace tony::hadoop
