#include "submit/job_locations.hpp"

#include <cstdlib>

#include "hadoop/webhdfs.hpp"
#include "messages/error.hpp"
#include "runtime/history/history_store.hpp"
#include "submit/shipping.hpp"

namespace tony {

expected<std::string> webhdfs_for(const std::string& uri,
                                  const hadoop::configuration& conf) {
  if (uri.rfind("hdfs://", 0) != 0)
    return std::string{};
  auto authority = uri.substr(7, uri.find('/', 7) - 7);
  return webhdfs::webhdfs_address(conf, authority);
}

expected<std::string> through_viewfs(const std::string& uri,
                                     const hadoop::configuration& conf,
                                     const std::string& key) {
  if (uri.rfind("viewfs://", 0) != 0)
    return uri;
  auto target = resolve_viewfs(uri, conf);
  if (!target)
    return make_error(errc::invalid_config,
                      key + " " + uri + ": " + describe(target.error()) +
                          "; add the mount link to the client configuration or name "
                          "the hdfs:// directory itself");
  return target;
}

namespace {

// A directory of job.toml's [cluster] as a URI: a path is on fs.defaultFS
// when that is HDFS, else local; no trailing '/'; then through_viewfs
// (naming `key`).
expected<std::string> dir_uri(std::string dir, const std::string& default_fs,
                              const hadoop::configuration& conf, const std::string& key) {
  if (!dir.empty() && dir[0] == '/')
    dir =
        (default_fs.rfind("hdfs://", 0) == 0 ? default_fs : std::string{"file://"}) + dir;
  while (!dir.empty() && dir.back() == '/')
    dir.pop_back();
  return through_viewfs(dir, conf, key);
}

} // namespace

expected<job_locations> locate_job(const job_spec& job, const hadoop::configuration& conf,
                                   const std::string& app_id, const std::string& user) {
  auto default_fs = conf.get_or("fs.defaultFS", "file:///");
  std::string root = job.cluster.staging_dir;
  if (root.empty()) {
    if (default_fs.rfind("hdfs://", 0) == 0) {
      auto authority = default_fs.substr(7);
      while (!authority.empty() && authority.back() == '/')
        authority.pop_back();
      root = "hdfs://" + authority + "/user/" + user + "/.tony";
    } else {
      auto home = std::getenv("HOME");
      root = "file://" + std::string(home ? home : "/tmp") + "/.tony/staging";
    }
  }
  auto staging_root = dir_uri(root, default_fs, conf, "[cluster] staging_dir");
  if (!staging_root)
    return staging_root.error();
  auto history_uri =
      through_viewfs(history::history_location(job.cluster.history_dir, default_fs, user),
                     conf, "[cluster] history_dir");
  if (!history_uri)
    return history_uri.error();
  job_locations result;
  result.staging_uri = *staging_root + "/" + app_id;
  result.history_uri = *history_uri;
  auto staging_webhdfs = webhdfs_for(*staging_root, conf);
  if (!staging_webhdfs)
    return staging_webhdfs.error();
  result.staging_webhdfs = *staging_webhdfs;
  auto history_webhdfs = webhdfs_for(result.history_uri, conf);
  if (!history_webhdfs)
    return history_webhdfs.error();
  result.history_webhdfs = *history_webhdfs;
  if (const auto& shared = job.cluster.shared_cache; !shared.empty()) {
    auto uri = dir_uri(shared, default_fs, conf, "[cluster] shared_cache");
    if (!uri)
      return uri.error();
    auto nn = webhdfs_for(*uri, conf);
    if (!nn)
      return nn.error();
    result.shared_cache_uri = *uri;
    result.shared_cache_webhdfs = *nn;
  }
  return result;
}

} // namespace tony
