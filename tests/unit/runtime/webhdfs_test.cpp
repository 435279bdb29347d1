// How tony's WebHDFS calls authenticate (the parameter each URL carries)
// and which endpoint a configuration names (HTTP or HTTPS-only clusters).

#include <gtest/gtest.h>

#include "hadoop/webhdfs.hpp"

namespace tony::webhdfs {
namespace {

TEST(webhdfs, simple_calls_name_the_user) {
  namenode_http nn{"nn:9870", {}};
  nn.auth.user = "alice";
  EXPECT_EQ(op_url(nn, "/user/alice/x", "GETFILESTATUS"),
            "http://nn:9870/webhdfs/v1/user/alice/x?op=GETFILESTATUS&user.name=alice");
}

TEST(webhdfs, a_delegation_token_replaces_every_other_parameter) {
  namenode_http nn{"https://nn:9871", {}};
  nn.auth.user = "alice";
  nn.auth.delegation = "HAAEcm9vdA";
  EXPECT_EQ(op_url(nn, "/tmp", "LISTSTATUS"),
            "https://nn:9871/webhdfs/v1/tmp?op=LISTSTATUS&delegation=HAAEcm9vdA");
}

TEST(webhdfs, a_bare_address_is_http) {
  EXPECT_EQ(base_url("nn:9870"), "http://nn:9870");
  EXPECT_EQ(base_url("https://nn:9871"), "https://nn:9871");
}

TEST(webhdfs, an_https_only_cluster_is_reached_at_its_https_address) {
  hadoop::configuration conf;
  EXPECT_EQ(namenode_address(conf, "nn"), "nn:9870");
  conf.set("dfs.namenode.http-address", "0.0.0.0:50070");
  EXPECT_EQ(namenode_address(conf, "nn"), "nn:50070");
  conf.set("dfs.http.policy", "HTTPS_ONLY");
  EXPECT_EQ(namenode_address(conf, "nn"), "https://nn:9871");
  conf.set("dfs.namenode.https-address", "0.0.0.0:50470");
  EXPECT_EQ(namenode_address(conf, "nn"), "https://nn:50470");
  conf.set("dfs.http.policy", "HTTP_AND_HTTPS");
  EXPECT_EQ(namenode_address(conf, "nn"), "nn:50070");
}

TEST(webhdfs, an_html_401_says_what_it_wants) {
  auto text =
      remote_message("<html><head><title>Error 401 Authentication required"
                     "</title></head><body><h2>HTTP ERROR 401</h2></body></html>");
  EXPECT_NE(text.find("Kerberos (SPNEGO) or a delegation token"), std::string::npos)
      << text;
  EXPECT_EQ(remote_message(R"({"RemoteException":{"message":"File /x not found."}})"),
            "File /x not found.");
}

} // namespace
} // namespace tony::webhdfs
