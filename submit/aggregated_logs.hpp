#pragma once

// tony-submit --logs of a YARN job that ended: its containers' files as the
// NodeManagers aggregated them (hadoop/yarn/aggregated_log.hpp), read from
// yarn.nodemanager.remote-app-log-dir on the default filesystem (WebHDFS
// for HDFS, authenticated like tony-submit's other calls) or a file://
// directory. The NodeManagers upload a moment after the application ends:
// the caller refreshes, boundedly, until the containers it wants are there.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "hadoop/configuration.hpp"
#include "hadoop/webhdfs.hpp"
#include "hadoop/yarn/aggregated_log.hpp"

namespace tony {

/// Where the cluster aggregates logs (its yarn-site.xml).
struct log_aggregation {
  bool enabled = false;     // yarn.log-aggregation-enable
  std::string root;         // remote-app-log-dir as a URI (file://, hdfs://)
  std::string suffix;       // yarn.nodemanager.remote-app-log-dir-suffix
  std::string tfile_suffix; // yarn.log-aggregation.TFile.remote-app-log-dir-suffix
};

/// Reads `conf`: a remote-app-log-dir without a scheme is on fs.defaultFS.
log_aggregation log_aggregation_of(const hadoop::configuration& conf);

/// The aggregated logs of one application, as far as they are uploaded.
class aggregated_logs {
public:
  aggregated_logs(log_aggregation where, std::string user, std::string app_id,
                  webhdfs::namenode_http nn)
      : where_(std::move(where))
      , user_(std::move(user))
      , app_id_(std::move(app_id))
      , nn_(std::move(nn)) {
    // nop
  }

  /// Reads the node files there are now, only those of `hosts` unless it is
  /// empty (a node's file is named "<host>_<port>[_<time>]"); files still
  /// being written ("<node>.tmp") and those read before are skipped. What
  /// could not be read is in problems().
  void refresh(const std::set<std::string>& hosts = {});

  /// A container's files, or nullptr; `from` gets the node file's URI.
  const yarn::aggregated_container* find(const std::string& container_id,
                                         std::string* from = nullptr) const;

  /// The containers read so far, by id.
  std::vector<std::string> containers() const;

  /// The directory the node files were found in (after a refresh that found
  /// one), else empty.
  const std::string& dir() const { return dir_; }

  const std::vector<std::string>& problems() const { return problems_; }

private:
  log_aggregation where_;
  std::string user_;
  std::string app_id_;
  webhdfs::namenode_http nn_;
  std::string dir_;
  std::map<std::string, yarn::aggregated_log> by_file_; // node file URI -> contents
  std::vector<std::string> problems_;
};

} // namespace tony
