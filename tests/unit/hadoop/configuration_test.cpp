// Hadoop XML configuration: properties, final, ${var} and ${env.X}
// expansion with Hadoop's depth limit, defaults of the YARN addresses, and
// errors that point at file:line.

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "hadoop/configuration.hpp"
#include "hadoop/yarn/protocols.hpp"

namespace tony::hadoop {
namespace {

std::string xml(const std::string& properties) {
  return "<?xml version=\"1.0\"?>\n<configuration>\n" + properties + "</configuration>\n";
}

std::string prop(const std::string& name, const std::string& value) {
  return "  <property><name>" + name + "</name><value>" + value + "</value></property>\n";
}

TEST(hadoop_configuration, reads_properties_and_trims_values) {
  configuration conf;
  ASSERT_TRUE(conf.add_xml(xml(prop("a.b", "  value  \n") + prop("c", "")), "t.xml"));
  EXPECT_EQ(*conf.get("a.b"), "value");
  EXPECT_EQ(*conf.get("c"), "");
  EXPECT_EQ(conf.origin("a.b"), "t.xml:3:3");
  auto missing = conf.get("nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), error_code::not_found);
  EXPECT_EQ(conf.get_or("nope", "fallback"), "fallback");
}

TEST(hadoop_configuration, expands_references_to_other_properties) {
  configuration conf;
  ASSERT_TRUE(conf.add_xml(xml(prop("host", "rm.example") + prop("addr", "${host}:8032") +
                               prop("nested", "http://${addr}/x")),
                           "t.xml"));
  EXPECT_EQ(*conf.get("addr"), "rm.example:8032");
  EXPECT_EQ(*conf.get("nested"), "http://rm.example:8032/x");
}

TEST(hadoop_configuration, expands_environment_variables_with_fallbacks) {
  ::setenv("TONY_CONF_TEST_VAR", "from-env", 1);
  ::setenv("TONY_CONF_TEST_EMPTY", "", 1);
  ::unsetenv("TONY_CONF_TEST_UNSET");
  configuration conf;
  conf.set("a", "${env.TONY_CONF_TEST_VAR}/x");
  conf.set("b", "${env.TONY_CONF_TEST_UNSET:-dflt}");
  conf.set("c", "${env.TONY_CONF_TEST_EMPTY:-dflt}");
  conf.set("d", "[${env.TONY_CONF_TEST_EMPTY-dflt}]");
  EXPECT_EQ(*conf.get("a"), "from-env/x");
  EXPECT_EQ(*conf.get("b"), "dflt");
  EXPECT_EQ(*conf.get("c"), "dflt");
  EXPECT_EQ(*conf.get("d"), "[]");
}

TEST(hadoop_configuration, leaves_unresolvable_references_alone) {
  configuration conf;
  conf.set("a", "x-${no.such.property}-y");
  EXPECT_EQ(*conf.get("a"), "x-${no.such.property}-y");
  conf.set("b", "${ not a reference }");
  EXPECT_EQ(*conf.get("b"), "${ not a reference }");
}

TEST(hadoop_configuration, cycles_hit_the_depth_limit_with_an_error) {
  configuration conf;
  conf.set("a", "1${b}");
  conf.set("b", "2${a}");
  auto x = conf.get("a");
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error().code(), error_code::invalid_input);
  EXPECT_NE(x.error().message().find("depth"), std::string::npos);
  EXPECT_NE(x.error().message().find("a (set())"), std::string::npos);
}

TEST(hadoop_configuration, a_self_reference_stays_literal) {
  configuration conf;
  conf.set("a", "${a}");
  EXPECT_EQ(*conf.get("a"), "${a}");
}

TEST(hadoop_configuration, final_values_win_over_later_files) {
  configuration conf;
  ASSERT_TRUE(conf.add_xml(xml("<property><name>k</name><value>one</value>"
                               "<final>true</final></property>\n"),
                           "core-site.xml"));
  ASSERT_TRUE(conf.add_xml(xml(prop("k", "two")), "yarn-site.xml"));
  EXPECT_EQ(*conf.get("k"), "one");
}

TEST(hadoop_configuration, yarn_address_defaults_follow_the_rm_hostname) {
  configuration conf;
  EXPECT_EQ(*conf.get("yarn.resourcemanager.address"), "0.0.0.0:8032");
  EXPECT_EQ(*conf.get("fs.defaultFS"), "file:///");
  conf.set("yarn.resourcemanager.hostname", "rm.example");
  auto rm = yarn::rm_address(conf);
  ASSERT_TRUE(rm);
  EXPECT_EQ(to_string(*rm), "rm.example:8032");
  EXPECT_EQ(to_string(*yarn::scheduler_address(conf)), "rm.example:8030");
  EXPECT_EQ(to_string(*yarn::webapp_address(conf)), "rm.example:8088");
  conf.set("yarn.resourcemanager.address", "127.0.0.1:18032");
  EXPECT_EQ(to_string(*yarn::rm_address(conf)), "127.0.0.1:18032");
}

// WebAppUtils.getProxyHostsAndPortsForAmFilter, with the scheme: the hosts
// an AM's page lets through (web/proxy_filter.hpp). IP literals, so
// nothing asks DNS.
TEST(hadoop_configuration, web_proxies_follow_the_rm_web_address) {
  configuration conf;
  conf.set("yarn.resourcemanager.hostname", "10.1.2.3");
  EXPECT_EQ(yarn::web_proxies(conf), std::vector<std::string>{"http://10.1.2.3:8088"});
  conf.set("yarn.resourcemanager.webapp.address", "10.1.2.4:18088");
  EXPECT_EQ(yarn::web_proxies(conf), std::vector<std::string>{"http://10.1.2.4:18088"});
  conf.set("yarn.http.policy", "HTTPS_ONLY");
  EXPECT_EQ(yarn::web_proxies(conf), std::vector<std::string>{"https://10.1.2.3:8090"});
}

TEST(hadoop_configuration, a_separate_web_proxy_wins_over_the_rms) {
  configuration conf;
  conf.set("yarn.web-proxy.address", "proxy.example:9046");
  conf.set("yarn.resourcemanager.ha.enabled", "true");
  conf.set("yarn.resourcemanager.ha.rm-ids", "rm1,rm2");
  EXPECT_EQ(yarn::web_proxies(conf),
            std::vector<std::string>{"http://proxy.example:9046"});
}

TEST(hadoop_configuration, web_proxies_under_rm_ha_are_every_rm) {
  configuration conf;
  conf.set("yarn.resourcemanager.ha.enabled", "true");
  conf.set("yarn.resourcemanager.ha.rm-ids", "rm1, rm2");
  conf.set("yarn.resourcemanager.webapp.address.rm1", "10.0.0.5:5000");
  conf.set("yarn.resourcemanager.hostname.rm2", "10.0.0.6");
  EXPECT_EQ(yarn::web_proxies(conf),
            (std::vector<std::string>{"http://10.0.0.5:5000", "http://10.0.0.6:8088"}));
}

// Hadoop's getResolvedAddress: a wildcard or loopback web address names this
// machine, as the RM's own proxy URLs do (and its proxy connects from there).
TEST(hadoop_configuration, a_wildcard_or_loopback_web_address_is_this_machine) {
  auto here = yarn::local_canonical_hostname();
  ASSERT_FALSE(here.empty());
  configuration conf;
  conf.set("yarn.resourcemanager.webapp.address", "0.0.0.0:8088");
  EXPECT_EQ(yarn::web_proxies(conf),
            std::vector<std::string>{"http://" + here + ":8088"});
  conf.set("yarn.resourcemanager.webapp.address", "127.0.12.1:8088");
  EXPECT_EQ(yarn::web_proxies(conf),
            std::vector<std::string>{"http://" + here + ":8088"});
}

TEST(hadoop_configuration, a_bad_address_names_the_key_and_its_file) {
  configuration conf;
  ASSERT_TRUE(conf.add_xml(xml(prop("yarn.resourcemanager.address", "rm:notaport")),
                           "yarn-site.xml"));
  auto rm = yarn::rm_address(conf);
  ASSERT_FALSE(rm);
  EXPECT_NE(rm.error().message().find("yarn.resourcemanager.address (yarn-site.xml:3:3)"),
            std::string::npos)
      << rm.error().message();
}

TEST(hadoop_configuration, malformed_xml_reports_file_line_and_column) {
  configuration conf;
  auto bad =
      conf.add_xml("<configuration>\n  <property><name>x</name>\n  <value>1</valu>\n"
                   "</property></configuration>",
                   "yarn-site.xml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), error_code::invalid_input);
  EXPECT_EQ(bad.error().message().rfind("yarn-site.xml:3:", 0), 0u)
      << bad.error().message();
  EXPECT_NE(bad.error().message().find("malformed XML"), std::string::npos);
}

TEST(hadoop_configuration, rejects_a_wrong_root_and_nameless_properties) {
  configuration conf;
  auto root = conf.add_xml("<settings/>", "x.xml");
  ASSERT_FALSE(root);
  EXPECT_NE(root.error().message().find("<configuration>"), std::string::npos);
  auto nameless = conf.add_xml(xml("<property><value>1</value></property>\n"), "x.xml");
  ASSERT_FALSE(nameless);
  EXPECT_NE(nameless.error().message().find("x.xml:3"), std::string::npos);
}

TEST(hadoop_configuration, attribute_style_properties_are_accepted) {
  configuration conf;
  ASSERT_TRUE(conf.add_xml(xml("<property name=\"k\" value=\"v\"/>\n"), "x.xml"));
  EXPECT_EQ(*conf.get("k"), "v");
}

TEST(hadoop_configuration, loads_a_directory_and_the_environment) {
  char dir[] = "/tmp/tony-conf-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string d = dir;
  std::ofstream{d + "/core-site.xml"} << xml(prop("fs.defaultFS", "hdfs://nn:8020"));
  std::ofstream{d + "/yarn-site.xml"}
      << xml(prop("yarn.resourcemanager.hostname", "127.0.0.1"));
  auto conf = configuration::load_dir(d);
  ASSERT_TRUE(conf) << conf.error().message();
  EXPECT_EQ(*conf->get("fs.defaultFS"), "hdfs://nn:8020");
  EXPECT_EQ(*conf->get("yarn.resourcemanager.address"), "127.0.0.1:8032");

  ::setenv("HADOOP_CONF_DIR", dir, 1);
  auto env = configuration::from_environment();
  ASSERT_TRUE(env);
  EXPECT_EQ(*env->get("yarn.resourcemanager.scheduler.address"), "127.0.0.1:8030");
  ::setenv("HADOOP_CONF_DIR", "/nonexistent/conf", 1);
  auto missing = configuration::from_environment();
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("HADOOP_CONF_DIR=/nonexistent/conf"),
            std::string::npos);
  ::unsetenv("HADOOP_CONF_DIR");

  std::ofstream{d + "/yarn-site.xml"} << "<configuration><property>";
  auto broken = configuration::load_dir(d);
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find(d + "/yarn-site.xml:1:"), std::string::npos)
      << broken.error().message();
  ::unlink((d + "/core-site.xml").c_str());
  ::unlink((d + "/yarn-site.xml").c_str());
  ::rmdir(dir);
}

// HDFS's clients (staging, tony-history) read hdfs-site.xml beside the
// directory's other files; a directory without one is no error.
TEST(hadoop_configuration, hdfs_site_is_added_from_the_loaded_directory) {
  char dir[] = "/tmp/tony-conf-hdfs-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string d = dir;
  std::ofstream{d + "/core-site.xml"} << xml(prop("fs.defaultFS", "hdfs://nn:8020"));
  auto conf = configuration::load_dir(d);
  ASSERT_TRUE(conf);
  EXPECT_TRUE(conf->add_hdfs_site());
  EXPECT_FALSE(conf->get("dfs.http.policy"));
  std::ofstream{d + "/hdfs-site.xml"} << xml(prop("dfs.http.policy", "HTTPS_ONLY"));
  EXPECT_TRUE(conf->add_hdfs_site());
  EXPECT_EQ(*conf->get("dfs.http.policy"), "HTTPS_ONLY");
  std::ofstream{d + "/hdfs-site.xml"} << "<configuration><property>";
  auto broken = conf->add_hdfs_site();
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find(d + "/hdfs-site.xml:1:"), std::string::npos)
      << broken.error().message();
  EXPECT_TRUE(configuration{}.add_hdfs_site()) << "nothing loaded: nothing to add";
  ::unlink((d + "/core-site.xml").c_str());
  ::unlink((d + "/hdfs-site.xml").c_str());
  ::rmdir(dir);
}

TEST(hadoop_endpoint, parses_host_port_forms) {
  auto a = parse_endpoint("127.0.0.1:8032");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8032);
  auto b = parse_endpoint(" [::1]:8030 ");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(to_string(*b), "[::1]:8030");
  auto c = parse_endpoint("rm", 8032);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->port, 8032);
  EXPECT_FALSE(parse_endpoint("rm"));
  EXPECT_FALSE(parse_endpoint(":8032"));
  EXPECT_FALSE(parse_endpoint("rm:0"));
  EXPECT_FALSE(parse_endpoint("rm:65536"));
  EXPECT_FALSE(parse_endpoint("rm:80x"));
  EXPECT_FALSE(parse_endpoint("::1:80"));
  EXPECT_FALSE(parse_endpoint(""));
}

} // namespace
} // namespace tony::hadoop
