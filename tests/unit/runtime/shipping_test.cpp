// viewfs:// mount tables, WebHDFS addresses, and client:0's environment.

#include <gtest/gtest.h>

#include "messages/error.hpp"
#include "runtime/hadoop/configuration.hpp"
#include "runtime/submit/client_task.hpp"
#include "runtime/submit/shipping.hpp"

using namespace tony;

namespace {

hadoop::configuration mount_table() {
  hadoop::configuration conf;
  auto ok = conf.add_xml(R"(<configuration>
  <property><name>fs.defaultFS</name><value>hdfs://nn1:8020</value></property>
  <property><name>dfs.namenode.http-address</name><value>0.0.0.0:9871</value></property>
  <property><name>fs.viewfs.mounttable.c1.link./data</name><value>hdfs://nn1:8020/data</value></property>
  <property><name>fs.viewfs.mounttable.c1.link./data/big</name><value>hdfs://nn2:8020/big/</value></property>
  <property><name>fs.viewfs.mounttable.default.link./user</name><value>hdfs://nn1:8020/user</value></property>
</configuration>)",
                         "core-site.xml");
  EXPECT_TRUE(ok);
  return conf;
}

} // namespace

TEST(shipping, viewfs_resolves_by_the_longest_link) {
  auto conf = mount_table();
  EXPECT_EQ(*resolve_viewfs("viewfs://c1/data/x.csv", conf),
            "hdfs://nn1:8020/data/x.csv");
  EXPECT_EQ(*resolve_viewfs("viewfs://c1/data/big/y", conf), "hdfs://nn2:8020/big/y");
  EXPECT_EQ(*resolve_viewfs("viewfs:///user/me/z", conf), "hdfs://nn1:8020/user/me/z");
  auto none = resolve_viewfs("viewfs://c1/database/x", conf);
  ASSERT_FALSE(none);
  EXPECT_EQ(describe(none.error()),
            "no viewfs mount link covers viewfs://c1/database/x (looked for "
            "fs.viewfs.mounttable.c1.link.<path> in the Hadoop configuration)");
}

TEST(shipping, webhdfs_address_of_the_default_namenode_comes_from_the_configuration) {
  auto conf = mount_table();
  EXPECT_EQ(webhdfs_address_of("nn1:8020", conf), "nn1:9871");
  EXPECT_EQ(webhdfs_address_of("nn2:8020", conf), "nn2:9870");
}

TEST(client_task, client_zero_sees_the_cluster_but_is_not_in_it) {
  job_spec job;
  job.env = {{"FROM_JOB", "1"}};
  job.input_path = "hdfs:///in";
  client_task client{"true", {{"DTF_TASK_SCRIPT", "/home/u/mnist.py"}}, job};
  job_status st;
  st.app_id = "application_1_0001";
  st.attempt = 1;
  st.state = "RUNNING";
  auto task = [](std::string type, int32_t index, std::string host, int32_t port) {
    task_status t;
    t.task = {std::move(type), index};
    t.state = "RUNNING";
    t.host = std::move(host);
    t.port = port;
    return t;
  };
  st.tasks = {task("worker", 1, "h2", 4002), task("worker", 0, "h1", 4001),
              task("ps", 0, "h3", 4003)};
  auto env = client.environment(st);
  EXPECT_EQ(env.at("DTF_TASK_JOB_NAME"), "client");
  EXPECT_EQ(env.at("DTF_TASK_INDEX"), "0");
  EXPECT_EQ(env.at("DTF_WORKER_HOSTS"), "h1:4001,h2:4002");
  EXPECT_EQ(env.at("DTF_PS_HOSTS"), "h3:4003");
  EXPECT_EQ(env.at("DTF_INPUT_PATH"), "hdfs:///in");
  EXPECT_EQ(env.at("DTF_TASK_SCRIPT"), "/home/u/mnist.py");
  EXPECT_EQ(env.at("FROM_JOB"), "1");
  EXPECT_EQ(env.at("TASK_NUM"), "0");
  EXPECT_EQ(env.count("TF_CONFIG"), 0u);
  EXPECT_EQ(env.count("TONY_TASK_PORT"), 0u);
}
