// viewfs:// mount tables, WebHDFS addresses, and client:0's environment.

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "hadoop/configuration.hpp"
#include "messages/error.hpp"
#include "submit/client_task.hpp"
#include "submit/shipping.hpp"

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
  EXPECT_EQ(*webhdfs_address_of("nn1:8020", conf), "nn1:9871");
  EXPECT_EQ(*webhdfs_address_of("nn2:8020", conf), "nn2:9870");
}

TEST(shipping, local_sources_are_staged_under_their_own_file_names) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "tony-ship-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  fs::path dir{tmpl};
  fs::create_directories(dir / "src");
  fs::create_directories(dir / "helpers");
  std::ofstream{dir / "src" / "train.py"} << "x";
  std::ofstream{dir / "helpers" / "h.py"} << "x";
  std::ofstream{dir / "my-venv.zip"} << "zip";
  std::ofstream{dir / "vocab.txt"} << "v";
  job_spec job;
  job.src_dir = (dir / "src").string();
  job.python_venv = (dir / "my-venv.zip").string();
  job.files = {{(dir / "vocab.txt").string(), "vocab.txt", false},
               {(dir / "helpers").string(), "helpers", false}};
  task_type_spec ps;
  ps.name = "ps";
  ps.files = {{(dir / "vocab.txt").string(), "ps-vocab", false}};
  job.tasks = {ps};
  auto stager = staging::make_file_stager((dir / "staging").string());
  hadoop::configuration conf;
  webhdfs::http_auth auth;
  auth.user = "me";
  auto shipped = ship_job_files(job, *stager, dir.string(), conf, auth);
  ASSERT_TRUE(shipped) << describe(shipped.error());
  auto& common = shipped->common;
  ASSERT_EQ(common.size(), 4u);
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() &&
           s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  EXPECT_EQ(common[0].name, "src");
  EXPECT_TRUE(common[0].archive);
  EXPECT_TRUE(ends_with(common[0].url, "-src.tgz")) << common[0].url;
  // The NodeManager unpacks an archive by its extension.
  EXPECT_EQ(common[1].name, "venv");
  EXPECT_TRUE(common[1].archive);
  EXPECT_TRUE(ends_with(common[1].url, "-my-venv.zip")) << common[1].url;
  EXPECT_EQ(common[2].name, "vocab.txt");
  EXPECT_FALSE(common[2].archive);
  EXPECT_EQ(common[3].name, "helpers");
  EXPECT_TRUE(common[3].archive) << "a directory travels as an archive of itself";
  EXPECT_TRUE(ends_with(common[3].url, ".tgz")) << common[3].url;
  ASSERT_EQ(shipped->by_type.at("ps").size(), 1u);
  EXPECT_EQ(shipped->by_type.at("ps")[0].name, "ps-vocab");
  EXPECT_NE(shipped->by_type.at("ps")[0].url, common[2].url) << "staged apart";
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// Two submits staging the same content-addressed file at once (tony's
// binaries of a new release): the second must not replace the first's copy,
// whose modification time the first job's resources already carry (YARN
// refused to localize it: "changed on src filesystem").
TEST(shipping, a_shared_copy_staged_first_stays) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "tony-ship-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  fs::path dir{tmpl};
  std::ofstream{dir / "tony.tgz"} << "bundle";
  auto stager = staging::make_file_stager((dir / "cache").string());
  auto first = stager->put_shared((dir / "tony.tgz").string(), "tony.tgz", true);
  ASSERT_TRUE(first) << to_string(first.error());
  auto old = fs::last_write_time(dir / "cache" / "tony.tgz");
  fs::last_write_time(dir / "cache" / "tony.tgz", old - std::chrono::seconds(10));
  auto before = stager->stat("tony.tgz", true);
  ASSERT_TRUE(before);
  auto second = stager->put_shared((dir / "tony.tgz").string(), "tony.tgz", true);
  ASSERT_TRUE(second) << to_string(second.error());
  EXPECT_EQ(second->timestamp, before->timestamp);
  EXPECT_EQ(second->size, 6);
  auto left =
      std::distance(fs::directory_iterator(dir / "cache"), fs::directory_iterator{});
  EXPECT_EQ(left, 1) << "no partial copy left behind";
  // put() replaces (a stale copy of another size is meant to go).
  auto replaced = stager->put((dir / "tony.tgz").string(), "tony.tgz", true);
  ASSERT_TRUE(replaced);
  EXPECT_NE(replaced->timestamp, before->timestamp);
  fs::remove_all(dir);
}

TEST(client_task, client_zero_sees_the_cluster_but_is_not_in_it) {
  job_spec job;
  job.env = {{"FROM_JOB", "1"}};
  job.input_path = "hdfs:///in";
  client_task client{"true", {{"DTF_TASK_SCRIPT", "/home/u/mnist.py"}}, job};
  job_status st;
  st.app_id = "application_1_0001";
  st.attempt = 1;
  st.state = job_state::running;
  auto task = [](std::string type, int32_t index, std::string host, int32_t port) {
    task_status t;
    t.task = {std::move(type), index};
    t.state = task_state::running;
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
