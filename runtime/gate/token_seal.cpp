#include "runtime/gate/token_seal.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <memory>

#include "messages/error.hpp"

namespace tony::gate {

namespace {

constexpr const char* label = "tony-tokens/1";
constexpr size_t nonce_size = 12;
constexpr size_t tag_size = 16;

using cipher_ctx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

std::string derive_key(const std::string& secret) {
  unsigned char key[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(label),
       std::char_traits<char>::length(label), key, &len);
  std::string result(reinterpret_cast<char*>(key), len);
  OPENSSL_cleanse(key, sizeof key);
  return result;
}

std::string additional_data(const std::string& app_id, int32_t generation) {
  auto g = static_cast<uint32_t>(generation);
  std::string aad = label + app_id;
  for (int shift = 24; shift >= 0; shift -= 8)
    aad.push_back(static_cast<char>((g >> shift) & 0xFF));
  return aad;
}

const unsigned char* bytes(const std::string& x) {
  return reinterpret_cast<const unsigned char*>(x.data());
}

} // namespace

std::string seal_tokens(const std::string& secret, const std::string& app_id,
                        int32_t generation, const std::string& plaintext) {
  auto key = derive_key(secret);
  auto aad = additional_data(app_id, generation);
  std::string out(nonce_size + plaintext.size() + tag_size, '\0');
  auto* data = reinterpret_cast<unsigned char*>(out.data());
  cipher_ctx ctx{EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free};
  int len = 0;
  bool ok =
      ctx && RAND_bytes(data, nonce_size) == 1 &&
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, bytes(key), data) == 1 &&
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, bytes(aad),
                        static_cast<int>(aad.size())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), data + nonce_size, &len, bytes(plaintext),
                        static_cast<int>(plaintext.size())) == 1 &&
      EVP_EncryptFinal_ex(ctx.get(), data + nonce_size + len, &len) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, tag_size,
                          data + nonce_size + plaintext.size()) == 1;
  OPENSSL_cleanse(key.data(), key.size());
  return ok ? out : std::string{};
}

expected<std::string> open_tokens(const std::string& secret, const std::string& app_id,
                                  int32_t generation, const std::string& sealed) {
  auto refuse = [] {
    return make_error(errc::bad_secret,
                      "the sealed tokens do not open with this job's secret (another "
                      "job's, another generation, or changed on the way)");
  };
  if (sealed.size() < nonce_size + tag_size)
    return refuse();
  auto key = derive_key(secret);
  auto aad = additional_data(app_id, generation);
  auto text_size = sealed.size() - nonce_size - tag_size;
  std::string out(text_size, '\0');
  auto* in = bytes(sealed);
  std::string tag = sealed.substr(nonce_size + text_size);
  cipher_ctx ctx{EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free};
  int len = 0;
  bool ok =
      ctx &&
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, bytes(key), in) == 1 &&
      EVP_DecryptUpdate(ctx.get(), nullptr, &len, bytes(aad),
                        static_cast<int>(aad.size())) == 1 &&
      EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len,
                        in + nonce_size, static_cast<int>(text_size)) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, tag_size, tag.data()) == 1 &&
      EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + len,
                          &len) == 1;
  OPENSSL_cleanse(key.data(), key.size());
  if (!ok) {
    OPENSSL_cleanse(out.data(), out.size());
    return refuse();
  }
  return out;
}

} // namespace tony::gate
