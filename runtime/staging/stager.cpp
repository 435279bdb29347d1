#include "runtime/staging/stager.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "hadoop/crypto.hpp"
#include "hadoop/webhdfs.hpp"
#include "messages/error.hpp"
#include "runtime/process/process.hpp"
#include "runtime/staging/hadoop_fs.hpp"

namespace fs = std::filesystem;

namespace tony::staging {

stager::~stager() {
  // nop
}

namespace {

error fail(std::string text) {
  return make_error(errc::infrastructure, std::move(text));
}

// -- file:// --------------------------------------------------------------------

std::string octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%o", mode & 07777);
  return buf;
}

// What makes one path of a cached copy untrustworthy, or empty: `owned`
// tells whether its owner is the user (or the superuser, who can write
// anything anyway). The directory above the copy's may be shared if it is
// sticky (as /tmp): others cannot move what is in it.
std::string doubt_of(const std::string& path, const std::string& owner, bool owned,
                     unsigned mode, bool above) {
  if (above && (mode & 01000) != 0)
    return {};
  if (!owned)
    return path + " is owned by " + owner;
  if ((mode & 022) != 0)
    return path + " is writable by its group or others (mode " + octal(mode) + ")";
  return {};
}

class file_stager : public stager {
public:
  file_stager(std::string dir, permissions modes)
      : dir_(std::move(dir))
      , modes_(modes) {
    // nop
  }

  expected<local_resource> put(const std::string& path, const std::string& name,
                               bool archive) override {
    return place(path, name, archive, true);
  }

  expected<local_resource> put_shared(const std::string& path, const std::string& name,
                                      bool archive) override {
    return place(path, name, archive, false);
  }

  expected<local_resource> put_private(const std::string& path,
                                       const std::string& name) override {
    if (auto ok = make_dir(); !ok)
      return ok.error();
    // Created 0600 before a byte is written: never readable by others.
    auto target = dir_ + "/" + name;
    auto partial = target + ".partial." + std::to_string(::getpid());
    std::ifstream from(path, std::ios::binary);
    int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (!from || fd < 0) {
      if (fd >= 0)
        ::close(fd);
      return fail("cannot stage " + path + " to " + target);
    }
    ::fchmod(fd, 0600);
    std::string bytes{std::istreambuf_iterator<char>(from), {}};
    bool ok =
        ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    ok = ::close(fd) == 0 && ok;
    if (!ok || ::rename(partial.c_str(), target.c_str()) != 0) {
      ::unlink(partial.c_str());
      return fail("cannot stage " + path + " to " + target);
    }
    return stat(name, false);
  }

  expected<local_resource> stat(const std::string& name, bool archive) override {
    auto target = dir_ + "/" + name;
    struct stat st;
    if (::stat(target.c_str(), &st) != 0)
      return make_error(errc::unsatisfiable, "no staged file " + target);
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

  expected<std::string> owner() override {
    struct stat st;
    if (::stat(dir_.c_str(), &st) != 0)
      return make_error(errc::unsatisfiable,
                        "cannot stat " + dir_ + ": " + std::strerror(errno));
    return std::to_string(st.st_uid);
  }

  expected<std::string> doubt(const std::string& name, const std::string&,
                              const std::string& also) override {
    auto file = dir_ + "/" + name;
    auto above = fs::path{dir_}.parent_path().string();
    auto uid = ::geteuid();
    for (auto& [path, is_above] :
         {std::pair{file, false}, std::pair{dir_, false}, std::pair{above, true}}) {
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0)
        return fail("cannot stat " + path + ": " + std::strerror(errno));
      if (S_ISLNK(st.st_mode))
        return path + " is a symbolic link";
      auto said = doubt_of(path,
                           "uid " + std::to_string(st.st_uid) + ", not by uid " +
                               std::to_string(uid),
                           st.st_uid == uid || st.st_uid == 0 ||
                               (!also.empty() && std::to_string(st.st_uid) == also),
                           st.st_mode, is_above);
      if (!said.empty())
        return said;
    }
    return std::string{};
  }

  expected<staged_content> content(const std::string& name) override {
    staged_content c;
    c.path = dir_ + "/" + name;
    struct stat st;
    if (::stat(c.path.c_str(), &st) != 0)
      return make_error(errc::unsatisfiable, "no staged file " + c.path);
    c.length = st.st_size;
    c.identity = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
                 std::to_string(st.st_size) + ":" + std::to_string(st.st_ctim.tv_sec) +
                 "." + std::to_string(st.st_ctim.tv_nsec);
    return c;
  }

  expected<std::string> read(const std::string& name) override {
    auto target = dir_ + "/" + name;
    std::ifstream in(target, std::ios::binary);
    if (!in)
      return make_error(errc::unsatisfiable, "no staged file " + target);
    std::string bytes{std::istreambuf_iterator<char>(in), {}};
    if (in.bad())
      return fail("cannot read " + target);
    return bytes;
  }

  expected<void> remove_all() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    if (ec)
      return fail("cannot remove staging dir " + dir_ + ": " + ec.message());
    return ok;
  }

  std::string uri() const override { return "file://" + dir_; }

private:
  // Copy, then move into place: a concurrent reader sees the whole file or
  // none. With `replace` false the copy is linked into place instead, and
  // link() never replaces: a copy another submit put there first stays.
  expected<local_resource> place(const std::string& path, const std::string& name,
                                 bool archive, bool replace) {
    if (auto ok = make_dir(); !ok)
      return ok.error();
    std::error_code ec;
    auto target = dir_ + "/" + name;
    auto partial = target + ".partial." + std::to_string(::getpid());
    fs::copy_file(path, partial, fs::copy_options::overwrite_existing, ec);
    if (!ec && ::chmod(partial.c_str(), static_cast<mode_t>(modes_.file)) != 0)
      ec = std::error_code(errno, std::generic_category());
    if (!ec && replace) {
      fs::rename(partial, target, ec);
    } else if (!ec) {
      if (::link(partial.c_str(), target.c_str()) != 0 && errno != EEXIST)
        ec = std::error_code(errno, std::generic_category());
    }
    std::error_code ignored;
    fs::remove(partial, ignored);
    if (ec)
      return fail("cannot stage " + path + " to " + target + ": " + ec.message());
    return stat(name, archive);
  }

  // The directory, made with its mode (the parents keep theirs).
  expected<void> make_dir() {
    std::error_code ec;
    bool made = fs::create_directories(dir_, ec);
    if (ec)
      return fail("cannot create staging dir " + dir_ + ": " + ec.message());
    // Only a directory made here: a shared one (a history dir) keeps its mode.
    if (made && ::chmod(dir_.c_str(), static_cast<mode_t>(modes_.dir)) != 0)
      return fail("cannot set the mode of staging dir " + dir_ + ": " +
                  std::strerror(errno));
    return ok;
  }

  std::string dir_;
  permissions modes_;
};

// -- WebHDFS -------------------------------------------------------------------------

class webhdfs_stager : public stager {
public:
  webhdfs_stager(webhdfs::namenode_http nn, std::string fs_uri, std::string dir,
                 permissions modes)
      : nn_(std::move(nn))
      , fs_uri_(std::move(fs_uri))
      , dir_(std::move(dir))
      , modes_(modes) {
    // nop
  }

  expected<local_resource> put(const std::string& path, const std::string& name,
                               bool archive) override {
    if (auto ok = upload(path, name, {}); !ok)
      return ok.error();
    return stat(name, archive);
  }

  expected<local_resource> put_shared(const std::string& path, const std::string& name,
                                      bool archive) override {
    if (auto ok = upload(path, name, {}, false); !ok)
      return ok.error();
    return stat(name, archive);
  }

  expected<local_resource> put_private(const std::string& path,
                                       const std::string& name) override {
    // The NameNode applies the permission at CREATE: never readable by others.
    if (auto ok = upload(path, name, "&permission=600"); !ok)
      return ok.error();
    return stat(name, false);
  }

  expected<local_resource> stat(const std::string& name, bool archive) override {
    auto target = dir_ + "/" + name;
    auto st = file_status(target);
    if (!st)
      return st.error();
    local_resource res;
    res.name = name;
    res.url = fs_uri_ + target;
    res.size = st->value("length", int64_t{0});
    res.timestamp = st->value("modificationTime", int64_t{0});
    res.archive = archive;
    res.visibility = "APPLICATION";
    return res;
  }

  expected<std::string> owner() override {
    auto st = file_status(dir_);
    if (!st)
      return st.error();
    return st->value("owner", std::string{});
  }

  expected<std::string> doubt(const std::string& name, const std::string& user,
                              const std::string& also) override {
    auto above = dir_.substr(0, dir_.rfind('/'));
    for (auto& [path, is_above] : {std::pair{dir_ + "/" + name, false},
                                   std::pair{dir_, false}, std::pair{above, true}}) {
      auto st = file_status(path.empty() ? "/" : path);
      if (!st)
        return st.error();
      auto owner = st->value("owner", std::string{});
      unsigned mode = 0;
      try {
        mode =
            static_cast<unsigned>(std::stoul(st->value("permission", "777"), nullptr, 8));
      } catch (const std::exception&) {
        mode = 0777;
      }
      auto said =
          doubt_of(fs_uri_ + path,
                   owner + ", not by " + user + (also.empty() ? "" : " or " + also),
                   owner == user || (!also.empty() && owner == also), mode, is_above);
      if (!said.empty())
        return said;
    }
    return std::string{};
  }

  // GETFILECHECKSUM answers 307 with the DataNode that computes it.
  expected<staged_content> content(const std::string& name) override {
    auto target = dir_ + "/" + name;
    auto st = file_status(target);
    if (!st)
      return st.error();
    staged_content c;
    c.length = st->value("length", int64_t{0});
    c.block_size = st->value("blockSize", int64_t{0});
    auto first = webhdfs::call_op(nn_, "GET", target, "GETFILECHECKSUM");
    if (!first)
      return first.error();
    auto answer = std::move(*first);
    if (answer.status == 307 && !answer.location.empty()) {
      auto second = webhdfs::call("GET", answer.location, data_node_auth());
      if (!second)
        return second.error();
      answer = std::move(*second);
    }
    auto j = nlohmann::json::parse(answer.body, nullptr, false);
    const nlohmann::json* sum = nullptr;
    if (answer.status == 200 && j.is_object() && j.contains("FileChecksum"))
      sum = &j["FileChecksum"];
    if (!sum || !sum->is_object() || !(*sum)["algorithm"].is_string() ||
        !(*sum)["bytes"].is_string())
      return fail("WebHDFS GETFILECHECKSUM " + target + " failed (HTTP " +
                  std::to_string(answer.status) +
                  "): " + webhdfs::remote_message(answer.body));
    c.algorithm = (*sum)["algorithm"].get<std::string>();
    c.bytes = (*sum)["bytes"].get<std::string>();
    // WebHDFS writes the whole buffer the checksum was written into, zeros
    // past its `length` included.
    if (auto& length = (*sum)["length"];
        length.is_number_unsigned() && length.get<uint64_t>() * 2 < c.bytes.size())
      c.bytes.resize(length.get<uint64_t>() * 2);
    return c;
  }

  // OPEN answers 307 with the DataNode that serves the bytes.
  expected<std::string> read(const std::string& name) override {
    auto target = dir_ + "/" + name;
    auto first = webhdfs::call_op(nn_, "GET", target, "OPEN");
    if (!first)
      return first.error();
    if (first->status == 404)
      return make_error(errc::unsatisfiable, "no staged file " + fs_uri_ + target);
    if (first->status == 200)
      return std::move(first->body);
    if (first->status != 307 || first->location.empty())
      return fail("WebHDFS OPEN " + target + " failed (HTTP " +
                  std::to_string(first->status) +
                  "): " + webhdfs::remote_message(first->body));
    auto second = webhdfs::call("GET", first->location, data_node_auth());
    if (!second)
      return second.error();
    if (second->status != 200)
      return fail("WebHDFS OPEN " + target + " failed at the DataNode (HTTP " +
                  std::to_string(second->status) +
                  "): " + webhdfs::remote_message(second->body));
    return std::move(second->body);
  }

  expected<void> remove_all() override {
    auto res = webhdfs::call_op(nn_, "DELETE", dir_, "DELETE&recursive=true");
    if (!res)
      return res.error();
    if (res->status != 200)
      return fail("WebHDFS DELETE " + dir_ + " failed (HTTP " +
                  std::to_string(res->status) +
                  "): " + webhdfs::remote_message(res->body));
    return ok;
  }

  std::string uri() const override { return fs_uri_ + dir_; }

private:
  // GETFILESTATUS of `path`: its FileStatus object, errc::unsatisfiable
  // when there is none.
  expected<nlohmann::json> file_status(const std::string& path) {
    auto status = webhdfs::call_op(nn_, "GET", path, "GETFILESTATUS");
    if (!status)
      return status.error();
    if (status->status == 404)
      return make_error(errc::unsatisfiable, "no staged file " + fs_uri_ + path);
    auto j = nlohmann::json::parse(status->body, nullptr, false);
    if (status->status != 200 || !j.is_object() || !j.contains("FileStatus"))
      return fail("WebHDFS GETFILESTATUS " + path + " failed (HTTP " +
                  std::to_string(status->status) +
                  "): " + webhdfs::remote_message(status->body));
    return std::move(j["FileStatus"]);
  }

  // Uploads under a temporary name, then renames: a concurrent reader sees
  // the whole file or none. CREATE answers 307 with the DataNode to send
  // the bytes to (its URL carries the NameNode's own delegation token).
  // With `replace` false a target that exists (another submit staged the
  // same content-addressed name) stays, and the upload is dropped.
  expected<void> upload(const std::string& path, const std::string& name,
                        std::string extra, bool replace = true) {
    if (auto ok = make_dir(); !ok)
      return ok;
    auto target = dir_ + "/" + name;
    auto partial = target + ".partial." + std::to_string(::getpid());
    if (extra.empty())
      extra = "&permission=" + octal(modes_.file);
    auto first = webhdfs::call_op(nn_, "PUT", partial, "CREATE&overwrite=true" + extra);
    if (!first)
      return first.error();
    if (first->status != 307 || first->location.empty())
      return fail("WebHDFS CREATE " + partial + " failed (HTTP " +
                  std::to_string(first->status) +
                  "): " + webhdfs::remote_message(first->body));
    auto second = webhdfs::call("PUT", first->location, data_node_auth(), path);
    if (!second)
      return second.error();
    if (second->status != 201)
      return fail("WebHDFS upload of " + path + " to " + partial + " failed (HTTP " +
                  std::to_string(second->status) +
                  "): " + webhdfs::remote_message(second->body));
    for (int round = 0; round < 2; ++round) {
      auto moved = webhdfs::call_op(nn_, "PUT", partial, "RENAME&destination=" + target);
      if (!moved)
        return moved.error();
      auto j = nlohmann::json::parse(moved->body, nullptr, false);
      if (moved->status == 200 && j.is_object() && j.value("boolean", false))
        break;
      if (!replace && moved->status == 200) {
        if (auto there = webhdfs::call_op(nn_, "GET", target, "GETFILESTATUS");
            there && there->status == 200) {
          webhdfs::call_op(nn_, "DELETE", partial, "DELETE");
          break;
        }
      }
      if (round == 1)
        return fail("WebHDFS RENAME " + partial + " to " + target + " failed (HTTP " +
                    std::to_string(moved->status) +
                    "): " + webhdfs::remote_message(moved->body));
      // The target exists (an older copy): replace it.
      webhdfs::call_op(nn_, "DELETE", target, "DELETE");
    }
    return ok;
  }

  // The directory with its mode, once per stager (CREATE would make it with
  // the NameNode's default mode).
  expected<void> make_dir() {
    if (dir_made_)
      return ok;
    auto res =
        webhdfs::call_op(nn_, "PUT", dir_, "MKDIRS&permission=" + octal(modes_.dir));
    if (!res)
      return res.error();
    if (res->status != 200)
      return fail("WebHDFS MKDIRS " + dir_ + " failed (HTTP " +
                  std::to_string(res->status) +
                  "): " + webhdfs::remote_message(res->body));
    // An existing directory keeps its mode (a shared history dir).
    dir_made_ = true;
    return ok;
  }

  // The DataNode takes the token in the redirect's URL; only the CA
  // carries over.
  webhdfs::http_auth data_node_auth() const {
    webhdfs::http_auth auth;
    auth.ca_file = nn_.auth.ca_file;
    return auth;
  }

  webhdfs::namenode_http nn_;
  std::string fs_uri_;
  std::string dir_;
  permissions modes_;
  bool dir_made_ = false;
};

// -- hadoop fs ---------------------------------------------------------------------

// Any other filesystem (s3a://, gs://, abfs://, ...) through the cluster's
// `hadoop fs`. `dir_` is the whole URI of the staging dir.
class hadoop_cli_stager : public stager {
public:
  explicit hadoop_cli_stager(std::string dir)
      : dir_(std::move(dir)) {
    while (dir_.size() > 1 && dir_.back() == '/')
      dir_.pop_back();
  }

  expected<local_resource> put(const std::string& path, const std::string& name,
                               bool archive) override {
    if (auto ok = upload(path, name); !ok)
      return ok.error();
    return stat(name, archive);
  }

  // An object store has no atomic "create unless it exists": a copy that is
  // there already stays, else this one is written.
  expected<local_resource> put_shared(const std::string& path, const std::string& name,
                                      bool archive) override {
    if (auto there = stat(name, archive); there)
      return there;
    return put(path, name, archive);
  }

  expected<local_resource> put_private(const std::string& path,
                                       const std::string& name) override {
    if (auto ok = upload(path, name); !ok)
      return ok.error();
    auto target = dir_ + "/" + name;
    if (auto ok = hadoop_fs(target, {"-chmod", "600", target}); !ok)
      return ok.error();
    return stat(name, false);
  }

  // Object stores report every file as the caller's, writable by all: the
  // bucket's policy, not a mode, decides who writes (stager.hpp).
  expected<std::string> doubt(const std::string&, const std::string&,
                              const std::string&) override {
    return std::string{};
  }

  expected<std::string> owner() override { return std::string{}; }

  expected<local_resource> stat(const std::string& name, bool archive) override {
    auto target = dir_ + "/" + name;
    auto out = hadoop_fs(target, {"-stat", "%b %Y", target});
    if (!out)
      return out.error();
    auto st = parse_stat(*out);
    if (!st)
      return st.error();
    local_resource res;
    res.name = name;
    res.url = target;
    res.size = st->size;
    res.timestamp = st->modified_ms;
    res.archive = archive;
    res.visibility = "APPLICATION";
    return res;
  }

  // Nothing to compare: the bucket's policy decides who writes (stager.hpp).
  expected<staged_content> content(const std::string& name) override {
    auto res = stat(name, false);
    if (!res)
      return res.error();
    staged_content c;
    c.length = res->size;
    return c;
  }

  expected<std::string> read(const std::string& name) override {
    auto target = dir_ + "/" + name;
    return hadoop_fs(target, {"-cat", target});
  }

  expected<void> remove_all() override {
    if (auto ok = hadoop_fs(dir_, {"-rm", "-r", "-f", dir_}); !ok)
      return ok.error();
    return ok;
  }

  std::string uri() const override { return dir_; }

private:
  expected<void> upload(const std::string& path, const std::string& name) {
    auto target = dir_ + "/" + name;
    // Each call is a JVM start: the directory is made once per stager.
    if (!made_dir_) {
      if (auto ok = hadoop_fs(dir_, {"-mkdir", "-p", dir_}); !ok)
        return ok.error();
      made_dir_ = true;
    }
    if (auto ok = hadoop_fs(target, {"-put", "-f", path, target}); !ok)
      return ok.error();
    return ok;
  }

  std::string dir_;
  bool made_dir_ = false;
};

} // namespace

std::unique_ptr<stager> make_file_stager(std::string dir, permissions modes) {
  return std::make_unique<file_stager>(std::move(dir), modes);
}

std::unique_ptr<stager> make_webhdfs_stager(webhdfs::namenode_http nn, std::string fs_uri,
                                            std::string dir, permissions modes) {
  return std::make_unique<webhdfs_stager>(std::move(nn), std::move(fs_uri),
                                          std::move(dir), modes);
}

std::unique_ptr<stager> make_hadoop_cli_stager(std::string uri) {
  return std::make_unique<hadoop_cli_stager>(std::move(uri));
}

expected<std::unique_ptr<stager>>
make_stager(const std::string& uri, const webhdfs::namenode_http& nn, permissions modes) {
  if (uri.rfind("file://", 0) == 0)
    return make_file_stager(uri.substr(7), modes);
  if (uri.rfind("hdfs://", 0) == 0) {
    auto rest = uri.substr(7);
    auto slash = rest.find('/');
    if (slash == std::string::npos)
      return make_error(errc::invalid_config, "staging URI " + uri + " has no path");
    return make_webhdfs_stager(nn, "hdfs://" + rest.substr(0, slash), rest.substr(slash),
                               modes);
  }
  if (!uri.empty() && uri[0] == '/')
    return make_file_stager(uri, modes);
  if (access_of(uri) == fs_access::hadoop_cli) {
    if (uri.find('/', scheme_of(uri).size() + 3) == std::string::npos)
      return make_error(errc::invalid_config, "staging URI " + uri + " has no path");
    if (auto hadoop = find_hadoop(uri); !hadoop)
      return hadoop.error();
    return make_hadoop_cli_stager(uri);
  }
  return make_error(errc::invalid_config,
                    "cannot stage to '" + uri +
                        "': tony stages to a path, file://, hdfs:// or another "
                        "Hadoop file system (scheme://...; set [cluster] staging_dir)");
}

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return {};
  auto* ctx = EVP_MD_CTX_new();
  if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx);
    return {};
  }
  char buf[1 << 16];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0)
    EVP_DigestUpdate(ctx, buf, static_cast<size_t>(in.gcount()));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, digest, &len);
  EVP_MD_CTX_free(ctx);
  if (in.bad())
    return {};
  return hadoop::hex_encode({reinterpret_cast<const char*>(digest), len});
}

std::string content_hash(const std::string& path) {
  return file_sha256(path).substr(0, 16);
}

expected<void> make_archive(const std::string& dir, const std::string& out,
                            archive_options archive) {
  process::spawn_options opts;
  opts.argv = {"tar", archive.follow_links ? "-chf" : "-cf", out,
               archive.fast ? "--use-compress-program=gzip -1" : "--gzip"};
  if (archive.reproducible)
    // gzip reading a pipe writes no name and no time.
    for (auto* flag :
         {"--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner"})
      opts.argv.emplace_back(flag);
  for (auto* arg : {"-C", dir.c_str(), "."})
    opts.argv.emplace_back(arg);
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
  return ok;
}

} // namespace tony::staging
