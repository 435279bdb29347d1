// What tony-submit passes on and says about a job's tokens: a corrupt
// HADOOP_TOKEN_FILE_LOCATION is refused naming the file, a good one is
// passed on without any job secret in it, and the user learns how long a
// job without a keytab can live.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "messages/error.hpp"
#include "runtime/gate/job_secret.hpp"
#include "submit/job_tokens.hpp"

namespace tony {
namespace {

namespace fs = std::filesystem;

struct token_file_env : ::testing::Test {
  fs::path dir;

  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tony-job-tokens-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
  }

  void TearDown() override {
    ::unsetenv("HADOOP_TOKEN_FILE_LOCATION");
    fs::remove_all(dir);
  }

  std::string write(const std::string& name, const std::string& bytes) {
    auto path = (dir / name).string();
    std::ofstream{path, std::ios::binary} << bytes;
    return path;
  }
};

TEST_F(token_file_env, no_token_file_passes_nothing_on) {
  ::unsetenv("HADOOP_TOKEN_FILE_LOCATION");
  auto creds = forwarded_tokens();
  ASSERT_TRUE(creds);
  EXPECT_TRUE(creds->empty());
}

TEST_F(token_file_env, a_corrupt_token_file_is_refused_naming_it) {
  auto path = write("corrupt", std::string("HDTS\0\x05\xff\xff", 8));
  ::setenv("HADOOP_TOKEN_FILE_LOCATION", path.c_str(), 1);
  auto creds = forwarded_tokens();
  ASSERT_FALSE(creds);
  auto text = describe(creds.error());
  EXPECT_NE(text.find(path), std::string::npos) << text;
  EXPECT_NE(text.find("unset the variable"), std::string::npos) << text;
  auto missing = (dir / "missing").string();
  ::setenv("HADOOP_TOKEN_FILE_LOCATION", missing.c_str(), 1);
  auto gone = forwarded_tokens();
  ASSERT_FALSE(gone);
  EXPECT_NE(describe(gone.error()).find(missing), std::string::npos);
}

TEST_F(token_file_env, tokens_pass_on_and_a_job_secret_does_not) {
  hadoop::credentials file;
  file.add_token("127.0.0.1:9000",
                 {"id", "pw", "HDFS_DELEGATION_TOKEN", "127.0.0.1:9000"});
  file.add_secret(gate::secret_alias, "another job's secret");
  file.add_secret("user.secret", "kept");
  auto path = write("tokens", hadoop::serialize_credentials(file));
  ::setenv("HADOOP_TOKEN_FILE_LOCATION", path.c_str(), 1);
  auto creds = forwarded_tokens();
  ASSERT_TRUE(creds) << describe(creds.error());
  ASSERT_EQ(creds->tokens().size(), 1u);
  EXPECT_EQ(creds->tokens()[0].second.kind, "HDFS_DELEGATION_TOKEN");
  ASSERT_EQ(creds->secrets().size(), 1u);
  EXPECT_EQ(creds->secrets()[0].first, "user.secret");
}

hdfs::obtained_token token_until(int64_t max_ms) {
  hdfs::obtained_token t;
  t.uri = "hdfs://nn:9000";
  t.identity.renewer = "yarn";
  t.identity.max_date_ms = max_ms;
  return t;
}

TEST(job_tokens, without_a_keytab_the_user_learns_until_when_the_job_can_run) {
  auto now = std::chrono::system_clock::time_point{std::chrono::seconds(1795407300)};
  auto note = token_lifetime_note({token_until(1795407480000)}, false, now);
  EXPECT_NE(note.find("HDFS delegation tokens for hdfs://nn:9000 (renewer yarn)"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("without a keytab the job can run until"), std::string::npos);
  EXPECT_NE(note.find("(180 s from now)"), std::string::npos) << note;
  EXPECT_NE(note.find("set [security] keytab"), std::string::npos);
  auto days =
      token_lifetime_note({token_until(1795407300000 + 7 * 86400000LL)}, false, now);
  EXPECT_NE(days.find("(7 days from now)"), std::string::npos) << days;
  auto with_keytab = token_lifetime_note({token_until(1795407480000)}, true, now);
  EXPECT_NE(with_keytab.find("gets new ones with the keytab"), std::string::npos);
  EXPECT_EQ(with_keytab.find("can run until"), std::string::npos);
  EXPECT_EQ(token_lifetime_note({}, false, now), "");
}

} // namespace
} // namespace tony
