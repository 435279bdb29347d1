#pragma once

// Where a YARN job's files live, derived by tony-submit once from job.toml
// and the client configuration: the staging dir, the history dir, and the
// WebHDFS address of each when it is on HDFS. An hdfs:// URI whose
// authority is an HA nameservice (dfs.nameservices) gives every NameNode
// of it, comma-separated (webhdfs::webhdfs_address): the AM gets that in
// TONY_WEBHDFS and TONY_HISTORY_WEBHDFS, keeps it in its state file for a
// restart, and every WebHDFS call fails over between them
// (webhdfs::call_op). A viewfs:// dir is the hdfs:// dir its mount table
// links it to; one no link covers is refused by name.

#include <string>

#include "config/job_spec.hpp"
#include "hadoop/configuration.hpp"
#include "messages/error.hpp"

namespace tony {

/// The WebHDFS address of the NameNode (or the NameNodes of an HA
/// nameservice, comma-separated) for a directory on HDFS; empty elsewhere.
/// Fails (invalid_config) on a nameservice the configuration lacks a key
/// of, naming the key.
expected<std::string> webhdfs_for(const std::string& uri,
                                  const hadoop::configuration& conf);

/// A viewfs:// directory as the hdfs:// one its mount table links it to;
/// anything else unchanged. Fails (invalid_config) naming `key` (the
/// job.toml setting) when no mount link covers it.
expected<std::string> through_viewfs(const std::string& uri,
                                     const hadoop::configuration& conf,
                                     const std::string& key);

struct job_locations {
  std::string staging_uri; // <staging root>/<app id>
  std::string staging_webhdfs;
  std::string history_uri;
  std::string history_webhdfs;
  /// [cluster] shared_cache as a URI (a path is on fs.defaultFS), empty
  /// when unset.
  std::string shared_cache_uri;
  std::string shared_cache_webhdfs;
};

/// The job's locations: [cluster] staging_dir (default
/// <fs.defaultFS>/user/<user>/.tony on HDFS, else ~/.tony/staging) and
/// history_dir (history::history_location), and shared_cache, each through
/// through_viewfs.
expected<job_locations> locate_job(const job_spec& job, const hadoop::configuration& conf,
                                   const std::string& app_id, const std::string& user);

} // namespace tony
