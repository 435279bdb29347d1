// Other Hadoop file systems through `hadoop fs` (runtime/staging/hadoop_fs.hpp):
// which URIs take that way, how its output is read, and how a missing,
// failing or hanging `hadoop` is reported. The `hadoop` here is a shell
// script standing in for the real client; tests/integration/s3a runs the
// real one against an S3 server.

#include "runtime/staging/hadoop_fs.hpp"

#include "messages/error.hpp"
#include "runtime/staging/stager.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace tony;
using namespace tony::staging;

namespace {

bool has_code(const tony::error& err, errc code) {
  return err.code() == code;
}

// A temporary HADOOP_HOME whose bin/hadoop runs `script`; PATH and
// HADOOP_HOME are restored afterwards.
class fake_hadoop : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tony-hadoop-fs-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    home_ = tmpl;
    if (auto* v = std::getenv("HADOOP_HOME"))
      old_home_ = v;
    if (auto* v = std::getenv("PATH"))
      old_path_ = v;
  }

  void TearDown() override {
    if (old_home_)
      ::setenv("HADOOP_HOME", old_home_->c_str(), 1);
    else
      ::unsetenv("HADOOP_HOME");
    ::setenv("PATH", old_path_.c_str(), 1);
    std::error_code ec;
    fs::remove_all(home_, ec);
  }

  void install(const std::string& script) {
    fs::create_directories(home_ + "/bin");
    auto path = home_ + "/bin/hadoop";
    std::ofstream(path) << "#!/bin/sh\n" << script;
    ::chmod(path.c_str(), 0755);
    ::setenv("HADOOP_HOME", home_.c_str(), 1);
  }

  std::string home_;
  std::optional<std::string> old_home_;
  std::string old_path_;
};

} // namespace

TEST(hadoop_fs, schemes_choose_the_access) {
  EXPECT_EQ(access_of("/tmp/staging"), fs_access::local);
  EXPECT_EQ(access_of("file:///tmp/staging"), fs_access::local);
  EXPECT_EQ(access_of("hdfs://nn:8020/user/a/.tony"), fs_access::webhdfs);
  EXPECT_EQ(access_of("s3a://bucket/staging"), fs_access::hadoop_cli);
  EXPECT_EQ(access_of("gs://bucket/staging"), fs_access::hadoop_cli);
  EXPECT_EQ(access_of("abfs://c@acct.dfs.core.windows.net/x"), fs_access::hadoop_cli);
  EXPECT_EQ(access_of("wasb://c@acct.blob.core.windows.net/x"), fs_access::hadoop_cli);
  EXPECT_EQ(access_of("oss://bucket/x"), fs_access::hadoop_cli);
  EXPECT_EQ(scheme_of("s3a://bucket/x"), "s3a");
  EXPECT_EQ(scheme_of("/a/b://c"), "");
  EXPECT_EQ(scheme_of("relative/path"), "");
}

TEST(hadoop_fs, stat_output_is_size_and_milliseconds) {
  auto st = parse_stat("1048576 1764340800123\n");
  ASSERT_TRUE(st) << describe(st.error());
  EXPECT_EQ(st->size, 1048576);
  EXPECT_EQ(st->modified_ms, 1764340800123);
  // log4j's warnings may come first on stdout.
  st = parse_stat("WARN something\n0 1764340800000\n");
  ASSERT_TRUE(st) << describe(st.error());
  EXPECT_EQ(st->size, 0);
  EXPECT_FALSE(parse_stat(""));
  EXPECT_FALSE(parse_stat("12"));
  EXPECT_FALSE(parse_stat("12 2026-11-28 15:20:00"));
  EXPECT_FALSE(parse_stat("-1 5"));
}

TEST(hadoop_fs, listing_lines_keep_names_whole) {
  auto entries = parse_listing("regular file|120|1764340800123|application_1_0001.jsonl\n"
                               "directory|0|0|application_1_0002\n"
                               "regular file|7|5|a|b\n");
  ASSERT_TRUE(entries) << describe(entries.error());
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].name, "application_1_0001.jsonl");
  EXPECT_FALSE((*entries)[0].directory);
  EXPECT_EQ((*entries)[0].size, 120);
  EXPECT_EQ((*entries)[0].modified_ms, 1764340800123);
  EXPECT_TRUE((*entries)[1].directory);
  EXPECT_EQ((*entries)[2].name, "a|b");
  EXPECT_FALSE(parse_listing("regular file|x|1|n\n"));
}

TEST_F(fake_hadoop, no_hadoop_is_a_configuration_error_saying_where_it_looked) {
  ::setenv("HADOOP_HOME", home_.c_str(), 1); // no bin/hadoop in it
  ::setenv("PATH", home_.c_str(), 1);
  auto found = find_hadoop("s3a://bucket/staging");
  ASSERT_FALSE(found);
  EXPECT_TRUE(has_code(found.error(), errc::invalid_config));
  auto text = describe(found.error());
  EXPECT_NE(text.find("s3a://bucket/staging"), std::string::npos) << text;
  EXPECT_NE(text.find(home_ + "/bin/hadoop"), std::string::npos) << text;
  EXPECT_NE(text.find("HADOOP_HOME"), std::string::npos) << text;
  // The stager refuses up front, with the same words.
  auto stager = make_stager("s3a://bucket/staging/app", {});
  ASSERT_FALSE(stager);
  EXPECT_TRUE(has_code(stager.error(), errc::invalid_config));
  // file:// and hdfs:// never need it.
  EXPECT_TRUE(make_stager("file:///tmp/x", {}));
  EXPECT_TRUE(make_stager("hdfs://nn:8020/x", {}));
}

TEST_F(fake_hadoop, hadoop_on_path_is_found_when_hadoop_home_has_none) {
  install("exit 0\n");
  ::unsetenv("HADOOP_HOME");
  ::setenv("PATH", (home_ + "/bin").c_str(), 1);
  auto found = find_hadoop("gs://b/x");
  ASSERT_TRUE(found) << describe(found.error());
  EXPECT_EQ(*found, home_ + "/bin/hadoop");
}

TEST_F(fake_hadoop, stager_stats_what_hadoop_stats) {
  // Records its arguments; answers -stat like hadoop does.
  install("echo \"$@\" >> \"$HADOOP_HOME/calls\"\n"
          "case \"$2\" in -stat) echo '42 1764340800123' ;; esac\n");
  auto stager = make_stager("s3a://bucket/staging/app_1", {});
  ASSERT_TRUE(stager) << describe(stager.error());
  auto local = home_ + "/payload";
  std::ofstream(local) << "bytes";
  auto res = (*stager)->put(local, "src.tgz", true);
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->url, "s3a://bucket/staging/app_1/src.tgz");
  EXPECT_EQ(res->size, 42);
  EXPECT_EQ(res->timestamp, 1764340800123);
  EXPECT_TRUE(res->archive);
  std::ifstream calls(home_ + "/calls");
  std::string all{std::istreambuf_iterator<char>(calls), {}};
  EXPECT_NE(all.find("fs -mkdir -p s3a://bucket/staging/app_1\n"), std::string::npos)
      << all;
  EXPECT_NE(all.find("fs -put -f " + local + " s3a://bucket/staging/app_1/src.tgz\n"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("fs -stat %b %Y s3a://bucket/staging/app_1/src.tgz\n"),
            std::string::npos)
      << all;
}

TEST_F(fake_hadoop, a_failure_carries_the_command_the_uri_and_hadoops_words) {
  install("echo 'WARN impl.MetricsConfig: noise' >&2\n"
          "echo \"stat: \\`$4': No such file or directory\" >&2\n"
          "exit 1\n");
  auto out = hadoop_fs("s3a://bucket/x", {"-stat", "%b %Y", "s3a://bucket/x"});
  ASSERT_FALSE(out);
  EXPECT_TRUE(has_code(out.error(), errc::unsatisfiable));
  auto text = describe(out.error());
  EXPECT_NE(text.find("hadoop fs -stat %b %Y s3a://bucket/x"), std::string::npos) << text;
  EXPECT_NE(text.find("No such file or directory"), std::string::npos) << text;
  EXPECT_EQ(text.find("noise"), std::string::npos) << text;

  install("echo 'cat: com.amazonaws.SdkClientException: Unable to load' >&2\nexit 1\n");
  out = hadoop_fs("s3a://bucket/x", {"-cat", "s3a://bucket/x"});
  ASSERT_FALSE(out);
  EXPECT_TRUE(has_code(out.error(), errc::infrastructure));
  EXPECT_NE(describe(out.error()).find("Unable to load"), std::string::npos);
}

TEST_F(fake_hadoop, a_call_that_hangs_is_stopped_at_its_time_limit) {
  install("echo 'connecting' >&2\nexec sleep 30\n");
  hadoop_fs_options opts;
  opts.timeout = std::chrono::milliseconds(300);
  auto started = std::chrono::steady_clock::now();
  auto out = hadoop_fs("gs://bucket/x", {"-cat", "gs://bucket/x"}, opts);
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(out);
  EXPECT_TRUE(has_code(out.error(), errc::timeout));
  auto text = describe(out.error());
  EXPECT_NE(text.find("hadoop fs -cat gs://bucket/x"), std::string::npos) << text;
  EXPECT_NE(text.find("connecting"), std::string::npos) << text;
  EXPECT_LT(took, std::chrono::seconds(10));
}
