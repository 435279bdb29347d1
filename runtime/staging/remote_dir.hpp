#pragma once

// Listing, reading and removing on the filesystems tony stages to, named by
// URI: file:///dir (this machine) or hdfs://host:port/dir (through the
// NameNode's WebHDFS endpoint `nn`, authenticated as webhdfs.hpp says), or
// any other scheme (s3a://bucket/dir, gs://...) through `hadoop fs`.
// tony-submit reads YARN's aggregated logs with it and sweeps ended jobs'
// staging dirs.

#include <cstdint>
#include <string>
#include <vector>

#include "hadoop/webhdfs.hpp"
#include "messages/error.hpp"

namespace tony::staging {

struct dir_entry {
  std::string name; // the last path component
  bool directory = false;
  int64_t length = 0;
  int64_t modified_ms = 0; // modification time, ms since the epoch
};

/// The entries of directory `uri`. A directory that does not exist is an
/// error with errc::unsatisfiable; others errc::infrastructure.
expected<std::vector<dir_entry>> list_dir(const std::string& uri,
                                          const webhdfs::namenode_http& nn);

/// The whole content of file `uri` (errc::unsatisfiable when it does not
/// exist).
expected<std::string> read_whole(const std::string& uri,
                                 const webhdfs::namenode_http& nn);

/// Removes `uri` and everything below it; one that does not exist is
/// removed already.
expected<void> remove_tree(const std::string& uri, const webhdfs::namenode_http& nn);

} // namespace tony::staging
