#include "runtime/history/history_store.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hadoop/webhdfs.hpp"
#include "messages/error.hpp"
#include "runtime/staging/hadoop_fs.hpp"
#include "runtime/staging/remote_dir.hpp"

namespace fs = std::filesystem;

namespace tony::history {

namespace {

error fail(std::string text) {
  return make_error(errc::infrastructure, std::move(text));
}

bool is_app_id(const std::string& s) {
  return s.rfind("application_", 0) == 0 && s.size() > 12;
}

std::string home_dir() {
  auto home = std::getenv("HOME");
  return home ? home : "/tmp";
}

// application_<ts>_<n> -> (ts, n); (0, 0) when not of that form.
std::pair<long long, long long> app_key(const std::string& id) {
  long long ts = 0, n = 0;
  auto rest = id.substr(std::min<size_t>(id.size(), 12));
  auto us = rest.find('_');
  try {
    ts = std::stoll(rest.substr(0, us));
    if (us != std::string::npos)
      n = std::stoll(rest.substr(us + 1));
  } catch (...) {
    return {0, 0};
  }
  return {ts, n};
}

void sort_newest_first(std::vector<stored_log>& logs) {
  std::sort(logs.begin(), logs.end(),
            [](auto& x, auto& y) { return newer_app(x.app_id, y.app_id); });
}

// -- local ---------------------------------------------------------------------------

class local_history : public history_dir {
public:
  explicit local_history(std::string dir)
      : dir_(std::move(dir)) {
    // nop
  }

  expected<std::vector<stored_log>> list() override {
    std::vector<stored_log> result;
    std::error_code ec;
    if (!fs::is_directory(dir_, ec))
      return fail("no history directory " + dir_ +
                  " (no job ran here yet, or pass the right --dir)");
    for (auto& entry : fs::directory_iterator(dir_, ec)) {
      auto name = entry.path().filename().string();
      if (entry.is_directory(ec) && is_app_id(name)) {
        auto log = entry.path() / "events.jsonl";
        if (fs::exists(log, ec))
          result.push_back(stamped({name, log.string()}));
      } else if (entry.is_regular_file(ec) && name.size() > 6 &&
                 name.compare(name.size() - 6, 6, ".jsonl") == 0 &&
                 is_app_id(name.substr(0, name.size() - 6))) {
        result.push_back(
            stamped({name.substr(0, name.size() - 6), entry.path().string()}));
      }
    }
    if (ec)
      return fail("cannot list " + dir_ + ": " + ec.message());
    sort_newest_first(result);
    return result;
  }

  expected<std::string> read(const stored_log& log) override {
    std::ifstream in(log.location, std::ios::binary);
    if (!in)
      return fail("cannot read " + log.location);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  expected<void> remove(const stored_log& log) override {
    std::error_code ec;
    fs::path path{log.location};
    // <jobs_dir>/<app-id>/events.jsonl: the job's whole directory goes.
    if (path.filename() == "events.jsonl" && path.parent_path().filename() == log.app_id)
      fs::remove_all(path.parent_path(), ec);
    else
      fs::remove(path, ec);
    if (ec)
      return fail("cannot delete " + log.location + ": " + ec.message());
    return ok;
  }

  std::string uri() const override { return dir_; }

private:
  static stored_log stamped(stored_log log) {
    struct stat st;
    if (::stat(log.location.c_str(), &st) == 0) {
      log.size = static_cast<int64_t>(st.st_size);
      log.modified_ms =
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
    }
    return log;
  }

  std::string dir_;
};

// -- WebHDFS ---------------------------------------------------------------------------

class webhdfs_history : public history_dir {
public:
  webhdfs_history(webhdfs::namenode_http nn, std::string fs_uri, std::string dir)
      : nn_(std::move(nn))
      , fs_uri_(std::move(fs_uri))
      , dir_(std::move(dir)) {
    // nop
  }

  expected<std::vector<stored_log>> list() override {
    auto res = webhdfs::call_op(nn_, "GET", dir_, "LISTSTATUS", {}, true);
    if (!res)
      return res.error();
    if (res->status != 200)
      return fail("WebHDFS LISTSTATUS " + uri() + " failed (HTTP " +
                  std::to_string(res->status) +
                  "): " + webhdfs::remote_message(res->body));
    auto j = nlohmann::json::parse(res->body, nullptr, false);
    std::vector<stored_log> result;
    if (!j.is_object() || !j.contains("FileStatuses"))
      return fail("WebHDFS LISTSTATUS " + uri() + " answered no FileStatuses");
    for (auto& f : j["FileStatuses"].value("FileStatus", nlohmann::json::array())) {
      auto name = f.value("pathSuffix", std::string{});
      auto type = f.value("type", std::string{});
      if (type == "FILE" && name.size() > 6 &&
          name.compare(name.size() - 6, 6, ".jsonl") == 0 &&
          is_app_id(name.substr(0, name.size() - 6)))
        result.push_back({name.substr(0, name.size() - 6), dir_ + "/" + name,
                          f.value("length", int64_t{-1}),
                          f.value("modificationTime", int64_t{0})});
      else if (type == "DIRECTORY" && is_app_id(name))
        result.push_back({name, dir_ + "/" + name + "/events.jsonl"});
    }
    sort_newest_first(result);
    return result;
  }

  expected<std::string> read(const stored_log& log) override {
    auto res = webhdfs::call_op(nn_, "GET", log.location, "OPEN", {}, true);
    if (!res)
      return res.error();
    if (res->status != 200)
      return fail("WebHDFS OPEN " + fs_uri_ + log.location + " failed (HTTP " +
                  std::to_string(res->status) +
                  "): " + webhdfs::remote_message(res->body));
    return std::move(res->body);
  }

  expected<void> remove(const stored_log& log) override {
    auto path = log.location;
    auto suffix = std::string{"/"} + log.app_id + "/events.jsonl";
    if (path.size() > suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
      path.resize(path.size() - std::string{"/events.jsonl"}.size());
    auto res = webhdfs::call_op(nn_, "DELETE", path, "DELETE&recursive=true", {}, true);
    if (!res)
      return res.error();
    if (res->status != 200)
      return fail("WebHDFS DELETE " + fs_uri_ + path + " failed (HTTP " +
                  std::to_string(res->status) +
                  "): " + webhdfs::remote_message(res->body));
    return ok;
  }

  std::string uri() const override { return fs_uri_ + dir_; }

private:
  webhdfs::namenode_http nn_;
  std::string fs_uri_;
  std::string dir_;
};

// -- hadoop fs -------------------------------------------------------------------------

// Any other filesystem (s3a://, gs://, ...) through the cluster's `hadoop
// fs` (runtime/staging/remote_dir.hpp).
class hadoop_cli_history : public history_dir {
public:
  explicit hadoop_cli_history(std::string uri)
      : uri_(std::move(uri)) {
    // nop
  }

  expected<std::vector<stored_log>> list() override {
    auto entries = staging::list_dir(uri_, {});
    if (!entries)
      return entries.error();
    std::vector<stored_log> result;
    for (auto& e : *entries) {
      auto& name = e.name;
      if (!e.directory && name.size() > 6 &&
          name.compare(name.size() - 6, 6, ".jsonl") == 0 &&
          is_app_id(name.substr(0, name.size() - 6)))
        result.push_back({name.substr(0, name.size() - 6), uri_ + "/" + name, e.length,
                          e.modified_ms});
      else if (e.directory && is_app_id(name))
        result.push_back({name, uri_ + "/" + name + "/events.jsonl"});
    }
    sort_newest_first(result);
    return result;
  }

  expected<std::string> read(const stored_log& log) override {
    return staging::read_whole(log.location, {});
  }

  expected<void> remove(const stored_log& log) override {
    auto path = log.location;
    auto suffix = std::string{"/"} + log.app_id + "/events.jsonl";
    if (path.size() > suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
      path.resize(path.size() - std::string{"/events.jsonl"}.size());
    return staging::remove_tree(path, {});
  }

  std::string uri() const override { return uri_; }

private:
  std::string uri_;
};

} // namespace

history_dir::~history_dir() {
  // nop
}

bool newer_app(const std::string& x, const std::string& y) {
  auto kx = app_key(x);
  auto ky = app_key(y);
  if (kx != ky)
    return kx > ky;
  return x > y;
}

std::string history_location(const std::string& configured, const std::string& default_fs,
                             const std::string& user) {
  bool on_hdfs = default_fs.rfind("hdfs://", 0) == 0;
  auto fs_root = default_fs;
  while (!fs_root.empty() && fs_root.back() == '/')
    fs_root.pop_back();
  std::string root = configured;
  if (root.empty()) {
    root = on_hdfs ? fs_root + "/user/" + user + "/.tony/history"
                   : "file://" + home_dir() + "/.tony/history";
  } else if (root[0] == '~') {
    root = "file://" + home_dir() + root.substr(1);
  } else if (root[0] == '/') {
    root = (on_hdfs ? fs_root : std::string{"file://"}) + root;
  }
  while (root.size() > 1 && root.back() == '/')
    root.pop_back();
  return root;
}

std::unique_ptr<history_dir> make_local_history(std::string dir) {
  return std::make_unique<local_history>(std::move(dir));
}

std::unique_ptr<history_dir> make_webhdfs_history(webhdfs::namenode_http nn,
                                                  std::string fs_uri, std::string dir) {
  return std::make_unique<webhdfs_history>(std::move(nn), std::move(fs_uri),
                                           std::move(dir));
}

expected<std::unique_ptr<history_dir>> open_history(const std::string& uri,
                                                    webhdfs::namenode_http nn) {
  if (uri.rfind("file://", 0) == 0)
    return make_local_history(uri.substr(7));
  if (uri.rfind("hdfs://", 0) == 0) {
    auto rest = uri.substr(7);
    auto slash = rest.find('/');
    if (slash == std::string::npos)
      return make_error(errc::invalid_config, "history dir " + uri + " has no path");
    auto authority = rest.substr(0, slash);
    if (nn.base.empty()) {
      // The client configuration's NameNode, or every NameNode of a
      // nameservice; without one, the host's default port.
      auto conf = hadoop::configuration::from_environment();
      // dfs.http.policy, the NameNodes' HTTP(S) addresses and nameservices
      // live in hdfs-site.xml, as tony-submit reads them.
      if (conf)
        if (auto ok = conf->add_hdfs_site(); !ok)
          return make_error(errc::invalid_config, ok.error().message());
      auto address =
          webhdfs::webhdfs_address(conf ? *conf : hadoop::configuration{}, authority);
      if (!address)
        return address.error();
      nn.base = *address;
    }
    return make_webhdfs_history(std::move(nn), "hdfs://" + authority, rest.substr(slash));
  }
  if (!uri.empty() && uri[0] == '~')
    return make_local_history(home_dir() + uri.substr(1));
  if (!uri.empty() && uri.find("://") == std::string::npos)
    return make_local_history(fs::absolute(uri).string());
  if (staging::access_of(uri) == staging::fs_access::hadoop_cli) {
    if (auto hadoop = staging::find_hadoop(uri); !hadoop)
      return hadoop.error();
    return std::unique_ptr<history_dir>{new hadoop_cli_history(uri)};
  }
  return make_error(errc::invalid_config, "cannot read a history dir at '" + uri +
                                              "': use a path, file://, hdfs:// or "
                                              "another Hadoop file system (scheme://)");
}

} // namespace tony::history
