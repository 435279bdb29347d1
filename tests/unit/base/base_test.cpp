// base/'s helpers: the one home of lower, trim, join, plural, shell_quote,
// read_file and expand_home.

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "base/files.hpp"
#include "base/text.hpp"

namespace tony::base {
namespace {

TEST(base_text, lower_changes_ascii_letters_only) {
  EXPECT_EQ(lower("TonY-0.5 Ä"), "tony-0.5 Ä");
}

TEST(base_text, trim_drops_blanks_at_both_ends) {
  EXPECT_EQ(trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(trim(" \t\r\n"), "");
  EXPECT_EQ(trim(""), "");
}

TEST(base_text, join_puts_the_separator_between_items_even_empty_ones) {
  EXPECT_EQ(join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(join({"", "b"}, ","), ",b");
  EXPECT_EQ(join({}, ","), "");
}

TEST(base_text, plural_adds_an_s_unless_one) {
  EXPECT_EQ(plural(1, "task"), "1 task");
  EXPECT_EQ(plural(0, "task"), "0 tasks");
  EXPECT_EQ(plural(3, "ended job"), "3 ended jobs");
}

TEST(base_text, shell_quote_survives_single_quotes) {
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(base_files, read_file_gives_the_content_or_nothing) {
  char path[] = "/tmp/tony-base-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "a\0b", 3), 3);
  close(fd);
  auto text = read_file(path);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, std::string("a\0b", 3));
  unlink(path);
  EXPECT_FALSE(read_file(path).has_value());
}

TEST(base_files, expand_home_expands_only_tilde_and_tilde_slash) {
  std::string saved = std::getenv("HOME") ? std::getenv("HOME") : "";
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(expand_home("~"), "/home/u");
  EXPECT_EQ(expand_home("~/.tony/jobs"), "/home/u/.tony/jobs");
  EXPECT_EQ(expand_home("~other/x"), "~other/x");
  EXPECT_EQ(expand_home("/abs/~/x"), "/abs/~/x");
  setenv("HOME", saved.c_str(), 1);
}

} // namespace
} // namespace tony::base

// The attack on a predictable scratch dir: another user pre-creates the
// next job's directory, open to all, with a link to a file of the victim's
// where tony would write the job's description.
TEST(base_files, a_planted_predictable_dir_with_links_is_never_written_through) {
  std::string why;
  auto root = tony::base::make_private_dir("tony-base-test-", why);
  ASSERT_TRUE(root) << why;
  auto victim = *root + "/victim";
  std::ofstream(victim) << "the victim's own\n";
  auto planted = *root + "/tony-submit-application_1_0002";
  ASSERT_EQ(::mkdir(planted.c_str(), 0777), 0);
  ::chmod(planted.c_str(), 0777);
  ASSERT_EQ(::symlink(victim.c_str(), (planted + "/job.json").c_str()), 0);
  auto scratch =
      tony::base::make_private_dir("tony-submit-application_1_0002-", why, *root);
  ASSERT_TRUE(scratch) << why;
  EXPECT_NE(*scratch, planted);
  struct stat st {};
  ASSERT_EQ(::lstat(scratch->c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_TRUE(tony::base::write_new_file(*scratch + "/job.json", "{}", 0600, why)) << why;
  // Even into the planted dir, a link is never followed, a file never replaced.
  EXPECT_FALSE(tony::base::write_new_file(planted + "/job.json", "{\"x\":1}", 0600, why));
  EXPECT_NE(why.find(planted + "/job.json"), std::string::npos) << why;
  EXPECT_FALSE(tony::base::write_new_file(*scratch + "/job.json", "again", 0600, why));
  EXPECT_EQ(tony::base::read_file(victim), "the victim's own\n");
  EXPECT_EQ(tony::base::read_file(*scratch + "/job.json"), "{}");
  ASSERT_EQ(::stat((*scratch + "/job.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::filesystem::remove_all(*root);
}

TEST(base_files, private_dirs_have_names_nobody_can_predict) {
  std::string why;
  auto a = tony::base::make_private_dir("tony-base-test-", why);
  auto b = tony::base::make_private_dir("tony-base-test-", why);
  ASSERT_TRUE(a && b) << why;
  EXPECT_NE(*a, *b);
  std::filesystem::remove_all(*a);
  std::filesystem::remove_all(*b);
  EXPECT_FALSE(tony::base::make_private_dir("x-", why, "/nonexistent/dir"));
  EXPECT_NE(why.find("/nonexistent/dir"), std::string::npos) << why;
}

TEST(base_files, pending_caps_follow_the_open_files_limit) {
  using tony::base::pending_cap;
  EXPECT_EQ(pending_cap(1024, 0, 100, 50), 1024u);     // no limit known
  EXPECT_EQ(pending_cap(1024, 65536, 100, 50), 1024u); // room enough
  EXPECT_EQ(pending_cap(1024, 1024, 200, 50), 412u);   // half of what is left
  EXPECT_EQ(pending_cap(128, 1024, 200, 12), 98u);
  EXPECT_EQ(pending_cap(1024, 256, 2000, 50), 16u); // never below 16
  EXPECT_EQ(pending_cap(8, 256, 2000, 50), 8u);     // nor above what is wanted
}
