#include "runtime/staging/node_bundle.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <openssl/evp.h>

#include "hadoop/crypto.hpp"
#include "messages/error.hpp"
#include "runtime/staging/stager.hpp"

namespace fs = std::filesystem;

namespace tony::staging {

namespace {

error fail(std::string text) {
  return make_error(errc::infrastructure, std::move(text));
}

bool is_executable_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

} // namespace

std::string text_hash(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr) != 1)
    return {};
  return hadoop::hex_encode({reinterpret_cast<const char*>(digest), 8});
}

expected<node_bundle> collect_node_bundle(const std::string& bin_dir) {
  node_bundle result;
  struct binary {
    const char* name;
    bool required; // tony-guard: without it executors guard with a shell
  };
  for (auto [name, required] : {binary{"tony-am", true}, binary{"tony-executor", true},
                                binary{"tony-guard", false}}) {
    auto path = bin_dir + "/" + name;
    if (is_executable_file(path))
      result.members.emplace_back(std::string{"bin/"} + name, path);
    else if (required)
      return fail("cannot ship " + path + ": no such executable (tony-submit takes " +
                  "tony-am and tony-executor from its own directory)");
  }
  std::error_code ec;
  auto lib_dir = fs::path(bin_dir) / ".." / "lib" / "tony";
  if (fs::is_directory(lib_dir, ec)) {
    // Subdirectories too: sasl2/ holds Cyrus SASL's plug-in.
    std::vector<std::string> names;
    for (auto& entry : fs::recursive_directory_iterator(lib_dir, ec))
      if (entry.is_regular_file(ec))
        names.push_back(entry.path().lexically_relative(lib_dir).string());
    if (ec)
      return fail("cannot list " + lib_dir.string() + ": " + ec.message());
    std::sort(names.begin(), names.end());
    for (auto& name : names)
      result.members.emplace_back("lib/tony/" + name,
                                  fs::weakly_canonical(lib_dir / name, ec).string());
    result.has_libraries = !names.empty();
  }
  // Names and contents: a binary or library that changes, or moves within
  // the archive, makes a new bundle.
  std::string manifest;
  for (auto& [name, path] : result.members) {
    auto hash = content_hash(path);
    if (hash.empty())
      return fail("cannot read " + path + " to ship it");
    manifest += name + '\0' + hash + '\n';
  }
  result.hash = text_hash(manifest);
  if (result.hash.empty())
    return fail("cannot hash the binaries to ship (OpenSSL SHA-256 failed)");
  return result;
}

expected<void> write_node_bundle(const node_bundle& bundle, const std::string& out,
                                 const std::string& scratch) {
  std::error_code ec;
  fs::remove_all(scratch, ec);
  auto cleanup = [&] {
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
  };
  // Links to the members, dereferenced by tar: nothing is copied twice.
  for (auto& [name, path] : bundle.members) {
    auto link = fs::path(scratch) / name;
    fs::create_directories(link.parent_path(), ec);
    if (!ec)
      fs::create_symlink(fs::absolute(path, ec), link, ec);
    if (ec) {
      cleanup();
      return fail("cannot lay out " + name + " in " + scratch + ": " + ec.message());
    }
  }
  archive_options opts;
  opts.follow_links = true;
  opts.fast = true; // made once per build, and every build makes one
  // A gateway checks a copy staged from another against its own
  // (submit/shared_cache.cpp).
  opts.reproducible = true;
  auto ok = make_archive(scratch, out, opts);
  cleanup();
  return ok;
}

} // namespace tony::staging
