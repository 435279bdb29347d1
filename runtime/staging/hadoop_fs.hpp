#pragma once

// File systems tony has no client of its own for (gs://, s3a://, abfs://,
// wasb://, oss://, ...), reached through the cluster's own Hadoop client:
// `hadoop fs -put/-get/-cat/-stat/-mkdir/-rm/-chmod`, whose connectors and
// credentials the cluster's configuration (HADOOP_CONF_DIR) already sets
// up. file:// (and bare paths) and hdfs:// stay on tony's own code: local
// calls and WebHDFS.
//
// Every call runs under a time limit; a failure names the command and the
// URI and carries the last line hadoop wrote to stderr.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/error.hpp"

namespace tony::staging {

/// How tony reaches a URI.
enum class fs_access {
  local,      ///< file:///path or /path
  webhdfs,    ///< hdfs://: tony's WebHDFS client
  hadoop_cli, ///< any other scheme: `hadoop fs`
};

/// The access for `uri`; a URI with no scheme is a local path. viewfs://
/// is resolved to hdfs:// by its callers before it gets here.
fs_access access_of(const std::string& uri);

/// The scheme of `uri` ("s3a"), empty for a bare path.
std::string scheme_of(const std::string& uri);

/// Size and modification time of a file, as `hadoop fs -stat '%b %Y'`
/// prints them.
struct fs_stat {
  int64_t size = 0;
  int64_t modified_ms = 0;
};

/// Parses the output of `hadoop fs -stat '%b %Y'` (one line "SIZE MTIME_MS").
expected<fs_stat> parse_stat(const std::string& output);

/// One line of `hadoop fs -stat '%F|%b|%Y|%n'` per entry of a directory.
struct fs_entry {
  std::string name;
  bool directory = false;
  int64_t size = 0;
  int64_t modified_ms = 0;
};
expected<std::vector<fs_entry>> parse_listing(const std::string& output);

/// The cluster's `hadoop` command: $HADOOP_HOME/bin/hadoop, else `hadoop`
/// on PATH. The error (errc::invalid_config, exit code 2) says which URI
/// needed it, where tony looked and what to do.
expected<std::string> find_hadoop(const std::string& uri);

struct hadoop_fs_options {
  /// How long one call may run (a JVM start and a round trip to the store):
  /// TONY_HADOOP_FS_TIMEOUT (seconds) when set, else 300 s.
  std::chrono::milliseconds timeout{0};
};

/// Runs `hadoop fs ARGS...` for `uri` and returns its stdout. A non-zero
/// exit is errc::infrastructure (errc::unsatisfiable when hadoop says the
/// path does not exist) with hadoop's last stderr line; a call past the
/// time limit is killed and errc::timeout.
expected<std::string> hadoop_fs(const std::string& uri,
                                const std::vector<std::string>& args,
                                hadoop_fs_options opts = {});

} // namespace tony::staging
