// base/'s helpers: the one home of lower, trim, join, plural, shell_quote,
// read_file and expand_home.

#include <cstdlib>
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
