#include "hadoop/client_security.hpp"

#include <algorithm>
#include <cctype>

namespace tony::hadoop {

namespace {

std::string lower_trimmed(std::string x) {
  x.erase(std::remove_if(x.begin(), x.end(),
                         [](unsigned char c) { return std::isspace(c) != 0; }),
          x.end());
  std::transform(x.begin(), x.end(), x.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return x;
}

} // namespace

expected<client_security> client_security_from(const configuration& conf) {
  client_security result;
  auto where = [&](const std::string& key) {
    return key + " (" + conf.origin(key) + ")";
  };
  const std::string auth_key = "hadoop.security.authentication";
  auto auth = lower_trimmed(conf.get_or(auth_key, "simple"));
  if (auth == "kerberos")
    result.kerberos = true;
  else if (auth != "simple" && !auth.empty())
    return error{error_code::invalid_input, where(auth_key) + " is '" + auth +
                                                "'; a client uses simple or kerberos"};
  const std::string qop_key = "hadoop.rpc.protection";
  // Hadoop's own default (authentication) counts as unset: without the key
  // the client follows whatever the server asks.
  if (conf.raw(qop_key) != nullptr && conf.origin(qop_key) != "default") {
    auto set = parse_rpc_protection(conf.get_or(qop_key, ""));
    if (!set)
      return error{error_code::invalid_input,
                   where(qop_key) + ": " + set.error().message()};
    result.protection = *set;
  }
  const std::string fallback_key = "ipc.client.fallback-to-simple-auth-allowed";
  result.fallback_to_simple = lower_trimmed(conf.get_or(fallback_key, "false")) == "true";
  return result;
}

} // namespace tony::hadoop
