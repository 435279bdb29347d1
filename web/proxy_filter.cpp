#include "web/proxy_filter.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <sstream>

#include <spdlog/spdlog.h>

#include "messages/error.hpp"
#include "web/job_page.hpp"
#include "web/view_acl.hpp"

namespace tony::http {

namespace {

// "scheme://host:port/path..." → "scheme://host:port".
std::string origin_of(const std::string& url) {
  auto start = url.find("://");
  if (start == std::string::npos)
    return url;
  auto slash = url.find('/', start + 3);
  return slash == std::string::npos ? url : url.substr(0, slash);
}

} // namespace

std::string host_of(const std::string& url) {
  auto start = url.find("://");
  auto authority = url.substr(start == std::string::npos ? 0 : start + 3);
  authority = authority.substr(0, authority.find('/'));
  if (!authority.empty() && authority[0] == '[')
    return authority.substr(1, authority.find(']') - 1);
  return authority.substr(0, authority.find(':'));
}

expected<proxy_filter_config>
proxy_filter_from_environment(const std::map<std::string, std::string>& env) {
  auto get = [&](const char* key) {
    auto i = env.find(key);
    return i == env.end() ? std::string{} : i->second;
  };
  proxy_filter_config cfg;
  cfg.proxy_base = get("APPLICATION_WEB_PROXY_BASE");
  std::istringstream list{get(web_proxies_env)};
  std::string item;
  while (std::getline(list, item, ','))
    if (!item.empty())
      cfg.proxies.push_back(item);
  if (cfg.proxies.empty())
    return make_error(errc::invalid_config,
                      std::string{web_proxies_env} +
                          " is not set (the job was submitted by an older tony-submit)");
  if (cfg.proxy_base.empty())
    return make_error(errc::invalid_config,
                      "APPLICATION_WEB_PROXY_BASE is not set (not started by a "
                      "ResourceManager?)");
  return cfg;
}

void redirect_to_web_proxy(http_server& server,
                           const std::map<std::string, std::string>& env,
                           const std::string& app_id) {
  auto cfg = proxy_filter_from_environment(env);
  if (!cfg) {
    spdlog::warn("tracking page: it answers everyone: {}", describe(cfg.error()));
    return;
  }
  spdlog::info("tracking page: requests not from the RM's web proxy are redirected to "
               "{}{}",
               cfg->proxies.front(), cfg->proxy_base);
  auto filter = std::make_shared<proxy_filter>(*cfg);
  std::shared_ptr<view_guard> guard;
  if (auto acl = view_acl_from_environment(env, app_id)) {
    spdlog::info(
        "tracking page: shown to {} (the owner), the view ACL '{}' and the admins "
        "'{}' only (yarn.acl.enable)",
        acl->owner, acl->view.to_string(), acl->admins.to_string());
    guard = std::make_shared<view_guard>(std::move(*acl));
  }
  server.set_filter([filter, guard](const httplib::Request& req, httplib::Response& res) {
    return (*filter)(req, res) || (guard && (*guard)(req, res));
  });
}

proxy_filter::proxy_filter(proxy_filter_config cfg, resolver resolve, prober probe)
    : cfg_(std::move(cfg))
    , resolve_(std::move(resolve))
    , probe_(std::move(probe)) {
  for (auto& p : cfg_.proxies)
    p = origin_of(p);
}

std::vector<std::string> proxy_filter::resolve_host(const std::string& host) {
  std::vector<std::string> result;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0)
    return result;
  for (auto ai = found; ai != nullptr; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (ai->ai_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, text,
                  sizeof(text));
    else if (ai->ai_family == AF_INET6)
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr,
                  text, sizeof(text));
    if (*text)
      result.emplace_back(text);
  }
  ::freeaddrinfo(found);
  return result;
}

bool proxy_filter::probe_proxy(const std::string& url) {
  httplib::Client client{origin_of(url)};
  client.set_connection_timeout(std::chrono::seconds(2));
  client.set_read_timeout(std::chrono::seconds(5));
  auto path = url.substr(origin_of(url).size());
  auto res = client.Get(path.empty() ? "/" : path);
  // 401/403: a secure RM that wants credentials the AM does not have is up.
  return res && (res->status == 200 || res->status == 401 || res->status == 403);
}

// Resolving and probing are network I/O: done without the mutex, so a
// request from the proxy (the probe's own request, on an RM-HA cluster)
// never waits behind them. Two requests at once may both resolve or probe;
// the last answer is kept.
std::set<std::string> proxy_filter::addresses(clock_type::time_point now) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (resolved_ && now - resolved_at_ < cfg_.refresh)
      return addresses_;
  }
  std::set<std::string> fresh;
  for (auto& p : cfg_.proxies)
    for (auto& a : resolve_(host_of(p)))
      fresh.insert(a);
  std::lock_guard<std::mutex> guard{mutex_};
  if (fresh.empty() && !addresses_.empty()) {
    spdlog::warn("tracking page: the web proxy hosts do not resolve now; keeping {} "
                 "known addresses",
                 addresses_.size());
  } else {
    addresses_ = std::move(fresh);
  }
  resolved_ = true;
  resolved_at_ = now;
  return addresses_;
}

std::string proxy_filter::redirect_base(clock_type::time_point now) {
  if (cfg_.proxies.size() == 1)
    return cfg_.proxies.front();
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!chosen_.empty() && now - chosen_at_ < cfg_.refresh)
      return chosen_;
  }
  std::string found;
  for (auto& p : cfg_.proxies)
    if (probe_(p + cfg_.proxy_base)) {
      found = p;
      break;
    }
  std::lock_guard<std::mutex> guard{mutex_};
  chosen_ = found;
  chosen_at_ = now;
  return found;
}

proxy_filter::decision proxy_filter::decide(const std::string& remote_addr,
                                            const std::string& target) {
  auto now = clock_type::now();
  auto known = addresses(now);
  if (known.empty())
    return {verdict::unavailable, "none of the web proxy hosts resolves"};
  if (known.count(remote_addr) > 0)
    return {verdict::pass, {}};
  auto base = redirect_base(now);
  if (base.empty())
    return {verdict::unavailable, "no web proxy answers (is a ResourceManager active?)"};
  // "/proxy/<app-id>" becomes "/proxy/redirect/<app-id>".
  auto path = cfg_.proxy_base;
  if (path.rfind("/proxy", 0) == 0)
    path.insert(6, "/redirect");
  auto query = target.find('?');
  auto uri = target.substr(0, query);
  std::string location = base + path + uri;
  if (query != std::string::npos && query + 1 < target.size())
    location += target.substr(query);
  return {verdict::redirect, location};
}

bool proxy_filter::operator()(const httplib::Request& req, httplib::Response& res) {
  auto d = decide(req.remote_addr, req.target);
  switch (d.what) {
  case verdict::pass:
    return false;
  case verdict::redirect: {
    res.status = 302;
    res.set_header("Location", d.location);
    auto href = html_escape(d.location);
    res.set_content("<html><head><title>Moved</title></head><body><h1>Moved</h1>"
                    "<div>Content has moved <a href=\"" +
                        href + "\">here</a></div></body></html>\n",
                    "text/html; charset=utf-8");
    return true;
  }
  case verdict::unavailable:
    res.status = 503;
    res.set_header("Retry-After", "5");
    res.set_content("tony: this page is served through YARN's web proxy only, and " +
                        d.location + "\n",
                    "text/plain; charset=utf-8");
    return true;
  }
  return false;
}

} // namespace tony::http
