#include "config/units.hpp"

#include <gtest/gtest.h>

using namespace tony;

namespace {

int64_t mb(std::string_view text) {
  auto r = parse_memory_mb(text);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error());
  return r.ok() ? *r : -12345;
}

std::string mb_error(std::string_view text) {
  auto r = parse_memory_mb(text);
  EXPECT_FALSE(r.ok()) << text << " parsed as " << (r.ok() ? *r : 0);
  return r.ok() ? "" : r.error();
}

int64_t ms(std::string_view text) {
  auto r = parse_duration_ms(text);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error());
  return r.ok() ? *r : -12345;
}

bool duration_fails(std::string_view text) {
  return !parse_duration_ms(text).ok();
}

} // namespace

TEST(memory_units, plain_numbers_are_mib) {
  EXPECT_EQ(mb("2048"), 2048);
  EXPECT_EQ(mb(" 512 "), 512);
}

TEST(memory_units, suffixes_are_case_insensitive) {
  EXPECT_EQ(mb("2g"), 2048);
  EXPECT_EQ(mb("2G"), 2048);
  EXPECT_EQ(mb("512m"), 512);
  EXPECT_EQ(mb("512M"), 512);
  EXPECT_EQ(mb("1048576k"), 1024);
  EXPECT_EQ(mb("1t"), 1048576);
  EXPECT_EQ(mb("2GiB"), 2048);
  EXPECT_EQ(mb("512mb"), 512);
  EXPECT_EQ(mb("4 g"), 4096);
}

TEST(memory_units, whole_mib_fractions_are_accepted) {
  EXPECT_EQ(mb("1.5g"), 1536);
  EXPECT_EQ(mb("0.5g"), 512);
}

TEST(memory_units, fractions_of_a_mib_are_rejected) {
  EXPECT_EQ(mb_error("1000k"), "is not a whole number of MiB");
  EXPECT_EQ(mb_error("0.5m"), "is not a whole number of MiB");
  EXPECT_EQ(mb_error("1.5"), "is not a whole number of MiB");
}

TEST(memory_units, garbage_is_not_a_size) {
  for (auto text : {"", "g", "2x", "2gx", "two", "2..5g", "2g2", "1e3"})
    EXPECT_EQ(mb_error(text).rfind("is not a size", 0), 0u) << text;
}

TEST(memory_units, signs_and_huge_values_reach_the_caller) {
  EXPECT_EQ(mb("-2g"), -2048);
  EXPECT_EQ(mb("0"), 0);
  EXPECT_GT(mb("99999999999999999999999t"), max_memory_mb);
  EXPECT_GT(mb("2t"), max_memory_mb);
}

TEST(duration_units, single_units) {
  EXPECT_EQ(ms("500ms"), 500);
  EXPECT_EQ(ms("90s"), 90000);
  EXPECT_EQ(ms("30m"), 1800000);
  EXPECT_EQ(ms("2h"), 7200000);
  EXPECT_EQ(ms("1d"), 86400000);
}

TEST(duration_units, combinations) {
  EXPECT_EQ(ms("1h30m"), 5400000);
  EXPECT_EQ(ms("1m30s"), 90000);
  EXPECT_EQ(ms("1s500ms"), 1500);
  EXPECT_EQ(ms("1h 30m"), 5400000);
}

TEST(duration_units, bare_numbers_are_seconds) {
  EXPECT_EQ(ms("90"), 90000);
  EXPECT_EQ(ms("0"), 0);
}

TEST(duration_units, garbage_is_rejected) {
  for (auto text : {"", "s", "5x", "1.5s", "5 minutes", "h1", "30M", "1h30"})
    EXPECT_TRUE(duration_fails(text)) << text;
}

TEST(duration_units, negative_and_huge_values_reach_the_caller) {
  EXPECT_EQ(ms("-5s"), -5000);
  EXPECT_GT(ms("999999999999999999999h"), max_duration_ms);
  EXPECT_GT(ms("401d"), max_duration_ms);
}

TEST(formatting, memory) {
  EXPECT_EQ(format_memory(2048), "2g");
  EXPECT_EQ(format_memory(1536), "1536m");
  EXPECT_EQ(format_memory(1048576), "1t");
  EXPECT_EQ(format_memory(0), "0m");
}

TEST(formatting, durations) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(500), "500ms");
  EXPECT_EQ(format_duration(5400000), "1h30m");
  EXPECT_EQ(format_duration(90500), "1m30s500ms");
}

TEST(edit_distance, counts_edits_and_swaps) {
  EXPECT_EQ(edit_distance("instances", "instances"), 0u);
  EXPECT_EQ(edit_distance("instaces", "instances"), 1u);
  EXPECT_EQ(edit_distance("nmae", "name"), 1u);
  EXPECT_EQ(edit_distance("Name", "name"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}
