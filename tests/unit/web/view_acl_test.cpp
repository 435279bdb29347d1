// YARN's VIEW_APP check on the AM's tracking page (web/view_acl): the RM's
// proxy names the visitor in its `proxy-user` cookie; the owner, the view
// ACL's users and groups and yarn.admin.acl are served, anyone else and a
// request naming nobody get 403; with the cluster's ACLs off, everyone the
// proxy sends is served.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <httplib.h>

#include "web/http_server.hpp"
#include "web/proxy_filter.hpp"
#include "web/view_acl.hpp"

namespace tony::http {
namespace {

view_guard::group_lookup table(std::map<std::string, std::vector<std::string>> groups,
                               int* calls = nullptr) {
  return [groups = std::move(groups), calls](const std::string& user) {
    if (calls)
      ++*calls;
    auto i = groups.find(user);
    return i == groups.end() ? std::vector<std::string>{} : i->second;
  };
}

view_acl_config config(const std::string& view, const std::string& admins) {
  view_acl_config cfg;
  cfg.app_id = "application_1_0001";
  cfg.owner = "alice";
  cfg.view = base::access_list{view};
  cfg.admins = base::access_list{admins};
  return cfg;
}

TEST(view_acl, the_proxy_user_cookie_is_found_and_url_decoded) {
  EXPECT_EQ(proxy_user_of("proxy-user=alice"), "alice");
  EXPECT_EQ(proxy_user_of("checked_application_1=true; proxy-user=svc%40ops ; x=y"),
            "svc@ops");
  EXPECT_EQ(proxy_user_of("proxy-user=\"bob\""), "bob");
  EXPECT_EQ(proxy_user_of("a=b; not-proxy-user=mallory"), "");
  EXPECT_EQ(proxy_user_of(""), "");
}

TEST(view_acl, the_owner_the_acl_its_groups_and_the_admins_are_served) {
  view_guard guard{config("bob ml", "yarn ops"),
                   table({{"carol", {"ml"}}, {"dave", {"ops"}}, {"erin", {"staff"}}})};
  for (auto user : {"alice", "bob", "carol", "yarn", "dave"})
    EXPECT_TRUE(guard.decide(std::string{"proxy-user="} + user).allowed) << user;
  auto refused = guard.decide("proxy-user=erin");
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.user, "erin");
  EXPECT_EQ(
      refused.why,
      "user erin may not view application application_1_0001: only its owner (alice), "
      "its view ACL ('bob ml') and the cluster's admins (yarn.admin.acl) may. The "
      "owner adds viewers with [security] view_acl in job.toml.");
}

TEST(view_acl, a_request_naming_nobody_is_refused) {
  view_guard guard{config("*", "*"), table({})};
  auto d = guard.decide("");
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.why.find("named no user"), std::string::npos);
}

TEST(view_acl, a_star_admits_everyone_without_a_group_lookup) {
  int calls = 0;
  view_guard view_all{config("*", "yarn"), table({}, &calls)};
  EXPECT_TRUE(view_all.decide("proxy-user=zoe").allowed);
  view_guard admin_all{config("", "*"), table({}, &calls)}; // Hadoop's default admin ACL
  EXPECT_TRUE(admin_all.decide("proxy-user=zoe").allowed);
  EXPECT_EQ(calls, 0);
}

TEST(view_acl, groups_are_looked_up_once_per_user_for_five_minutes) {
  int calls = 0;
  view_guard guard{config(" ml", "yarn"), table({{"carol", {"ml"}}}, &calls)};
  auto t0 = view_guard::clock_type::now();
  EXPECT_TRUE(guard.decide("proxy-user=carol", t0).allowed);
  EXPECT_TRUE(guard.decide("proxy-user=carol", t0 + std::chrono::minutes(4)).allowed);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(guard.decide("proxy-user=carol", t0 + std::chrono::minutes(6)).allowed);
  EXPECT_EQ(calls, 2);
}

TEST(view_acl, the_cluster_switch_and_the_acls_come_from_the_ams_environment) {
  std::map<std::string, std::string> env{{"USER", "alice"}, {"TONY_VIEW_ACL", "bob ml"}};
  EXPECT_FALSE(view_acl_from_environment(env, "application_1_0001"));
  env["TONY_ACLS_ENABLED"] = "true";
  auto cfg = view_acl_from_environment(env, "application_1_0001");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->owner, "alice");
  EXPECT_EQ(cfg->view.to_string(), "bob ml");
  EXPECT_TRUE(cfg->admins.everyone()); // yarn.admin.acl's default
  env["TONY_ADMIN_ACL"] = "yarn";
  env.erase("TONY_VIEW_ACL");
  cfg = view_acl_from_environment(env, "application_1_0001");
  ASSERT_TRUE(cfg);
  EXPECT_TRUE(cfg->view.nobody());
  EXPECT_EQ(cfg->admins.to_string(), "yarn");
}

// "the page" on `server`, behind the proxy filter and the view guard that
// `env` (the AM's environment) sets up; its port, 0 when it cannot bind.
int serve_behind_the_filters(http_server& server,
                             const std::map<std::string, std::string>& env) {
  auto port = server.bind("127.0.0.1", 0);
  if (!port)
    return 0;
  redirect_to_web_proxy(server, env, "application_1_0001");
  server.start([](const httplib::Request&, const std::string&, httplib::Response& res) {
    res.set_content("the page", "text/plain");
  });
  return *port;
}

// The AM's page over loopback, the proxy being this machine: the guard
// stands behind the proxy filter on every path, TensorBoard's included.
TEST(view_acl, the_ams_page_answers_403_to_whom_the_acl_does_not_admit) {
  std::map<std::string, std::string> env{
      {"USER", "alice"},
      {"TONY_ACLS_ENABLED", "true"},
      {"TONY_ADMIN_ACL", "yarn"},
      {"TONY_VIEW_ACL", "bob"},
      {"TONY_WEB_PROXIES", "http://127.0.0.1:1"},
      {"APPLICATION_WEB_PROXY_BASE", "/proxy/application_1_0001"}};
  http_server server;
  auto port = serve_behind_the_filters(server, env);
  ASSERT_NE(port, 0);
  httplib::Client client{"127.0.0.1", port};
  for (auto path : {"/", "/api/job", "/tensorboard/"}) {
    auto as = [&](const std::string& cookie) {
      httplib::Headers headers;
      if (!cookie.empty())
        headers.emplace("Cookie", cookie);
      return client.Get(path, headers);
    };
    auto owner = as("proxy-user=alice");
    ASSERT_TRUE(owner) << path;
    EXPECT_EQ(owner->status, 200) << path;
    EXPECT_EQ(as("proxy-user=bob")->status, 200) << path;
    auto other = as("proxy-user=mallory");
    EXPECT_EQ(other->status, 403) << path;
    EXPECT_NE(
        other->body.find("user mallory may not view application application_1_0001"),
        std::string::npos)
        << other->body;
    EXPECT_EQ(as("")->status, 403) << path;
    EXPECT_NE(as("proxy-user=mallory")->body.find("its view ACL ('bob')"),
              std::string::npos);
  }
  server.stop();
}

TEST(view_acl, with_the_clusters_acls_off_the_proxys_visitors_are_served) {
  std::map<std::string, std::string> env{
      {"USER", "alice"},
      {"TONY_WEB_PROXIES", "http://127.0.0.1:1"},
      {"APPLICATION_WEB_PROXY_BASE", "/proxy/application_1_0001"}};
  http_server server;
  auto port = serve_behind_the_filters(server, env);
  ASSERT_NE(port, 0);
  httplib::Client client{"127.0.0.1", port};
  auto res = client.Get("/api/job", {{"Cookie", "proxy-user=mallory"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  server.stop();
}

} // namespace
} // namespace tony::http
