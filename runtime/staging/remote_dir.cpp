#include "runtime/staging/remote_dir.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "messages/error.hpp"
#include "runtime/staging/hadoop_fs.hpp"

namespace fs = std::filesystem;

namespace tony::staging {

namespace {

// The path of a file:// or bare URI (local), or of an hdfs:// one (remote);
// any other scheme goes through `hadoop fs` (cli).
struct where {
  bool local = true;
  std::string path;
  bool cli = false;
};

expected<where> parse(const std::string& uri) {
  if (access_of(uri) == fs_access::hadoop_cli)
    return where{false, uri, true};
  if (uri.rfind("file://", 0) == 0)
    return where{true, uri.substr(7)};
  if (!uri.empty() && uri[0] == '/')
    return where{true, uri};
  if (uri.rfind("hdfs://", 0) == 0) {
    auto slash = uri.find('/', 7);
    return where{false, slash == std::string::npos ? "/" : uri.substr(slash)};
  }
  return make_error(errc::invalid_config,
                    "'" + uri + "' is not a path nor a scheme://... location");
}

error missing(const std::string& uri) {
  return make_error(errc::unsatisfiable, uri + " does not exist");
}

error failed(const std::string& what, const std::string& uri,
             const webhdfs::response& res) {
  return make_error(errc::infrastructure, "WebHDFS " + what + " " + uri +
                                              " failed (HTTP " +
                                              std::to_string(res.status) +
                                              "): " + webhdfs::remote_message(res.body));
}

int64_t mtime_ms(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

} // namespace

expected<std::vector<dir_entry>> list_dir(const std::string& uri,
                                          const webhdfs::namenode_http& nn) {
  auto at = parse(uri);
  if (!at)
    return at.error();
  std::vector<dir_entry> result;
  if (at->local) {
    std::error_code ec;
    if (!fs::is_directory(at->path, ec))
      return missing(uri);
    for (auto& e : fs::directory_iterator(at->path, ec)) {
      struct stat st;
      if (::lstat(e.path().c_str(), &st) != 0)
        continue;
      result.push_back({e.path().filename().string(), S_ISDIR(st.st_mode),
                        static_cast<int64_t>(st.st_size), mtime_ms(st)});
    }
    if (ec)
      return make_error(errc::infrastructure,
                        "cannot list " + at->path + ": " + ec.message());
    return result;
  }
  if (at->cli) {
    auto dir = uri;
    while (dir.size() > 1 && dir.back() == '/')
      dir.pop_back();
    auto out = hadoop_fs(dir, {"-stat", "%F|%b|%Y|%n", dir + "/*"});
    if (!out) {
      if (out.error().code() != errc::unsatisfiable)
        return out.error();
      // A glob that matches nothing: an empty directory, or none.
      auto self = hadoop_fs(dir, {"-stat", "%F", dir});
      if (!self || self->find("directory") == std::string::npos)
        return missing(uri);
      return result;
    }
    auto entries = parse_listing(*out);
    if (!entries)
      return entries.error();
    for (auto& e : *entries)
      result.push_back({e.name, e.directory, e.size, e.modified_ms});
    return result;
  }
  auto res = webhdfs::call_op(nn, "GET", at->path, "LISTSTATUS", {}, true);
  if (!res)
    return res.error();
  if (res->status == 404)
    return missing(uri);
  if (res->status != 200)
    return failed("LISTSTATUS", uri, *res);
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (!j.is_object() || !j.contains("FileStatuses") || !j["FileStatuses"].is_object())
    return make_error(errc::infrastructure,
                      "WebHDFS LISTSTATUS " + uri + " answered no FileStatuses");
  for (auto& f : j["FileStatuses"].value("FileStatus", nlohmann::json::array()))
    if (f.is_object())
      result.push_back({f.value("pathSuffix", std::string{}),
                        f.value("type", std::string{}) == "DIRECTORY",
                        f.value("length", int64_t{0}),
                        f.value("modificationTime", int64_t{0})});
  return result;
}

expected<std::string> read_whole(const std::string& uri,
                                 const webhdfs::namenode_http& nn) {
  auto at = parse(uri);
  if (!at)
    return at.error();
  if (at->local) {
    std::ifstream in(at->path, std::ios::binary);
    if (!in)
      return missing(uri);
    return std::string{std::istreambuf_iterator<char>(in), {}};
  }
  if (at->cli)
    return hadoop_fs(uri, {"-cat", uri});
  auto res = webhdfs::call_op(nn, "GET", at->path, "OPEN", {}, true);
  if (!res)
    return res.error();
  if (res->status == 404)
    return missing(uri);
  if (res->status != 200)
    return failed("OPEN", uri, *res);
  return std::move(res->body);
}

expected<void> remove_tree(const std::string& uri, const webhdfs::namenode_http& nn) {
  auto at = parse(uri);
  if (!at)
    return at.error();
  if (at->local) {
    std::error_code ec;
    fs::remove_all(at->path, ec);
    if (ec)
      return make_error(errc::infrastructure,
                        "cannot remove " + at->path + ": " + ec.message());
    return ok;
  }
  if (at->cli) {
    if (auto ok = hadoop_fs(uri, {"-rm", "-r", "-f", uri}); !ok)
      return ok.error();
    return ok;
  }
  auto res = webhdfs::call_op(nn, "DELETE", at->path, "DELETE&recursive=true");
  if (!res)
    return res.error();
  if (res->status != 200 && res->status != 404)
    return failed("DELETE", uri, *res);
  return ok;
}

} // namespace tony::staging
