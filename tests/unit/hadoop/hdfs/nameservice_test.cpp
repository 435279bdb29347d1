// Which hdfs:// authorities are HA nameservices, and their NameNodes'
// addresses as the client configuration names them.

#include <gtest/gtest.h>

#include "hadoop/hdfs/nameservice.hpp"

namespace tony::hdfs {
namespace {

// A client configuration as an HA cluster's (doc/operations.md, HDFS HA).
hadoop::configuration ha_conf() {
  hadoop::configuration conf;
  conf.set("dfs.nameservices", " prod , other");
  conf.set("dfs.ha.namenodes.prod", "nn1, nn2");
  conf.set("dfs.namenode.rpc-address.prod.nn1", "a.example:8020");
  conf.set("dfs.namenode.rpc-address.prod.nn2", "b.example");
  conf.set("dfs.namenode.http-address.prod.nn1", "0.0.0.0:9870");
  conf.set("dfs.namenode.http-address.prod.nn2", "b.example:9870");
  conf.set("dfs.namenode.https-address.prod.nn1", "a.example:9871");
  conf.set("dfs.namenode.https-address.prod.nn2", "b.example:9871");
  return conf;
}

std::vector<std::string> addresses(const nameservice_namenodes& found) {
  std::vector<std::string> out;
  for (auto& nn : found.namenodes)
    out.push_back(nn.id + "=" + nn.address);
  return out;
}

TEST(hdfs_nameservice, a_listed_name_without_a_port_is_a_nameservice) {
  auto conf = ha_conf();
  EXPECT_TRUE(is_nameservice(conf, "prod"));
  EXPECT_TRUE(is_nameservice(conf, "other"));
  // With a port it is a host called prod, as in Hadoop.
  EXPECT_FALSE(is_nameservice(conf, "prod:8020"));
  EXPECT_FALSE(is_nameservice(conf, "nn.example"));
  EXPECT_FALSE(is_nameservice(conf, "pro"));
  EXPECT_FALSE(is_nameservice(hadoop::configuration{}, "prod"));
}

TEST(hdfs_nameservice, each_kind_of_address_comes_in_the_order_of_the_ids) {
  auto conf = ha_conf();
  auto rpc = namenodes_of(conf, "prod", "rpc-address");
  ASSERT_FALSE(rpc.unset) << rpc.unset->key;
  // As written: no default port, no host for the wildcard.
  EXPECT_EQ(addresses(rpc),
            (std::vector<std::string>{"nn1=a.example:8020", "nn2=b.example"}));
  EXPECT_EQ(rpc.namenodes[1].key, "dfs.namenode.rpc-address.prod.nn2");
  auto http = namenodes_of(conf, "prod", "http-address");
  ASSERT_FALSE(http.unset) << http.unset->key;
  EXPECT_EQ(addresses(http),
            (std::vector<std::string>{"nn1=0.0.0.0:9870", "nn2=b.example:9870"}));
  conf.set("dfs.ha.namenodes.prod", " nn2 ,, nn1,");
  auto https = namenodes_of(conf, "prod", "https-address");
  ASSERT_FALSE(https.unset) << https.unset->key;
  EXPECT_EQ(addresses(https),
            (std::vector<std::string>{"nn2=b.example:9871", "nn1=a.example:9871"}));
  EXPECT_EQ(https.namenodes[0].key, "dfs.namenode.https-address.prod.nn2");
}

TEST(hdfs_nameservice, a_missing_key_is_named) {
  auto conf = ha_conf();
  auto found = namenodes_of(conf, "other", "rpc-address");
  ASSERT_TRUE(found.unset);
  EXPECT_EQ(found.unset->key, "dfs.ha.namenodes.other");
  EXPECT_EQ(found.unset->id, "");
  EXPECT_EQ(found.unset->named("RPC address"), "dfs.ha.namenodes.other");
  EXPECT_TRUE(found.namenodes.empty());
  // Ids that are all blanks are none.
  conf.set("dfs.ha.namenodes.other", " , ");
  found = namenodes_of(conf, "other", "rpc-address");
  ASSERT_TRUE(found.unset);
  EXPECT_EQ(found.unset->key, "dfs.ha.namenodes.other");
  // An empty value is as good as none; the first NameNode lacking one is named.
  conf.set("dfs.ha.namenodes.other", "n1,n2,n3");
  conf.set("dfs.namenode.http-address.other.n1", "c:1");
  conf.set("dfs.namenode.http-address.other.n2", "");
  found = namenodes_of(conf, "other", "http-address");
  ASSERT_TRUE(found.unset);
  EXPECT_EQ(found.unset->key, "dfs.namenode.http-address.other.n2");
  EXPECT_EQ(found.unset->id, "n2");
  EXPECT_EQ(found.unset->named("WebHDFS address"),
            "dfs.namenode.http-address.other.n2 (NameNode n2's WebHDFS address)");
  EXPECT_TRUE(found.namenodes.empty());
}

} // namespace
} // namespace tony::hdfs
