#include "submit/shipping.hpp"

#include <filesystem>
#include <iostream>

#include "base/files.hpp"
#include "hadoop/hdfs/nameservice.hpp"
#include "messages/error.hpp"
#include "runtime/staging/hadoop_fs.hpp"
#include "runtime/staging/stager.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

struct uri_parts {
  std::string scheme;
  std::string authority;
  std::string path; // begins with '/'
};

expected<uri_parts> split_uri(const std::string& uri) {
  auto sep = uri.find("://");
  if (sep == std::string::npos)
    return make_error(errc::invalid_config, "'" + uri + "' is not a URI");
  uri_parts out;
  out.scheme = uri.substr(0, sep);
  auto rest = uri.substr(sep + 3);
  auto slash = rest.find('/');
  out.authority = rest.substr(0, slash);
  out.path = slash == std::string::npos ? "/" : rest.substr(slash);
  return out;
}

// "hdfs://nn:8020" of fs.defaultFS, as host:port ("" when it is not HDFS).
std::string default_hdfs_authority(const hadoop::configuration& conf) {
  auto fs_uri = conf.get_or("fs.defaultFS", "file:///");
  if (fs_uri.rfind("hdfs://", 0) != 0)
    return {};
  auto authority = fs_uri.substr(7);
  return authority.substr(0, authority.find('/'));
}

} // namespace

expected<std::string> resolve_viewfs(const std::string& uri,
                                     const hadoop::configuration& conf) {
  auto parts = split_uri(uri);
  if (!parts)
    return parts.error();
  auto table = parts->authority;
  if (table.empty())
    table = conf.get_or("fs.viewfs.mounttable.default.name.key", "default");
  auto prefix = "fs.viewfs.mounttable." + table + ".link.";
  std::string best_link;
  std::string best_target;
  for (auto& key : conf.keys()) {
    if (key.rfind(prefix, 0) != 0)
      continue;
    auto link = key.substr(prefix.size());
    while (link.size() > 1 && link.back() == '/')
      link.pop_back();
    bool covers =
        parts->path == link || (parts->path.rfind(link, 0) == 0 &&
                                (link == "/" || parts->path[link.size()] == '/'));
    if (covers && link.size() > best_link.size()) {
      best_link = link;
      best_target = conf.get_or(key, "");
    }
  }
  if (best_target.empty())
    return make_error(errc::unsatisfiable, "no viewfs mount link covers " + uri +
                                               " (looked for " + prefix +
                                               "<path> in the Hadoop configuration)");
  while (!best_target.empty() && best_target.back() == '/')
    best_target.pop_back();
  auto rest = best_link == "/" ? parts->path : parts->path.substr(best_link.size());
  return best_target + rest;
}

expected<std::string> webhdfs_address_of(const std::string& authority,
                                         const hadoop::configuration& conf) {
  if (authority.empty() || hdfs::is_nameservice(conf, authority) ||
      authority == default_hdfs_authority(conf))
    return webhdfs::webhdfs_address(conf, authority);
  // Another cluster's NameNode: its default port, under this cluster's
  // HTTP policy.
  hadoop::configuration defaults;
  defaults.set("dfs.http.policy", conf.get_or("dfs.http.policy", "HTTP_ONLY"));
  return webhdfs::namenode_address(defaults, authority.substr(0, authority.find(':')));
}

expected<local_resource> remote_resource(const std::string& uri, const std::string& name,
                                         bool archive, const hadoop::configuration& conf,
                                         const webhdfs::http_auth& auth) {
  auto target = uri;
  if (uri.rfind("viewfs://", 0) == 0) {
    auto resolved = resolve_viewfs(uri, conf);
    if (!resolved)
      return resolved.error();
    target = *resolved;
  }
  if (staging::access_of(target) == staging::fs_access::hadoop_cli) {
    // s3a://, gs://, abfs://, ...: looked up with the cluster's `hadoop fs`.
    auto slash = target.rfind('/');
    if (slash == std::string::npos || slash < staging::scheme_of(target).size() + 3)
      return make_error(errc::invalid_config, uri + " names no file");
    if (auto hadoop = staging::find_hadoop(target); !hadoop)
      return hadoop.error();
    auto stager = staging::make_hadoop_cli_stager(target.substr(0, slash));
    auto res = stager->stat(target.substr(slash + 1), archive);
    if (!res)
      return res.error();
    res->name = name;
    return res;
  }
  auto parts = split_uri(target);
  if (!parts)
    return parts.error();
  if (parts->scheme != "hdfs")
    return make_error(errc::invalid_config,
                      uri + " is not on HDFS; tony ships local paths, hdfs:// or "
                            "viewfs:// URIs and other Hadoop file systems' URIs");
  auto authority =
      parts->authority.empty() ? default_hdfs_authority(conf) : parts->authority;
  if (authority.empty())
    return make_error(errc::invalid_config,
                      uri + " names no NameNode and fs.defaultFS is not HDFS; write "
                            "hdfs://<namenode>/path");
  auto address = webhdfs_address_of(authority, conf);
  if (!address)
    return address.error();
  auto path = fs::path{parts->path};
  auto stager = staging::make_webhdfs_stager({*address, auth}, "hdfs://" + authority,
                                             path.parent_path().string());
  auto res = stager->stat(path.filename().string(), archive);
  if (!res)
    return res.error();
  res->name = name;
  return res;
}

namespace {

// Stages the job's files one by one; `where` names each entry's job.toml key
// in messages.
class shipper {
public:
  shipper(staging::stager& stager, std::string scratch, const hadoop::configuration& conf,
          webhdfs::http_auth auth)
      : stager_(stager)
      , scratch_(std::move(scratch))
      , conf_(conf)
      , auth_(std::move(auth)) {
    // nop
  }

  expected<local_resource> ship(const std::string& source, const std::string& name,
                                bool archive, const std::string& where,
                                const stage_fn& stage = nullptr) {
    std::error_code ec;
    auto res = source.find("://") != std::string::npos
                   ? remote_resource(source, name, archive, conf_, auth_)
               : stage && fs::is_regular_file(source, ec)
                   ? stage(source, fs::path{source}.filename().string(), archive)
                   : stage_local(source, archive);
    if (!res) {
      bool missing = res.error().code() == errc::unsatisfiable;
      if (missing)
        return make_error(errc::unsatisfiable, where + " " + source +
                                                   " does not exist (" +
                                                   describe(res.error()) + ")");
      // No `hadoop` for a URI that needs one: the user's to fix, as a
      // missing file is.
      if (res.error().code() == errc::invalid_config)
        return make_error(errc::unsatisfiable,
                          where + " " + source + ": " + describe(res.error()));
      return make_error(errc::infrastructure,
                        where + " " + source + ": " + describe(res.error()));
    }
    res->name = name;
    return res;
  }

private:
  // Staged under a numbered name: two entries may share a link name. The
  // source's own file name follows the number, since the NodeManager picks
  // how to unpack an archive by its extension. A directory is shipped as an
  // archive of itself.
  expected<local_resource> stage_local(const std::string& source, bool archive) {
    auto staged = std::to_string(++count_) + "-" + fs::path{source}.filename().string();
    std::error_code ec;
    if (!fs::is_directory(source, ec))
      return stager_.put(source, staged, archive);
    auto tgz = scratch_ + "/" + staged + ".tgz";
    if (auto ok = staging::make_archive(source, tgz); !ok)
      return ok.error();
    return stager_.put(tgz, staged + ".tgz", true);
  }

  staging::stager& stager_;
  std::string scratch_;
  const hadoop::configuration& conf_;
  webhdfs::http_auth auth_;
  int count_ = 0;
};

} // namespace

expected<shipped_resources> ship_job_files(const job_spec& job, staging::stager& stager,
                                           const std::string& scratch_dir,
                                           const hadoop::configuration& conf,
                                           const webhdfs::http_auth& auth,
                                           const stage_fn& stage_env) {
  shipper s{stager, scratch_dir, conf, auth};
  shipped_resources out;
  if (!job.src_dir.empty()) {
    auto src = s.ship(job.src_dir, "src", true, "[code] src_dir");
    if (!src)
      return src.error();
    out.common.push_back(*src);
  }
  if (!job.python_venv.empty()) {
    auto name = job.venv_link_name();
    auto venv =
        s.ship(job.python_venv, name, name == "venv", "[code] python_venv", stage_env);
    if (!venv)
      return venv.error();
    out.common.push_back(*venv);
  }
  for (auto& f : job.files) {
    auto res = s.ship(f.source, f.name, f.archive,
                      f.archive ? "[code] archives:" : "[code] files:");
    if (!res)
      return res.error();
    out.common.push_back(*res);
  }
  for (auto& t : job.tasks)
    for (auto& f : t.files) {
      auto res = s.ship(f.source, f.name, f.archive,
                        "[tasks." + t.name + "] " + (f.archive ? "archives:" : "files:"));
      if (!res)
        return res.error();
      out.by_type[t.name].push_back(*res);
    }
  return out;
}

std::string private_scratch(const std::string& app_id, const std::string& job_json) {
  std::string why;
  auto dir = base::make_private_dir("tony-submit-" + app_id + "-", why);
  if (dir && base::write_new_file(*dir + "/job.json", job_json, 0600, why))
    return *dir;
  if (dir) {
    std::error_code ec;
    std::filesystem::remove_all(*dir, ec);
  }
  std::cerr << "tony-submit: cannot make a private scratch directory for staging: " << why
            << "; set TMPDIR to a directory of yours\n";
  return {};
}

} // namespace tony
