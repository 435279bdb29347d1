#include "runtime/staging/stager.hpp"

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "messages/error.hpp"
#include "runtime/process/process.hpp"

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

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

size_t collect_header(char* data, size_t size, size_t n, void* out) {
  std::string line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    auto key = line.substr(0, colon);
    for (auto& ch : key)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (key == "location") {
      auto value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' '))
        value.erase(0, 1);
      while (!value.empty() && (value.back() == '\r' || value.back() == '\n'))
        value.pop_back();
      *static_cast<std::string*>(out) = value;
    }
  }
  return size * n;
}

struct http_result {
  long status = 0;
  std::string body;
  std::string location;
};

// One HTTP call with a deadline; `upload` is a file to send as the body.
caf::expected<http_result> http(const std::string& method, const std::string& url,
                                const std::string& upload = {}) {
  auto curl = curl_easy_init();
  if (!curl)
    return fail("cannot initialize libcurl");
  http_result result;
  FILE* in = nullptr;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &result.location);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 300000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  struct curl_slist* headers = nullptr;
  if (!upload.empty()) {
    in = std::fopen(upload.c_str(), "rb");
    if (!in) {
      curl_easy_cleanup(curl);
      return fail("cannot open " + upload + " for upload");
    }
    struct stat st;
    ::fstat(fileno(in), &st);
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READDATA, in);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(st.st_size));
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  } else if (method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
  }
  auto rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
  if (headers)
    curl_slist_free_all(headers);
  if (in)
    std::fclose(in);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK)
    return fail(method + " " + url + ": " + curl_easy_strerror(rc));
  return result;
}

// The "message" of a WebHDFS RemoteException body, or the body itself.
std::string remote_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("RemoteException"))
    return j["RemoteException"].value("message", body);
  return body.substr(0, 300);
}

class webhdfs_stager : public stager {
public:
  webhdfs_stager(std::string http_address, std::string fs_uri, std::string dir,
                 std::string user)
      : base_("http://" + http_address + "/webhdfs/v1")
      , fs_uri_(std::move(fs_uri))
      , dir_(std::move(dir))
      , user_(std::move(user)) {
    // nop
  }

  caf::expected<local_resource> put(const std::string& path, const std::string& name,
                                    bool archive) override {
    auto target = dir_ + "/" + name;
    // CREATE answers 307 with the DataNode to send the bytes to.
    auto first = http("PUT", op_url(target, "CREATE") + "&overwrite=true");
    if (!first)
      return first.error();
    if (first->status != 307 || first->location.empty())
      return fail("WebHDFS CREATE " + target + " failed (HTTP " +
                  std::to_string(first->status) + "): " + remote_message(first->body));
    auto second = http("PUT", first->location, path);
    if (!second)
      return second.error();
    if (second->status != 201)
      return fail("WebHDFS upload of " + path + " to " + target + " failed (HTTP " +
                  std::to_string(second->status) + "): " + remote_message(second->body));
    auto status = http("GET", op_url(target, "GETFILESTATUS"));
    if (!status)
      return status.error();
    auto j = nlohmann::json::parse(status->body, nullptr, false);
    if (status->status != 200 || !j.is_object() || !j.contains("FileStatus"))
      return fail("WebHDFS GETFILESTATUS " + target + " failed (HTTP " +
                  std::to_string(status->status) + "): " + remote_message(status->body));
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
    auto res = http("DELETE", op_url(dir_, "DELETE") + "&recursive=true");
    if (!res)
      return res.error();
    if (res->status != 200)
      return fail("WebHDFS DELETE " + dir_ + " failed (HTTP " +
                  std::to_string(res->status) + "): " + remote_message(res->body));
    return caf::unit;
  }

  std::string uri() const override { return fs_uri_ + dir_; }

private:
  std::string op_url(const std::string& path, const char* op) const {
    return base_ + path + "?op=" + op + "&user.name=" + user_;
  }

  std::string base_;
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
