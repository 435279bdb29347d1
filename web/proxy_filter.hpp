#pragma once

// YARN's rule for an ApplicationMaster's web UI, as Hadoop's AmIpFilter
// applies it to every Java AM (AmFilterInitializer sets it up): only the
// ResourceManager's web proxy may talk to the AM's page directly; anyone else
// is redirected to the proxy, so the proxy's authentication (SPNEGO on a
// secure cluster) and its ownership warning apply to every visitor.
//
//   request from an address of a proxy host ──▶ served (nothing else is exempt)
//   request from anywhere else ──▶ 302 to <proxy>/proxy/redirect/<app-id><path>?<query>
//
// "Proxy hosts" are the hosts of yarn.web-proxy.address, else of every RM's
// web address (RM HA), else of yarn.resourcemanager.webapp.address (https
// addresses under yarn.http.policy=HTTPS_ONLY; a loopback or wildcard host
// is the machine's canonical name) — tony-submit resolves them from its
// yarn-site.xml (yarn::web_proxies, hadoop/yarn/protocols.hpp) and hands them to the
// AM; the RM itself sets APPLICATION_WEB_PROXY_BASE (/proxy/<app-id>). Their
// addresses are resolved again every 5 minutes. The proxy connects from the
// proxy host's own address (WebAppProxyServlet binds its client to it), which
// is what the filter checks. "/redirect" after "/proxy" tells the proxy the
// request came from an AM's redirect, so it does not loop back. With several
// proxies (RM HA) the redirect goes to the first that answers.
//
// One difference from Hadoop: the "/redirect" marker is put into the proxy
// base's path, where Hadoop inserts it after the first "/proxy" anywhere in
// the URL (which breaks for a proxy host named proxy...).

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <httplib.h>

#include "messages/error.hpp"
#include "web/http_server.hpp"

namespace tony::http {

/// The environment variable tony-submit gives the AM on YARN: the web
/// proxies, comma separated, as "scheme://host:port" (yarn::web_proxies).
constexpr const char* web_proxies_env = "TONY_WEB_PROXIES";

struct proxy_filter_config {
  /// The web proxies as "scheme://host:port".
  std::vector<std::string> proxies;
  /// APPLICATION_WEB_PROXY_BASE: "/proxy/<app-id>".
  std::string proxy_base;
  /// How long resolved proxy addresses (and the chosen HA proxy) are kept.
  std::chrono::milliseconds refresh{5 * 60 * 1000};
};

class proxy_filter {
public:
  /// Every address (numeric text) of `host`; empty when it does not resolve.
  using resolver = std::function<std::vector<std::string>(const std::string& host)>;
  /// Whether the proxy at `url` answers (HA: which RM is active).
  using prober = std::function<bool(const std::string& url)>;

  enum class verdict { pass, redirect, unavailable };

  struct decision {
    verdict what = verdict::pass;
    std::string location; // redirect: where; unavailable: why
  };

  explicit proxy_filter(proxy_filter_config cfg, resolver resolve = resolve_host,
                        prober probe = probe_proxy);

  /// The decision for a request from `remote_addr` for `target` (the raw
  /// request target: path and query).
  decision decide(const std::string& remote_addr, const std::string& target);

  /// As an http_server::filter: answers (302 or 503) and returns true unless
  /// the request may pass.
  bool operator()(const httplib::Request& req, httplib::Response& res);

  static std::vector<std::string> resolve_host(const std::string& host);
  static bool probe_proxy(const std::string& url);

private:
  using clock_type = std::chrono::steady_clock;

  /// The proxies' addresses, resolved again when due. Takes mutex_ only
  /// around the state, never across the lookup.
  std::set<std::string> addresses(clock_type::time_point now);
  /// The proxy to redirect to (HA: the one that answered last, probed again
  /// when due). Takes mutex_ only around the state, never across a probe.
  std::string redirect_base(clock_type::time_point now);

  proxy_filter_config cfg_;
  resolver resolve_;
  prober probe_;
  std::mutex mutex_; // guards the state below; never held across network I/O
  std::set<std::string> addresses_;
  clock_type::time_point resolved_at_{};
  bool resolved_ = false;
  std::string chosen_; // HA: the proxy that answered last
  clock_type::time_point chosen_at_{};
};

/// The filter's configuration from the AM's environment: TONY_WEB_PROXIES and
/// APPLICATION_WEB_PROXY_BASE (set by the RM). errc::invalid_config naming
/// what is missing.
expected<proxy_filter_config>
proxy_filter_from_environment(const std::map<std::string, std::string>& env);

/// Puts a proxy_filter configured from `env` in front of `server` (the AM on
/// YARN of application `app_id`), and behind it, when the cluster enables
/// ACLs, the application's view ACL (web/view_acl.hpp). Without its
/// configuration the page stays open, with a warning.
void redirect_to_web_proxy(http_server& server,
                           const std::map<std::string, std::string>& env,
                           const std::string& app_id);

/// "http://host:port" → "host" (no brackets for IPv6 literals); "" if none.
std::string host_of(const std::string& url);

} // namespace tony::http
