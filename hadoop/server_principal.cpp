#include "hadoop/server_principal.hpp"

#include "base/text.hpp"
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <regex>

namespace tony::hadoop {

namespace {

// GlobPattern's translation to a regular expression, as Hadoop compiles
// it; false when the glob is malformed (unbalanced braces or brackets).
bool glob_to_regex(const std::string& glob, std::string& out) {
  int braces = 0;
  bool in_class = false;
  for (size_t i = 0; i < glob.size(); ++i) {
    char c = glob[i];
    switch (c) {
    case '\\':
      if (++i >= glob.size())
        return false;
      out += '\\';
      out += glob[i];
      continue;
    case '.':
    case '$':
    case '(':
    case ')':
    case '|':
    case '+':
    case '^':
      out += in_class && c != '^' ? std::string{c} : std::string{'\\', c};
      continue;
    case '*':
      out += in_class ? "*" : ".*";
      continue;
    case '?':
      out += in_class ? "?" : ".";
      continue;
    case '{':
      out += in_class ? "{" : "(?:";
      braces += in_class ? 0 : 1;
      continue;
    case ',':
      out += braces > 0 && !in_class ? "|" : ",";
      continue;
    case '}':
      if (braces > 0 && !in_class) {
        --braces;
        out += ')';
      } else {
        out += "\\}";
      }
      continue;
    case '[':
      if (in_class)
        return false;
      in_class = true;
      out += '[';
      if (i + 1 < glob.size() && glob[i + 1] == '!') {
        out += '^';
        ++i;
      }
      continue;
    case ']':
      in_class = false;
      out += ']';
      continue;
    default:
      out += c;
    }
  }
  return braces == 0 && !in_class;
}

} // namespace

kerberos_service service_from(const configuration& conf, const std::string& key) {
  kerberos_service result;
  result.key = key;
  result.principal = conf.get_or(key, "");
  result.pattern = conf.get_or(key + ".pattern", "");
  return result;
}

std::string substitute_host(const std::string& principal, const std::string& host) {
  auto slash = principal.find('/');
  auto at = principal.find('@');
  if (slash == std::string::npos || at == std::string::npos || at < slash ||
      principal.compare(slash + 1, at - slash - 1, "_HOST") != 0)
    return principal;
  return principal.substr(0, slash + 1) + base::lower(host) + principal.substr(at);
}

bool glob_match(const std::string& pattern, const std::string& text) {
  std::string rx;
  if (!glob_to_regex(pattern, rx))
    return false;
  try {
    return std::regex_match(text, std::regex{rx});
  } catch (const std::regex_error&) {
    return false;
  }
}

std::string canonical_host(const endpoint& server) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(server.host.c_str(), nullptr, &hints, &found) != 0 ||
      found == nullptr)
    return base::lower(server.host);
  char name[NI_MAXHOST];
  std::string result;
  if (::getnameinfo(found->ai_addr, found->ai_addrlen, name, sizeof name, nullptr, 0,
                    NI_NAMEREQD) == 0)
    result = name;
  else if (::getnameinfo(found->ai_addr, found->ai_addrlen, name, sizeof name, nullptr, 0,
                         NI_NUMERICHOST) == 0)
    result = name;
  else
    result = server.host;
  ::freeaddrinfo(found);
  while (!result.empty() && result.back() == '.')
    result.pop_back();
  return base::lower(result);
}

expected<std::string> check_server_principal(const kerberos_service& service,
                                             const std::string& advertised,
                                             const std::string& canonical_server_host) {
  auto refuse = [&](const std::string& why) {
    return error{error_code::auth,
                 "refusing the server: it has Kerberos principal " + advertised + ", " +
                     why +
                     " (possible impersonation; if the server is right, "
                     "fix " +
                     service.key + " in the client configuration)"};
  };
  if (!service.pattern.empty()) {
    if (!glob_match(service.pattern, advertised))
      return refuse("which does not match " + service.key +
                    ".pattern = " + service.pattern);
    return advertised;
  }
  if (service.principal.empty())
    return error{error_code::auth,
                 "the server authenticates with Kerberos, but the client configuration "
                 "does not name its principal: set " +
                     service.key +
                     " (e.g. rm/_HOST@YOUR.REALM) in the site files of "
                     "HADOOP_CONF_DIR"};
  auto expected_principal = substitute_host(service.principal, canonical_server_host);
  auto slash = expected_principal.find('/');
  auto at = expected_principal.find('@');
  if (slash == std::string::npos || (at != std::string::npos && at < slash))
    return error{error_code::auth, service.key + " = " + service.principal +
                                       " has no host part (service/host@REALM)"};
  if (expected_principal != advertised)
    return refuse("but " + service.key + " = " + service.principal + " expects " +
                  expected_principal);
  return advertised;
}

} // namespace tony::hadoop
