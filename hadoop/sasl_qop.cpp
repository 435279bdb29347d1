#include "hadoop/sasl_qop.hpp"

#include <algorithm>
#include <cctype>

namespace tony::hadoop {

const char* to_string(qop x) {
  switch (x) {
  case qop::auth:
    return "auth";
  case qop::auth_int:
    return "auth-int";
  case qop::auth_conf:
    return "auth-conf";
  }
  return "auth";
}

const char* protection_name(qop x) {
  switch (x) {
  case qop::auth:
    return "authentication";
  case qop::auth_int:
    return "integrity";
  case qop::auth_conf:
    return "privacy";
  }
  return "authentication";
}

std::string to_string(qop_set x) {
  std::string result;
  for (auto q : {qop::auth, qop::auth_int, qop::auth_conf})
    if (x.contains(q))
      result += (result.empty() ? "" : ", ") + std::string{protection_name(q)};
  return result.empty() ? "nothing" : result;
}

expected<qop_set> parse_rpc_protection(std::string_view text) {
  uint8_t bits = 0;
  size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(',', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string item{text.substr(start, end - start)};
    item.erase(std::remove_if(item.begin(), item.end(),
                              [](unsigned char c) { return std::isspace(c) != 0; }),
               item.end());
    std::transform(item.begin(), item.end(), item.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (item == "authentication")
      bits |= static_cast<uint8_t>(qop::auth);
    else if (item == "integrity")
      bits |= static_cast<uint8_t>(qop::auth_int);
    else if (item == "privacy")
      bits |= static_cast<uint8_t>(qop::auth_conf);
    else if (!item.empty())
      return error{error_code::invalid_input,
                   "hadoop.rpc.protection: unknown value '" + item +
                       "' (expected authentication, integrity or privacy)"};
    start = end + 1;
  }
  if (bits == 0)
    return error{error_code::invalid_input,
                 "hadoop.rpc.protection is empty (expected authentication, integrity "
                 "or privacy)"};
  return qop_set{bits};
}

} // namespace tony::hadoop
