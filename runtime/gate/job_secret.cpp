#include "runtime/gate/job_secret.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include "hadoop/credentials.hpp"
#include "hadoop/crypto.hpp"
#include "messages/error.hpp"

namespace tony::gate {

namespace {

bool valid_app_id(const std::string& app_id) {
  if (app_id.empty() || app_id.size() > 128)
    return false;
  for (auto ch : app_id)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-'))
      return false;
  return true;
}

} // namespace

std::string make_job_secret() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1)
    return {};
  static const char* hex = "0123456789abcdef";
  std::string result;
  for (auto b : bytes) {
    result += hex[b >> 4];
    result += hex[b & 0xF];
  }
  return result;
}

std::string derived_token(const std::string& secret, const std::string& purpose) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(purpose.data()), purpose.size(), mac, &len);
  // 16 of its bytes: 32 hex digits.
  return hadoop::hex_encode({reinterpret_cast<const char*>(mac), std::min(len, 16u)});
}

expected<std::string>
job_secret_from_environment(const std::map<std::string, std::string>& env) {
  if (auto i = env.find(secret_env); i != env.end() && !i->second.empty())
    return i->second;
  auto file = env.find("HADOOP_TOKEN_FILE_LOCATION");
  if (file == env.end() || file->second.empty())
    return make_error(errc::invalid_config,
                      std::string{"no job secret: neither "} + secret_env +
                          " nor HADOOP_TOKEN_FILE_LOCATION is set (tony-am and "
                          "tony-executor are started by tony-submit and tony-am)");
  auto creds = hadoop::read_credentials_file(file->second);
  if (!creds)
    return make_error(errc::infrastructure,
                      "cannot read the job secret: " + creds.error().message());
  for (auto& [alias, bytes] : creds->secrets())
    if (alias == secret_alias && !bytes.empty())
      return bytes;
  return make_error(errc::invalid_config,
                    "no job secret: the token file " + file->second + " holds no '" +
                        secret_alias + "' and " + secret_env +
                        " is not set (was this container started by tony?)");
}

std::string job_secret_or_fresh(const std::map<std::string, std::string>& env) {
  auto given = job_secret_from_environment(env);
  if (given)
    return *given;
  spdlog::warn("tony-am: {}; using a fresh job secret (no client can follow this job)",
               describe(given.error()));
  return make_job_secret();
}

std::string credentials_with_secret(const std::string& secret) {
  hadoop::credentials creds;
  creds.add_secret(secret_alias, secret);
  return hadoop::serialize_credentials(creds);
}

std::string secret_dir() {
  auto home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.tony/secrets";
}

expected<void> save_secret(const std::string& app_id, const std::string& secret) {
  if (!valid_app_id(app_id))
    return make_error(errc::invalid_config, "not an application id: '" + app_id + "'");
  auto dir = secret_dir();
  auto parent = dir.substr(0, dir.rfind('/'));
  ::mkdir(parent.c_str(), 0700);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return make_error(errc::infrastructure,
                      "cannot create " + dir + ": " + std::strerror(errno));
  ::chmod(dir.c_str(), 0700);
  auto path = dir + "/" + app_id;
  auto tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return make_error(errc::infrastructure,
                      "cannot write " + tmp + ": " + std::strerror(errno));
  ::fchmod(fd, 0600); // whatever the umask
  bool ok =
      ::write(fd, secret.data(), secret.size()) == static_cast<ssize_t>(secret.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return make_error(errc::infrastructure, "cannot write " + path);
  }
  return tony::ok;
}

expected<std::string> load_secret(const std::string& app_id) {
  if (!valid_app_id(app_id))
    return make_error(errc::invalid_config, "not an application id: '" + app_id + "'");
  auto path = secret_dir() + "/" + app_id;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty())
    return make_error(errc::invalid_config,
                      "no job secret for " + app_id + " in " + secret_dir() +
                          " (it was submitted from another account or machine, or "
                          "has ended)");
  return text.str();
}

void forget_secret(const std::string& app_id) {
  if (valid_app_id(app_id))
    ::unlink((secret_dir() + "/" + app_id).c_str());
}

} // namespace tony::gate
