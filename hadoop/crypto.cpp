#include "hadoop/crypto.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <random>

namespace tony::hadoop {

std::string hex_encode(std::string_view data) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string result;
  result.reserve(data.size() * 2);
  for (auto c : data) {
    auto b = static_cast<unsigned char>(c);
    result.push_back(digits[b >> 4]);
    result.push_back(digits[b & 0x0F]);
  }
  return result;
}

std::string base64_encode(std::string_view data) {
  std::string result(4 * ((data.size() + 2) / 3), '\0');
  auto n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(result.data()),
                           reinterpret_cast<const unsigned char*>(data.data()),
                           static_cast<int>(data.size()));
  result.resize(static_cast<size_t>(n));
  return result;
}

expected<std::string> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  while (!text.empty() && text.back() == '=')
    text.remove_suffix(1);
  std::string result;
  uint32_t acc = 0;
  int bits = 0;
  for (auto c : text) {
    auto v = value(c);
    if (v < 0)
      return error{error_code::invalid_input, "invalid base64 character"};
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      result.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (bits >= 6)
    return error{error_code::invalid_input, "truncated base64 text"};
  return result;
}

std::string random_bytes(size_t n) {
  std::string result(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(result.data()), static_cast<int>(n)) !=
      1) {
    // OpenSSL's generator failing is close to impossible; a nonce that is
    // merely unpredictable still beats aborting the connection.
    std::random_device rd;
    for (auto& c : result)
      c = static_cast<char>(rd() & 0xFF);
  }
  return result;
}

} // namespace tony::hadoop
