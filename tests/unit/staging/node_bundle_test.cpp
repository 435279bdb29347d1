// The bundle tony-submit ships to YARN nodes (runtime/staging/node_bundle.hpp):
// which files go in, under which names, and when it counts as new.

#include "runtime/staging/node_bundle.hpp"

#include "messages/error.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using tony::staging::collect_node_bundle;
using tony::staging::write_node_bundle;

namespace {

class node_bundle_test : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tony-bundle-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root = tmpl;
    bin = root / "bin";
    lib = root / "lib" / "tony";
    fs::create_directories(bin);
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root, ec);
  }

  static void write(const fs::path& path, const std::string& content, bool executable) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::trunc) << content;
    ::chmod(path.c_str(), executable ? 0755 : 0644);
  }

  void make_binaries() {
    write(bin / "tony-am", "am", true);
    write(bin / "tony-executor", "executor", true);
    write(bin / "tony-guard", "guard", true);
    write(bin / "tony-submit", "not shipped", true);
  }

  static std::string run(const std::string& command) {
    std::string out;
    if (auto* pipe = ::popen(command.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0)
        out.append(buf, n);
      ::pclose(pipe);
    }
    return out;
  }

  fs::path root;
  fs::path bin;
  fs::path lib;
};

} // namespace

TEST_F(node_bundle_test, a_missing_tony_am_is_named) {
  write(bin / "tony-executor", "executor", true);
  auto b = collect_node_bundle(bin.string());
  ASSERT_FALSE(b);
  EXPECT_NE(tony::describe(b.error()).find((bin / "tony-am").string()), std::string::npos)
      << tony::describe(b.error());
}

TEST_F(node_bundle_test, binaries_then_libraries_in_archive_order) {
  make_binaries();
  write(lib / "libz.so.1", "z", false);
  write(lib / "libcaf_core.so.0.17.6", "caf", false);
  write(lib / "glibc-floor", "2.36\n", false);
  write(lib / "sasl2" / "libdigestmd5.so", "plugin", false);
  auto b = collect_node_bundle(bin.string());
  ASSERT_TRUE(b) << tony::describe(b.error());
  std::vector<std::string> names;
  for (auto& [name, path] : b->members)
    names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "bin/tony-am", "bin/tony-executor", "bin/tony-guard",
                       "lib/tony/glibc-floor", "lib/tony/libcaf_core.so.0.17.6",
                       "lib/tony/libz.so.1", "lib/tony/sasl2/libdigestmd5.so"}));
  EXPECT_TRUE(b->has_libraries);
  EXPECT_EQ(b->hash.size(), 16u);
}

TEST_F(node_bundle_test, without_a_library_dir_only_the_binaries_go) {
  write(bin / "tony-am", "am", true);
  write(bin / "tony-executor", "executor", true);
  auto b = collect_node_bundle(bin.string());
  ASSERT_TRUE(b) << tony::describe(b.error());
  ASSERT_EQ(b->members.size(), 2u); // no tony-guard either: it is optional
  EXPECT_FALSE(b->has_libraries);
}

TEST_F(node_bundle_test, the_hash_follows_contents_and_names_only) {
  make_binaries();
  write(lib / "libz.so.1", "z", false);
  auto first = collect_node_bundle(bin.string());
  ASSERT_TRUE(first);
  auto again = collect_node_bundle(bin.string());
  ASSERT_TRUE(again);
  EXPECT_EQ(first->hash, again->hash); // mtimes and paths outside play no part
  write(lib / "libz.so.1", "z, upgraded", false);
  auto upgraded = collect_node_bundle(bin.string());
  ASSERT_TRUE(upgraded);
  EXPECT_NE(upgraded->hash, first->hash);
  fs::rename(lib / "libz.so.1", lib / "libz.so.2");
  auto renamed = collect_node_bundle(bin.string());
  ASSERT_TRUE(renamed);
  EXPECT_NE(renamed->hash, upgraded->hash);
}

TEST_F(node_bundle_test, the_archive_holds_the_files_themselves_with_their_modes) {
  make_binaries();
  write(lib / "libz.so.1", "z", false);
  // The build's library dir may itself hold links; the archive must not.
  fs::create_symlink(lib / "libz.so.1", lib / "libz.so");
  auto b = collect_node_bundle(bin.string());
  ASSERT_TRUE(b);
  auto out = (root / "tony.tgz").string();
  auto ok = write_node_bundle(*b, out, (root / "scratch").string());
  ASSERT_TRUE(ok) << tony::describe(ok.error());
  EXPECT_FALSE(fs::exists(root / "scratch"));
  auto listing = run("tar -tvzf '" + out + "'");
  EXPECT_NE(listing.find("-rwxr-xr-x"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("lrwx"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("tony-submit"), std::string::npos) << listing;
  auto unpacked = root / "unpacked";
  fs::create_directories(unpacked);
  run("tar -xzf '" + out + "' -C '" + unpacked.string() + "'");
  std::ifstream am(unpacked / "bin" / "tony-am");
  std::stringstream content;
  content << am.rdbuf();
  EXPECT_EQ(content.str(), "am");
  EXPECT_EQ(::access((unpacked / "bin" / "tony-executor").c_str(), X_OK), 0);
  EXPECT_TRUE(fs::is_regular_file(unpacked / "lib" / "tony" / "libz.so.1"));
  EXPECT_TRUE(fs::is_regular_file(unpacked / "lib" / "tony" / "libz.so"));
}
