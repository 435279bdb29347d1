// Hadoop's AmIpFilter rule as web/proxy_filter applies it: the
// proxy's addresses pass, everyone else is redirected to the proxy with
// "/redirect" marking the path, query kept; HA picks the proxy that answers.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>

#include "web/proxy_filter.hpp"

namespace tony::http {
namespace {

proxy_filter::resolver fixed(std::map<std::string, std::vector<std::string>> table,
                             int* calls = nullptr) {
  return [table = std::move(table), calls](const std::string& host) {
    if (calls)
      ++*calls;
    auto i = table.find(host);
    return i == table.end() ? std::vector<std::string>{} : i->second;
  };
}

proxy_filter one_proxy() {
  proxy_filter_config cfg;
  cfg.proxies = {"http://rm.example:8088"};
  cfg.proxy_base = "/proxy/application_1_0001";
  return proxy_filter{cfg, fixed({{"rm.example", {"10.0.0.5", "fd00::5"}}}),
                      [](const std::string&) { return true; }};
}

TEST(proxy_filter, the_proxy_host_passes) {
  auto f = one_proxy();
  EXPECT_EQ(f.decide("10.0.0.5", "/api/job").what, proxy_filter::verdict::pass);
  EXPECT_EQ(f.decide("fd00::5", "/").what, proxy_filter::verdict::pass);
}

TEST(proxy_filter, anyone_else_goes_to_the_proxy_with_a_redirect_mark) {
  auto f = one_proxy();
  auto d = f.decide("10.0.0.9", "/api/job");
  EXPECT_EQ(d.what, proxy_filter::verdict::redirect);
  EXPECT_EQ(d.location,
            "http://rm.example:8088/proxy/redirect/application_1_0001/api/job");
  d = f.decide("127.0.0.1", "/");
  EXPECT_EQ(d.location, "http://rm.example:8088/proxy/redirect/application_1_0001/");
}

TEST(proxy_filter, the_query_string_is_kept) {
  auto f = one_proxy();
  auto d = f.decide("10.0.0.9", "/tensorboard/data/runs?x=1&y=2");
  EXPECT_EQ(d.location, "http://rm.example:8088/proxy/redirect/application_1_0001/"
                        "tensorboard/data/runs?x=1&y=2");
  d = f.decide("10.0.0.9", "/page?");
  EXPECT_EQ(d.location, "http://rm.example:8088/proxy/redirect/application_1_0001/page");
}

TEST(proxy_filter, a_proxy_host_named_proxy_keeps_its_name) {
  proxy_filter_config cfg;
  cfg.proxies = {"http://proxyhost:8088"};
  cfg.proxy_base = "/proxy/application_1_0001";
  proxy_filter f{cfg, fixed({{"proxyhost", {"10.0.0.5"}}})};
  EXPECT_EQ(f.decide("10.0.0.9", "/x").location,
            "http://proxyhost:8088/proxy/redirect/application_1_0001/x");
}

TEST(proxy_filter, with_rm_ha_the_redirect_goes_to_the_proxy_that_answers) {
  proxy_filter_config cfg;
  cfg.proxies = {"http://rm1:8088", "http://rm2:8088"};
  cfg.proxy_base = "/proxy/application_1_0001";
  std::vector<std::string> probed;
  proxy_filter f{cfg, fixed({{"rm1", {"10.0.0.1"}}, {"rm2", {"10.0.0.2"}}}),
                 [&](const std::string& url) {
                   probed.push_back(url);
                   return url.find("rm2") != std::string::npos;
                 }};
  EXPECT_EQ(f.decide("10.0.0.2", "/").what, proxy_filter::verdict::pass);
  EXPECT_EQ(f.decide("10.0.0.1", "/").what, proxy_filter::verdict::pass);
  auto d = f.decide("10.0.0.9", "/api/job");
  EXPECT_EQ(d.location, "http://rm2:8088/proxy/redirect/application_1_0001/api/job");
  EXPECT_EQ(probed,
            (std::vector<std::string>{"http://rm1:8088/proxy/application_1_0001",
                                      "http://rm2:8088/proxy/application_1_0001"}));
  // Kept for a while: no probe per redirect.
  f.decide("10.0.0.9", "/");
  EXPECT_EQ(probed.size(), 2u);
}

TEST(proxy_filter, no_resolvable_proxy_is_503_not_an_open_door) {
  proxy_filter_config cfg;
  cfg.proxies = {"http://gone.example:8088"};
  cfg.proxy_base = "/proxy/application_1_0001";
  proxy_filter f{cfg, fixed({})};
  EXPECT_EQ(f.decide("10.0.0.9", "/").what, proxy_filter::verdict::unavailable);
  httplib::Request req;
  req.remote_addr = "10.0.0.9";
  req.target = "/";
  httplib::Response res;
  EXPECT_TRUE(f(req, res));
  EXPECT_EQ(res.status, 503);
}

TEST(proxy_filter, addresses_are_resolved_once_per_refresh_interval) {
  proxy_filter_config cfg;
  cfg.proxies = {"http://rm.example:8088"};
  cfg.proxy_base = "/proxy/application_1_0001";
  int calls = 0;
  proxy_filter f{cfg, fixed({{"rm.example", {"10.0.0.5"}}}, &calls)};
  for (int i = 0; i < 5; ++i)
    f.decide("10.0.0.5", "/");
  EXPECT_EQ(calls, 1);
}

TEST(proxy_filter, answers_a_redirect_as_hadoops_proxy_utils_do) {
  auto f = one_proxy();
  httplib::Request req;
  req.remote_addr = "192.168.1.20";
  req.target = "/api/job";
  httplib::Response res;
  EXPECT_TRUE(f(req, res));
  EXPECT_EQ(res.status, 302);
  EXPECT_EQ(res.get_header_value("Location"),
            "http://rm.example:8088/proxy/redirect/application_1_0001/api/job");
  EXPECT_NE(res.body.find("Content has moved"), std::string::npos);
  req.remote_addr = "10.0.0.5";
  httplib::Response passed;
  EXPECT_FALSE(f(req, passed));
}

TEST(proxy_filter, configuration_from_the_am_environment) {
  auto cfg = proxy_filter_from_environment(
      {{"TONY_WEB_PROXIES", "http://rm1:8088,http://rm2:8088"},
       {"APPLICATION_WEB_PROXY_BASE", "/proxy/application_1_0001"}});
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->proxies.size(), 2u);
  EXPECT_EQ(cfg->proxy_base, "/proxy/application_1_0001");
  EXPECT_FALSE(proxy_filter_from_environment(
      {{"APPLICATION_WEB_PROXY_BASE", "/proxy/application_1_0001"}}));
  EXPECT_FALSE(proxy_filter_from_environment({{"TONY_WEB_PROXIES", "http://rm:8088"}}));
}

// On an RM-HA cluster the probe of a proxy is a request to the proxy, which
// asks this page: the proxy's own request passes while a probe is under way
// (the filter held its lock across the probe once, stalling every request).
TEST(proxy_filter, a_probe_under_way_does_not_hold_up_the_proxys_requests) {
  proxy_filter_config cfg;
  cfg.proxies = {"http://rm1:8088", "http://rm2:8088"};
  cfg.proxy_base = "/proxy/application_1_0001";
  std::promise<void> probing;
  std::promise<void> release;
  auto released = release.get_future().share();
  proxy_filter f{cfg, fixed({{"rm1", {"10.0.0.1"}}, {"rm2", {"10.0.0.2"}}}),
                 [&, first = true](const std::string&) mutable {
                   if (first) {
                     first = false;
                     probing.set_value();
                   }
                   released.wait();
                   return true;
                 }};
  auto visitor =
      std::async(std::launch::async, [&] { return f.decide("10.0.0.9", "/"); });
  probing.get_future().wait();
  auto from_proxy =
      std::async(std::launch::async, [&] { return f.decide("10.0.0.1", "/api/job"); });
  auto ready = from_proxy.wait_for(std::chrono::seconds(2));
  release.set_value();
  ASSERT_EQ(ready, std::future_status::ready) << "the proxy's request waited for a probe";
  EXPECT_EQ(from_proxy.get().what, proxy_filter::verdict::pass);
  EXPECT_EQ(visitor.get().what, proxy_filter::verdict::redirect);
}

} // namespace
} // namespace tony::http
