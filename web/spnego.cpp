#include "web/spnego.hpp"

#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "base/text.hpp"
#include "hadoop/crypto.hpp"

namespace tony::http {

namespace {

constexpr const char* text_plain = "text/plain; charset=utf-8";

bool wildcard(const std::string& bind) {
  return bind.empty() || bind == "0.0.0.0" || bind == "::" || bind == "[::]";
}

} // namespace

std::string canonical_local_host() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0)
    return "localhost";
  std::string result = name;
  addrinfo hints{};
  hints.ai_flags = AI_CANONNAME;
  addrinfo* found = nullptr;
  if (getaddrinfo(name, nullptr, &hints, &found) == 0 && found != nullptr) {
    if (found->ai_canonname != nullptr)
      result = found->ai_canonname;
    freeaddrinfo(found);
  }
  return base::lower(result);
}

std::string server_principal(const std::string& pattern, const std::string& bind,
                             const std::string& local_host) {
  auto at = pattern.find("/_HOST");
  if (at == std::string::npos)
    return pattern;
  auto host = wildcard(bind) ? local_host : base::lower(bind);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return pattern.substr(0, at + 1) + host + pattern.substr(at + 6);
}

std::optional<std::string> short_name_of(const std::string& principal,
                                         const std::string& realm) {
  auto at = principal.rfind('@');
  if (at == std::string::npos || at == 0 || principal.substr(at + 1) != realm)
    return std::nullopt;
  auto first = principal.substr(0, std::min(at, principal.find('/')));
  if (first.empty())
    return std::nullopt;
  return first;
}

std::optional<std::string> negotiate_token(const std::string& authorization) {
  auto value = base::trim(authorization);
  constexpr std::string_view scheme = "negotiate";
  if (value.size() <= scheme.size() ||
      base::lower(std::string{value.substr(0, scheme.size())}) != scheme ||
      (value[scheme.size()] != ' ' && value[scheme.size()] != '\t'))
    return std::nullopt;
  return std::string{base::trim(value.substr(scheme.size()))};
}

spnego_guard::spnego_guard(std::unique_ptr<hadoop::gss_acceptor> acceptor,
                           std::string realm, std::string server_name)
    : acceptor_(std::move(acceptor))
    , realm_(std::move(realm))
    , server_name_(std::move(server_name)) {}

std::optional<std::string> spnego_guard::authenticate(const httplib::Request& req,
                                                      httplib::Response& res) const {
  res.set_header("Cache-Control", "no-store");
  auto token = negotiate_token(req.get_header_value("Authorization"));
  if (!token || token->empty()) {
    res.status = 401;
    res.set_header("WWW-Authenticate", "Negotiate");
    res.set_content(
        server_name_ +
            ": this server takes Kerberos (SPNEGO): kinit as yourself, then "
            "curl --negotiate -u : URL, or use a browser set up for Negotiate "
            "(realm " +
            realm_ + ")\n",
        text_plain);
    return std::nullopt;
  }
  auto refuse = [&](const std::string& why) {
    res.status = 403;
    res.set_content(server_name_ + ": " + why + "\n", text_plain);
    return std::nullopt;
  };
  auto raw = hadoop::base64_decode(*token);
  if (!raw)
    return refuse("the Negotiate token is not base64");
  auto ok = acceptor_->accept(*raw);
  if (!ok)
    return refuse("Kerberos authentication failed: " + ok.error().message());
  if (!ok->reply.empty())
    res.set_header("WWW-Authenticate", "Negotiate " + hadoop::base64_encode(ok->reply));
  auto user = short_name_of(ok->principal, realm_);
  if (!user)
    return refuse("the principal " + ok->principal + " is not of realm " + realm_ +
                  ", so it maps to no user here");
  return user;
}

} // namespace tony::http
