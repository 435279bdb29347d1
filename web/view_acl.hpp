#pragma once

// YARN's VIEW_APP check on the AM's tracking page, as MapReduce's AM and
// Spark's UI apply it behind the RM's web proxy: with the cluster's ACLs on
// (yarn.acl.enable), a request is served only for a user that the
// application's view ACL, its ownership or yarn.admin.acl admits.
//
//   RM web proxy ──(authenticated the visitor: SPNEGO on a secure cluster)──▶
//   AM: proxy_filter (only the proxy may ask) ──▶ view_guard ──▶ the page
//
// The proxy names the visitor in a cookie it sets itself, `proxy-user`
// (URL-encoded short name; WebAppProxyServlet, Hadoop 2.x to 3.4), and it
// passes none of the visitor's own cookies on, so only a request that came
// through the proxy carries one. The guard runs after proxy_filter, which
// turns everyone else away. A request without the cookie (the RM's web has no
// authentication) is refused: there is no one to admit.
//
// Groups are the visitor's groups on the AM's node (getgrouplist, as
// Hadoop's default ShellBasedUnixGroupsMapping resolves them), kept for 5
// minutes as Hadoop keeps them (hadoop.security.groups.cache.secs).

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>

#include "base/access_list.hpp"

namespace tony::http {

struct view_acl_config {
  std::string app_id;
  std::string owner;        // the application's user (USER of the AM)
  base::access_list view;   // the application's VIEW_APP ACL
  base::access_list admins; // yarn.admin.acl
};

/// The groups of users as Hadoop's default mapping resolves them, each kept
/// 5 minutes (hadoop.security.groups.cache.secs). Thread-safe.
class group_cache {
public:
  using group_lookup = std::function<std::vector<std::string>(const std::string& user)>;
  using clock_type = std::chrono::steady_clock;

  explicit group_cache(group_lookup lookup = base::local_groups_of);

  std::vector<std::string> of(const std::string& user,
                              clock_type::time_point now = clock_type::now());

private:
  group_lookup lookup_;
  std::mutex mutex_; // guards cache_; never held across a lookup
  std::map<std::string, std::pair<clock_type::time_point, std::vector<std::string>>>
      cache_;
};

struct view_decision {
  bool allowed = false;
  std::string user; // who asked; empty: nobody
  std::string why;  // refused: what to tell the visitor
};

/// Whether `user` (authenticated; not empty) may view the application of
/// `cfg`: its owner, its view ACL or the admins; `why` names who may.
view_decision
decide_view(const view_acl_config& cfg, const std::string& user, group_cache& groups,
            group_cache::clock_type::time_point now = group_cache::clock_type::now());

class view_guard {
public:
  using group_lookup = group_cache::group_lookup;
  using clock_type = group_cache::clock_type;
  using decision = view_decision;

  explicit view_guard(view_acl_config cfg, group_lookup groups = base::local_groups_of);

  /// The decision for a request whose Cookie header is `cookies`.
  decision decide(const std::string& cookies,
                  clock_type::time_point now = clock_type::now());

  /// As an http_server::filter: answers 403 and returns true when refused.
  bool operator()(const httplib::Request& req, httplib::Response& res);

private:
  view_acl_config cfg_;
  group_cache groups_;
};

/// The user the RM's proxy named in a Cookie header ("a=b; proxy-user=x"),
/// URL-decoded; empty when there is none.
std::string proxy_user_of(const std::string& cookies);

/// The guard's configuration from the AM's environment (TONY_ACLS_ENABLED,
/// TONY_VIEW_ACL, TONY_ADMIN_ACL, USER); nullopt when the cluster's ACLs are
/// off, and then every visitor the proxy sends is served, as YARN does.
std::optional<view_acl_config>
view_acl_from_environment(const std::map<std::string, std::string>& env,
                          const std::string& app_id);

} // namespace tony::http
