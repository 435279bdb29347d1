#include "runtime/staging/stager.hpp"

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "messages/error.hpp"
#include "runtime/process/process.hpp"
#include "runtime/staging/webhdfs.hpp"

namespace fs = std::filesystem;

namespace tony::staging {

stager::~stager() {
  // nop
}

namespace {

caf::error fail(std::string text) {
  return make_error(errc::infrastructure, std::move(text));
}

// -- file:// --------------------------------------------------------------------

class file_stager : public stager {
public:
  explicit file_stager(std::string dir)
      : dir_(std::move(dir)) {
    // nop
  }

  caf::expected<local_resource> put(const std::string& path, const std::string& name,
                                    bool archive) override {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec)
      return fail("cannot create staging dir " + dir_ + ": " + ec.message());
    auto target = dir_ + "/" + name;
    fs::copy_file(path, target, fs::copy_options::overwrite_existing, ec);
    if (ec)
      return fail("cannot stage " + path + " to " + target + ": " + ec.message());
    struct stat st;
    if (::stat(target.c_str(), &st) != 0)
      return fail("cannot stat staged file " + target);
    local_resource res;
    res.name = name;
    res.url = "file://" + target;
    res.size = st.st_size;
    // YARN compares with the file's mtime in milliseconds exactly.
    res.timestamp =
        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
    res.archive = archive;
    res.visibility = "APPLICATION";
    return res;
  }

  caf::expected<void> remove_all() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    if (ec)
      return fail("cannot remove staging dir " + dir_ + ": " + ec.message());
    return caf::unit;
  }

  std::string uri() const override { return "file://" + dir_; }

private:
  std::string dir_;
};

// -- WebHDFS -------------------------------------------------------------------------

class webhdfs_stager : public stager {
public:
  webhdfs_stager(std::string http_address, std::string fs_uri, std::string dir,
                 std::string user)
      : http_address_(std::move(http_address))
      , fs_uri_(std::move(fs_uri))
      , dir_(std::move(dir))
      , user_(std::move(user)) {
    // nop
  }

  caf::expected<local_resource> put(const std::string& path, const std::string& name,
                                    bool archive) override {
    auto target = dir_ + "/" + name;
    // CREATE answers 307 with the DataNode to send the bytes to.
    auto first = webhdfs::call("PUT", op_url(target, "CREATE") + "&overwrite=true");
    if (!first)
      return first.error();
    if (first->status != 307 || first->location.empty())
      return fail("WebHDFS CREATE " + target + " failed (HTTP " +
                  std::to_string(first->status) +
                  "): " + webhdfs::remote_message(first->body));
    auto second = webhdfs::call("PUT", first->location, path);
    if (!second)
      return second.error();
    if (second->status != 201)
      return fail("WebHDFS upload of " + path + " to " + target + " failed (HTTP " +
                  std::to_string(second->status) +
                  "): " + webhdfs::remote_message(second->body));
    auto status = webhdfs::call("GET", op_url(target, "GETFILESTATUS"));
    if (!status)
      return status.error();
    auto j = nlohmann::json::parse(status->body, nullptr, false);
    if (status->status != 200 || !j.is_object() || !j.contains("FileStatus"))
      return fail("WebHDFS GETFILESTATUS " + target + " failed (HTTP " +
                  std::to_string(status->status) +
                  "): " + webhdfs::remote_message(status->body));
    auto& st = j["FileStatus"];
    local_resource res;
    res.name = name;
    res.url = fs_uri_ + target;
    res.size = st.value("length", int64_t{0});
    res.timestamp = st.value("modificationTime", int64_t{0});
    res.archive = archive;
    res.visibility = "APPLICATION";
    return res;
  }

  caf::expected<void> remove_all() override {
    auto res = webhdfs::call("DELETE", op_url(dir_, "DELETE") + "&recursive=true");
    if (!res)
      return res.error();
    if (res->status != 200)
      return fail("WebHDFS DELETE " + dir_ + " failed (HTTP " +
                  std::to_string(res->status) +
                  "): " + webhdfs::remote_message(res->body));
    return caf::unit;
  }

  std::string uri() const override { return fs_uri_ + dir_; }

private:
  std::string op_url(const std::string& path, const char* op) const {
    return webhdfs::op_url(http_address_, path, op, user_);
  }

  std::string http_address_;
  std::string fs_uri_;
  std::string dir_;
  std::string user_;
};

} // namespace

std::unique_ptr<stager> make_file_stager(std::string dir) {
  return std::make_unique<file_stager>(std::move(dir));
}

std::unique_ptr<stager> make_webhdfs_stager(std::string http_address, std::string fs_uri,
                                            std::string dir, std::string user) {
  return std::make_unique<webhdfs_stager>(std::move(http_address), std::move(fs_uri),
                                          std::move(dir), std::move(user));
}

caf::expected<std::unique_ptr<stager>> make_stager(const std::string& uri,
                                                   const std::string& webhdfs_address,
                                                   const std::string& user) {
  if (uri.rfind("file://", 0) == 0)
    return make_file_stager(uri.substr(7));
  if (uri.rfind("hdfs://", 0) == 0) {
    auto rest = uri.substr(7);
    auto slash = rest.find('/');
    if (slash == std::string::npos)
      return make_error(errc::invalid_config, "staging URI " + uri + " has no path");
    return make_webhdfs_stager(webhdfs_address, "hdfs://" + rest.substr(0, slash),
                               rest.substr(slash), user);
  }
  if (!uri.empty() && uri[0] == '/')
    return make_file_stager(uri);
  return make_error(
      errc::invalid_config,
      "cannot stage to '" + uri +
          "': tony stages to file:// or hdfs:// (set [cluster] staging_dir)");
}

caf::expected<void> make_archive(const std::string& dir, const std::string& out) {
  process::spawn_options opts;
  opts.argv = {"tar", "-czf", out, "-C", dir, "."};
  opts.env = process::current_environment();
  auto log = out + ".log";
  opts.stdout_path = log;
  opts.stderr_path = log;
  auto child = process::spawn(opts);
  if (!child)
    return child.error();
  auto exit = process::wait(child->pid);
  if (exit.exit_code != 0)
    return fail("cannot archive " + dir + ": tar says: " + process::tail_file(log, 500));
  std::error_code ec;
  fs::remove(log, ec);
  return caf::unit;
}

} // namespace tony::staging
