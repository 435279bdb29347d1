// The FileChecksum tony computes for a local file is the one HDFS answers
// for the same bytes: the expected values are what WebHDFS GETFILECHECKSUM
// of an HDFS 3.4.2 answered for these files (written with a block size of
// 1 MiB: one block, and three blocks whose MD5s Hadoop pads to 64 bytes).

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "submit/content_check.hpp"

namespace fs = std::filesystem;
using namespace tony;

namespace {

// The test files: byte i is (7i + i/300) mod 251.
std::string pattern_file(const std::string& name, size_t size) {
  auto path = (fs::temp_directory_path() /
               ("tony-content-check-" + std::to_string(::getpid()) + "-" + name))
                  .string();
  std::ofstream out(path, std::ios::binary);
  for (size_t i = 0; i < size; ++i)
    out.put(static_cast<char>((i * 7 + i / 300) % 251));
  return path;
}

constexpr int64_t mib = 1 << 20;

} // namespace

TEST(content_check, one_block_gives_hdfs_checksum) {
  auto path = pattern_file("one", 513);
  EXPECT_EQ(hdfs_file_checksum(path, mib, 512, 0),
            "000002000000000000000000a5b1fc98987d84d130c6e91eb98ce621");
  fs::remove(path);
}

TEST(content_check, three_blocks_give_hdfs_checksum) {
  auto path = pattern_file("three", 2621517);
  EXPECT_EQ(hdfs_file_checksum(path, mib, 512, 2048),
            "00000200000000000000080093f53de3fed936a1f40359cae68adb34");
  fs::remove(path);
}

TEST(content_check, a_staged_hdfs_copy_compares_by_its_checksum) {
  auto path = pattern_file("staged", 513);
  staging::staged_content staged;
  staged.algorithm = "MD5-of-0MD5-of-512CRC32C";
  staged.bytes = "000002000000000000000000A5B1FC98987D84D130C6E91EB98CE621";
  staged.block_size = mib;
  staged.length = 513;
  auto there = staged_fingerprint(staged);
  auto here = local_fingerprint(staged, path);
  ASSERT_TRUE(there && here);
  EXPECT_EQ(*there, *here);
  // One byte changed: another checksum.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('x');
  }
  auto changed = local_fingerprint(staged, path);
  ASSERT_TRUE(changed);
  EXPECT_NE(*there, *changed);
  fs::remove(path);
}

TEST(content_check, checksums_tony_does_not_compute_are_said) {
  staging::staged_content staged;
  staged.algorithm = "COMPOSITE-CRC32C";
  staged.bytes = "1234abcd";
  auto there = staged_fingerprint(staged);
  ASSERT_FALSE(there);
  EXPECT_NE(describe(there.error()).find("COMPOSITE-CRC32C"), std::string::npos);
  staged.algorithm = "MD5-of-0MD5-of-512CRC32";
  EXPECT_FALSE(staged_fingerprint(staged));
  // An object store's copy: nothing to compare.
  EXPECT_FALSE(staged_fingerprint(staging::staged_content{}));
}

TEST(content_check, a_file_copy_compares_by_its_bytes) {
  auto a = pattern_file("a", 70000);
  auto b = pattern_file("b", 70000);
  staging::staged_content staged;
  staged.path = a;
  EXPECT_EQ(*staged_fingerprint(staged), *local_fingerprint(staged, b));
  { std::ofstream(b, std::ios::binary | std::ios::app) << "!"; }
  EXPECT_NE(*staged_fingerprint(staged), *local_fingerprint(staged, b));
  EXPECT_FALSE(local_fingerprint(staged, a + ".missing"));
  fs::remove(a);
  fs::remove(b);
}
