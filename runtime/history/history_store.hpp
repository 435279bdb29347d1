#pragma once

// Where finished jobs' event logs are kept, and how tony-history finds them
// (doc/tracking.md):
//
//   local backend   <jobs_dir>/<app-id>/events.jsonl, written in place
//   yarn backend    the AM writes <LOG_DIR>/events.jsonl in its container
//                   (so `yarn logs` has it too) and, at the end, copies it
//                   to <history_dir>/<app-id>.jsonl: [cluster] history_dir,
//                   by default /user/<user>/.tony/history on HDFS or
//                   ~/.tony/history on file://
//
// A history dir is a local directory (path or file://) or an HDFS directory
// read through WebHDFS; both layouts above are recognised in either.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hadoop/webhdfs.hpp"
#include "messages/error.hpp"

namespace tony::history {

/// The history dir URI for a job: `configured` ([cluster] history_dir, an
/// absolute path is on `default_fs`) or the default for `default_fs`.
std::string history_location(const std::string& configured, const std::string& default_fs,
                             const std::string& user);

struct stored_log {
  std::string app_id;
  std::string location; // path or URI of its event log
  /// The log's size and last change, when the directory says (a reader
  /// keeps what it parsed while they stay the same); -1 and 0 when not.
  int64_t size = -1;
  int64_t modified_ms = 0;
};

class history_dir {
public:
  virtual ~history_dir();

  /// Every event log in the directory, newest application first.
  virtual expected<std::vector<stored_log>> list() = 0;

  /// The text of one event log.
  virtual expected<std::string> read(const stored_log& log) = 0;

  /// Deletes a job's event log, and with the local backend's layout
  /// (<jobs_dir>/<app-id>/events.jsonl) the whole job directory: its
  /// containers' logs too (retention, doc/tracking.md).
  virtual expected<void> remove(const stored_log& log) = 0;

  virtual std::string uri() const = 0;
};

std::unique_ptr<history_dir> make_local_history(std::string dir);

/// `dir` on HDFS through the NameNode's WebHDFS endpoint `nn`.
std::unique_ptr<history_dir> make_webhdfs_history(webhdfs::namenode_http nn,
                                                  std::string fs_uri, std::string dir);

/// A path, file:///dir or hdfs://host:port/dir (then `nn`; when its base is
/// empty, webhdfs::webhdfs_address of the client configuration
/// ($HADOOP_CONF_DIR): every NameNode of a nameservice, the NameNode's
/// address, or the host on port 9870), or any other scheme (s3a://,
/// gs://, ...) through the cluster's `hadoop fs`.
expected<std::unique_ptr<history_dir>> open_history(const std::string& uri,
                                                    webhdfs::namenode_http nn);

/// The same with SIMPLE authentication as `user` at the NameNode's WebHDFS
/// address `webhdfs_address` ("host:port"; tony-history's --webhdfs).
inline expected<std::unique_ptr<history_dir>>
open_history(const std::string& uri, const std::string& webhdfs_address,
             const std::string& user) {
  webhdfs::namenode_http nn;
  nn.base = webhdfs_address;
  nn.auth.user = user;
  return open_history(uri, std::move(nn));
}

/// Newest first: application_<cluster-ts>_<n> ordered by both numbers.
bool newer_app(const std::string& x, const std::string& y);

} // namespace tony::history
