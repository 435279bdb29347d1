// Where tony-submit puts a job's files (submit/job_locations.hpp) on an HA
// nameservice and through viewfs://, and the WebHDFS address of `files`
// on a nameservice (submit/shipping.hpp).

#include "submit/job_locations.hpp"

#include <gtest/gtest.h>

#include "hadoop/configuration.hpp"
#include "messages/error.hpp"
#include "submit/shipping.hpp"

using namespace tony;

namespace {

hadoop::configuration nameservice(bool with_provider = true) {
  hadoop::configuration conf;
  conf.set("fs.defaultFS", "hdfs://prod");
  conf.set("dfs.nameservices", "prod");
  conf.set("dfs.ha.namenodes.prod", "nn1,nn2");
  conf.set("dfs.namenode.http-address.prod.nn1", "a.example:9870");
  conf.set("dfs.namenode.http-address.prod.nn2", "b.example:9870");
  if (with_provider)
    conf.set("dfs.client.failover.proxy.provider.prod",
             "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider");
  return conf;
}

} // namespace

TEST(job_locations, a_nameservice_gives_every_namenode_to_staging_and_history) {
  job_spec job;
  auto got = locate_job(job, nameservice(), "application_1_0001", "alice");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(got->staging_uri, "hdfs://prod/user/alice/.tony/application_1_0001");
  EXPECT_EQ(got->staging_webhdfs, "a.example:9870,b.example:9870");
  EXPECT_EQ(got->history_uri, "hdfs://prod/user/alice/.tony/history");
  EXPECT_EQ(got->history_webhdfs, "a.example:9870,b.example:9870");
}

TEST(job_locations, a_nameservice_without_its_keys_is_refused_naming_the_key) {
  job_spec job;
  auto got = locate_job(job, nameservice(false), "application_1_0001", "alice");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), errc::invalid_config);
  EXPECT_NE(describe(got.error()).find("dfs.client.failover.proxy.provider.prod"),
            std::string::npos)
      << describe(got.error());
}

TEST(job_locations, a_single_namenode_keeps_its_one_address) {
  hadoop::configuration conf;
  conf.set("fs.defaultFS", "hdfs://nn.example:8020");
  conf.set("dfs.namenode.http-address", "0.0.0.0:50070");
  job_spec job;
  auto got = locate_job(job, conf, "application_1_0001", "alice");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(got->staging_webhdfs, "nn.example:50070");
}

TEST(job_locations, viewfs_dirs_are_their_mount_links_and_an_unlinked_one_is_refused) {
  auto conf = nameservice();
  conf.set("fs.viewfs.mounttable.c1.link./jobs", "hdfs://prod/shared/jobs");
  job_spec job;
  job.cluster.staging_dir = "viewfs://c1/jobs/staging";
  job.cluster.history_dir = "viewfs://c1/jobs/history";
  auto got = locate_job(job, conf, "application_1_0001", "alice");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(got->staging_uri, "hdfs://prod/shared/jobs/staging/application_1_0001");
  EXPECT_EQ(got->staging_webhdfs, "a.example:9870,b.example:9870");
  EXPECT_EQ(got->history_uri, "hdfs://prod/shared/jobs/history");

  job.cluster.staging_dir = "viewfs://c1/elsewhere";
  got = locate_job(job, conf, "application_1_0001", "alice");
  ASSERT_FALSE(got);
  auto text = describe(got.error());
  EXPECT_NE(text.find("[cluster] staging_dir viewfs://c1/elsewhere"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fs.viewfs.mounttable.c1.link."), std::string::npos) << text;
}

TEST(job_locations, files_on_a_nameservice_are_read_from_every_namenode) {
  auto conf = nameservice();
  auto got = webhdfs_address_of("prod", conf);
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, "a.example:9870,b.example:9870");
  conf.set("dfs.http.policy", "HTTPS_ONLY");
  got = webhdfs_address_of("prod", conf);
  ASSERT_FALSE(got);
  EXPECT_NE(describe(got.error()).find("dfs.namenode.https-address.prod.nn1"),
            std::string::npos)
      << describe(got.error());
}

TEST(job_locations, a_shared_cache_path_is_on_the_default_file_system) {
  job_spec job;
  auto none = locate_job(job, nameservice(), "application_1_0001", "alice");
  ASSERT_TRUE(none) << describe(none.error());
  EXPECT_EQ(none->shared_cache_uri, "");
  job.cluster.shared_cache = "/apps/tony/cache/";
  auto got = locate_job(job, nameservice(), "application_1_0001", "alice");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(got->shared_cache_uri, "hdfs://prod/apps/tony/cache");
  EXPECT_EQ(got->shared_cache_webhdfs, "a.example:9870,b.example:9870");
  job.cluster.shared_cache = "file:///srv/tony-cache";
  got = locate_job(job, nameservice(), "application_1_0001", "alice");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(got->shared_cache_uri, "file:///srv/tony-cache");
  EXPECT_EQ(got->shared_cache_webhdfs, "");
}
