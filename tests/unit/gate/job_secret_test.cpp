// The job secret's path (runtime/gate/job_secret.hpp): where executors and
// the AM find it, the Credentials bytes it travels in on YARN, and the 0600
// file tony-submit keeps for --status.

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hadoop/credentials.hpp"
#include "messages/error.hpp"
#include "runtime/gate/job_secret.hpp"

namespace tony::gate {
namespace {

namespace fs = std::filesystem;

struct temp_home {
  std::string dir;
  std::string old_home;

  temp_home() {
    char tmpl[] = "/tmp/tony-secret-test-XXXXXX";
    dir = ::mkdtemp(tmpl);
    if (auto h = std::getenv("HOME"))
      old_home = h;
    ::setenv("HOME", dir.c_str(), 1);
  }

  ~temp_home() {
    ::setenv("HOME", old_home.c_str(), 1);
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  std::string write(const std::string& name, const std::string& bytes) {
    auto path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
};

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 0xF];
  }
  return out;
}

TEST(job_secret, credentials_golden_bytes) {
  // "HDTS", Writable format, no tokens, one secret: Text alias, vint length, bytes.
  EXPECT_EQ(hex(credentials_with_secret("abc")), "48445453"
                                                 "00"
                                                 "00"
                                                 "01"
                                                 "0f"
                                                 "746f6e792e6a6f622e736563726574"
                                                 "03"
                                                 "616263");
}

TEST(job_secret, the_environment_variable_first) {
  temp_home home;
  auto file = home.write("tokens", credentials_with_secret("from-file"));
  auto s = job_secret_from_environment(
      {{"TONY_JOB_SECRET", "from-env"}, {"HADOOP_TOKEN_FILE_LOCATION", file}});
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, "from-env");
}

TEST(job_secret, else_the_container_token_file) {
  temp_home home;
  hadoop::credentials creds;
  creds.add_token("amrm", hadoop::token{"id", "pw", "YARN_AM_RM_TOKEN", "rm:8030"});
  creds.add_secret(secret_alias, "from-file");
  auto file = home.write("tokens", hadoop::serialize_credentials(creds));
  auto s = job_secret_from_environment({{"HADOOP_TOKEN_FILE_LOCATION", file}});
  ASSERT_TRUE(s) << describe(s.error());
  EXPECT_EQ(*s, "from-file");
}

TEST(job_secret, a_token_file_without_it_names_the_alias) {
  temp_home home;
  hadoop::credentials creds;
  creds.add_token("amrm", hadoop::token{"id", "pw", "YARN_AM_RM_TOKEN", "rm:8030"});
  auto file = home.write("tokens", hadoop::serialize_credentials(creds));
  auto s = job_secret_from_environment({{"HADOOP_TOKEN_FILE_LOCATION", file}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), errc::invalid_config);
  EXPECT_NE(describe(s.error()).find("tony.job.secret"), std::string::npos);
}

TEST(job_secret, nowhere_names_both_places) {
  auto s = job_secret_from_environment({{"PATH", "/bin"}});
  ASSERT_FALSE(s);
  EXPECT_NE(describe(s.error()).find("TONY_JOB_SECRET"), std::string::npos);
  EXPECT_NE(describe(s.error()).find("HADOOP_TOKEN_FILE_LOCATION"), std::string::npos);
}

TEST(job_secret, a_corrupt_token_file_is_an_infrastructure_error) {
  temp_home home;
  auto file = home.write("tokens", "HDTS\x07garbage");
  auto s = job_secret_from_environment({{"HADOOP_TOKEN_FILE_LOCATION", file}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), errc::infrastructure);
}

TEST(job_secret, kept_for_the_user_only_and_forgotten) {
  temp_home home;
  ::umask(0022);
  auto app = "application_1700000000000_0042";
  ASSERT_TRUE(save_secret(app, "kept"));
  struct stat st {};
  ASSERT_EQ(::stat((secret_dir() + "/" + app).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(secret_dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto back = load_secret(app);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, "kept");
  forget_secret(app);
  EXPECT_FALSE(load_secret(app));
}

TEST(job_secret, an_application_id_cannot_name_another_path) {
  temp_home home;
  EXPECT_FALSE(save_secret("../../etc/x", "s"));
  EXPECT_FALSE(load_secret("../x"));
}

TEST(job_secret, derived_tokens_are_per_secret_and_purpose) {
  auto t = derived_token("s3cret", "tony-tensorboard/1");
  EXPECT_EQ(t.size(), 32u);
  EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(t, derived_token("s3cret", "tony-tensorboard/1"));
  EXPECT_EQ(t, tensorboard_token("s3cret"));
  EXPECT_NE(t, derived_token("s3cret", "other"));
  EXPECT_NE(t, derived_token("s3cres", "tony-tensorboard/1"));
  // HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog"), cut.
  EXPECT_EQ(derived_token("key", "The quick brown fox jumps over the lazy dog"),
            "f7bc83f430538424b13298e6aa6fb143");
}

TEST(job_secret, fresh_secrets_are_64_hex_digits) {
  auto a = make_job_secret();
  auto b = make_job_secret();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

} // namespace
} // namespace tony::gate
