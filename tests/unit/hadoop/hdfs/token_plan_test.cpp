// Which tokens a job needs (the NameNodes, the renewer), when an AM with a
// keytab gets the next ones, and the plan as it travels to the AM.

#include <gtest/gtest.h>

#include "hadoop/hdfs/token_plan.hpp"

namespace tony::hdfs {
namespace {

hadoop::configuration secure_conf() {
  hadoop::configuration conf;
  conf.set("fs.defaultFS", "hdfs://NN1.example.com:9000");
  conf.set("yarn.resourcemanager.address", "RM.example.com:8032");
  conf.set("yarn.resourcemanager.principal", "rm/_HOST@EXAMPLE.COM");
  conf.set("dfs.namenode.kerberos.principal", "nn/_HOST@EXAMPLE.COM");
  conf.set("hadoop.rpc.protection", "privacy");
  return conf;
}

TEST(hdfs_token_plan, the_default_filesystem_and_the_jobs_namenodes_each_once) {
  auto plan = plan_tokens(secure_conf(),
                          {"hdfs://nn2.example.com:8020", "hdfs://NN1.example.com:9000",
                           "hdfs://nn3.example.com"});
  ASSERT_TRUE(plan) << plan.error().message();
  ASSERT_EQ(plan->namenodes.size(), 3u);
  EXPECT_EQ(plan->namenodes[0].uri, "hdfs://NN1.example.com:9000");
  EXPECT_EQ(plan->namenodes[0].address, (hadoop::endpoint{"NN1.example.com", 9000}));
  EXPECT_EQ(plan->namenodes[1].address, (hadoop::endpoint{"nn2.example.com", 8020}));
  EXPECT_EQ(plan->namenodes[2].address, (hadoop::endpoint{"nn3.example.com", 8020}));
  EXPECT_EQ(plan->namenodes[0].principal.principal, "nn/_HOST@EXAMPLE.COM");
  EXPECT_EQ(plan->namenodes[0].principal.key, "dfs.namenode.kerberos.principal");
  // The RM renews: its principal with _HOST as Hadoop's Master does.
  EXPECT_EQ(plan->renewer, "rm/rm.example.com@EXAMPLE.COM");
  EXPECT_EQ(plan->protection, hadoop::qop_set{4});
}

TEST(hdfs_token_plan, a_file_default_filesystem_needs_no_token_of_its_own) {
  auto conf = secure_conf();
  conf.set("fs.defaultFS", "file:///");
  auto none = plan_tokens(conf, {});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->namenodes.empty());
  auto extra = plan_tokens(conf, {"hdfs://nn2:8020"});
  ASSERT_TRUE(extra);
  ASSERT_EQ(extra->namenodes.size(), 1u);
}

TEST(hdfs_token_plan, no_rm_principal_means_nobody_could_renew) {
  auto conf = secure_conf();
  conf.set("yarn.resourcemanager.principal", "");
  auto plan = plan_tokens(conf, {});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("yarn.resourcemanager.principal is not set"),
            std::string::npos)
      << plan.error().message();
}

hadoop::configuration ha_conf() {
  auto conf = secure_conf();
  conf.set("fs.defaultFS", "hdfs://prod");
  conf.set("dfs.nameservices", "prod, other");
  conf.set("dfs.ha.namenodes.prod", "nn1, nn2");
  conf.set("dfs.namenode.rpc-address.prod.nn1", "nn1.example.com:8020");
  conf.set("dfs.namenode.rpc-address.prod.nn2", "nn2.example.com:8021");
  return conf;
}

TEST(hdfs_token_plan, an_ha_nameservice_is_planned_with_each_of_its_namenodes) {
  auto plan = plan_tokens(ha_conf(), {"hdfs://prod/", "hdfs://nn2.example.com:8021"});
  ASSERT_TRUE(plan) << plan.error().message();
  ASSERT_EQ(plan->namenodes.size(), 2u); // the nameservice, then nn2 by its address
  auto& ns = plan->namenodes[0];
  EXPECT_EQ(ns.uri, "hdfs://prod");
  EXPECT_EQ(ns.nameservice, "prod");
  EXPECT_EQ(ns.ha_addresses, (std::vector<hadoop::endpoint>{{"nn1.example.com", 8020},
                                                            {"nn2.example.com", 8021}}));
  EXPECT_EQ(ns.address, (hadoop::endpoint{"nn1.example.com", 8020}));
  EXPECT_TRUE(plan->namenodes[1].nameservice.empty());
  EXPECT_EQ(ha_token_service("prod"), "ha-hdfs:prod");
}

TEST(hdfs_token_plan, a_nameservice_without_its_namenodes_says_which_key_is_missing) {
  auto conf = ha_conf();
  conf.set("dfs.namenode.rpc-address.prod.nn2", "");
  auto plan = plan_tokens(conf, {});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("dfs.namenode.rpc-address.prod.nn2 (NameNode nn2's "
                                        "RPC address) is not set"),
            std::string::npos)
      << plan.error().message();
  conf.set("dfs.ha.namenodes.prod", "");
  plan = plan_tokens(conf, {});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("dfs.ha.namenodes.prod is not set"),
            std::string::npos)
      << plan.error().message();
}

obtained_token token_issued(int64_t issue, int64_t max) {
  obtained_token t;
  t.identity.issue_date_ms = issue;
  t.identity.max_date_ms = max;
  return t;
}

TEST(hdfs_token_plan, the_next_tokens_come_at_three_quarters_of_the_first_expiry) {
  using std::chrono::milliseconds;
  // Renew interval 90 s, max lifetime 180 s (the test cluster's): the
  // next round 67.5 s after the tokens were got.
  auto delay =
      refresh_delay({token_issued(1000000, 1180000)}, milliseconds{90000}, 1000000);
  EXPECT_EQ(delay, milliseconds{67500});
  // The earliest expiry of several counts; a max date before the renew
  // interval ends wins.
  delay = refresh_delay({token_issued(1000000, 1180000), token_issued(1000000, 1040000)},
                        milliseconds{90000}, 1000000);
  EXPECT_EQ(delay, milliseconds{30000});
  // Never sooner than the floor, even for tokens that expired already.
  delay = refresh_delay({token_issued(0, 1)}, milliseconds{90000}, 1000000);
  EXPECT_EQ(delay, milliseconds{5000});
}

TEST(hdfs_token_plan, the_renewal_plan_round_trips_as_json) {
  auto tokens = plan_tokens(secure_conf(), {"hdfs://nn2:8020"});
  ASSERT_TRUE(tokens);
  renewal_plan plan{*tokens, "alice@EXAMPLE.COM", "tony.keytab"};
  auto back = renewal_plan_from_json(to_json(plan));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->principal, "alice@EXAMPLE.COM");
  EXPECT_EQ(back->keytab, "tony.keytab");
  EXPECT_EQ(back->tokens.renewer, plan.tokens.renewer);
  EXPECT_EQ(back->tokens.protection, plan.tokens.protection);
  ASSERT_EQ(back->tokens.namenodes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back->tokens.namenodes[i].uri, plan.tokens.namenodes[i].uri);
    EXPECT_EQ(back->tokens.namenodes[i].address, plan.tokens.namenodes[i].address);
    EXPECT_EQ(back->tokens.namenodes[i].principal, plan.tokens.namenodes[i].principal);
  }
}

TEST(hdfs_token_plan, a_nameservice_in_the_renewal_plan_keeps_its_namenodes) {
  auto tokens = plan_tokens(ha_conf(), {});
  ASSERT_TRUE(tokens);
  auto back = renewal_plan_from_json(to_json(renewal_plan{*tokens, "a@B", "k"}));
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->tokens.namenodes.size(), 1u);
  EXPECT_EQ(back->tokens.namenodes[0].nameservice, "prod");
  EXPECT_EQ(back->tokens.namenodes[0].ha_addresses, tokens->namenodes[0].ha_addresses);
  auto broken = renewal_plan_from_json(
      R"({"principal":"a@B","keytab":"k","renewer":"rm/h@B","namenodes":[{"uri":)"
      R"("hdfs://prod","host":"h","port":1,"nameservice":"prod","ha_addresses":[]}]})");
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find("lists no NameNode"), std::string::npos);
}

TEST(hdfs_token_plan, a_malformed_renewal_plan_says_what_is_missing) {
  for (auto text :
       {"", "[]", R"({"principal":"a@B","keytab":"k"})",
        R"({"principal":"a@B","keytab":"k","renewer":"rm/h@B","namenodes":[]})",
        R"({"principal":"a@B","keytab":"k","renewer":"rm/h@B","protection":9,)"
        R"("namenodes":[{"uri":"hdfs://h:1","host":"h","port":1}]})",
        R"({"principal":"a@B","keytab":"k","renewer":"rm/h@B",)"
        R"("namenodes":[{"uri":"hdfs://h:1","host":"h","port":0}]})"}) {
    auto plan = renewal_plan_from_json(text);
    ASSERT_FALSE(plan) << text;
    EXPECT_EQ(plan.error().code(), hadoop::error_code::invalid_input);
    EXPECT_NE(plan.error().message().find("token renewal plan"), std::string::npos);
  }
}

} // namespace
} // namespace tony::hdfs
