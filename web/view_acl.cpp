#include "web/view_acl.hpp"

#include <utility>

#include "base/text.hpp"
#include "runtime/yarn/am_env.hpp"

namespace tony::http {

namespace {

constexpr std::chrono::minutes groups_kept{5};
constexpr size_t groups_cache_limit = 4096;

std::string get(const std::map<std::string, std::string>& env, const char* key) {
  auto i = env.find(key);
  return i == env.end() ? std::string{} : i->second;
}

} // namespace

std::string proxy_user_of(const std::string& cookies) {
  size_t at = 0;
  while (at < cookies.size()) {
    auto end = cookies.find(';', at);
    if (end == std::string::npos)
      end = cookies.size();
    auto pair = base::trim(std::string_view{cookies}.substr(at, end - at));
    auto eq = pair.find('=');
    if (eq != std::string::npos && base::trim(pair.substr(0, eq)) == "proxy-user") {
      auto value = base::trim(pair.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
      return httplib::detail::decode_url(value, true);
    }
    at = end + 1;
  }
  return {};
}

group_cache::group_cache(group_lookup lookup)
    : lookup_(std::move(lookup)) {}

std::vector<std::string> group_cache::of(const std::string& user,
                                         clock_type::time_point now) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto i = cache_.find(user);
    if (i != cache_.end() && now - i->second.first < groups_kept)
      return i->second.second;
  }
  auto groups = lookup_(user);
  std::lock_guard<std::mutex> guard{mutex_};
  if (cache_.size() >= groups_cache_limit)
    cache_.clear();
  cache_[user] = {now, groups};
  return groups;
}

view_decision decide_view(const view_acl_config& cfg, const std::string& user,
                          group_cache& groups, group_cache::clock_type::time_point now) {
  view_decision d;
  d.user = user;
  if (user == cfg.owner) {
    d.allowed = true;
    return d;
  }
  auto of_user = cfg.view.everyone() || cfg.admins.everyone() ? std::vector<std::string>{}
                                                              : groups.of(user, now);
  if (cfg.view.admits(user, of_user) || cfg.admins.admits(user, of_user)) {
    d.allowed = true;
    return d;
  }
  d.why = "user " + user + " may not view application " + cfg.app_id +
          ": only its owner (" + cfg.owner + "), " +
          (cfg.view.nobody() ? std::string{"its view ACL (empty)"}
                             : "its view ACL ('" + cfg.view.to_string() + "')") +
          " and the cluster's admins (yarn.admin.acl) may. The owner adds viewers with "
          "[security] view_acl in job.toml.";
  return d;
}

view_guard::view_guard(view_acl_config cfg, group_lookup groups)
    : cfg_(std::move(cfg))
    , groups_(std::move(groups)) {}

view_guard::decision view_guard::decide(const std::string& cookies,
                                        clock_type::time_point now) {
  auto user = proxy_user_of(cookies);
  if (user.empty()) {
    decision d;
    d.why = "the ResourceManager's web proxy named no user for this request (its web "
            "pages have no authentication: hadoop.http.authentication.type), and "
            "application " +
            cfg_.app_id +
            " is shown only to its owner, its view ACL and the cluster's admins";
    return d;
  }
  return decide_view(cfg_, user, groups_, now);
}

bool view_guard::operator()(const httplib::Request& req, httplib::Response& res) {
  auto d = decide(req.get_header_value("Cookie"));
  if (d.allowed)
    return false;
  res.status = 403;
  res.set_content("tony: " + d.why + "\n", "text/plain; charset=utf-8");
  return true;
}

std::optional<view_acl_config>
view_acl_from_environment(const std::map<std::string, std::string>& env,
                          const std::string& app_id) {
  if (base::lower(get(env, yarn_env::acls_enabled)) != "true")
    return std::nullopt;
  view_acl_config cfg;
  cfg.app_id = app_id;
  cfg.owner = get(env, "USER");
  cfg.view = base::access_list{get(env, yarn_env::view_acl)};
  auto admins = env.find(yarn_env::admin_acl);
  cfg.admins = base::access_list{admins == env.end() ? "*" : admins->second};
  return cfg;
}

} // namespace tony::http
