#pragma once

// The staging root's shared caches (doc/operations.md, "Staging"): tony's
// binaries once per build as <root>/bin/<hash>/tony.tgz, packed
// environments once per content as <root>/envs/<sha256>/<name>. Most
// submissions upload only the job. A copy already there is reused only
// when nobody but the submitting user could have written it
// (stager::doubt): in a staging root other users can write, a bundle one
// of them planted under the next build's hash would otherwise run in this
// user's containers. It is then checked against the bytes this submission
// would upload (content_check.hpp: SHA-256 on file://, HDFS's FileChecksum
// on hdfs://); a check is remembered per copy in ~/.tony/cache, so that
// the bundle is made again, and a copy or an environment read again, only
// for a copy not checked before. When in doubt the job stages a copy of its own, into its
// own staging dir, and tony-submit says why.
//
// An operator's cache ([cluster] shared_cache) is looked in first: a copy
// there is used when its owner is the user or the shared root's owner,
// nobody else can write it, and its content checks; tony-submit never
// writes there (the operator fills it by submitting a job with
// staging_dir set to that root).

#include <functional>
#include <string>

#include "hadoop/webhdfs.hpp"
#include "messages/error.hpp"
#include "messages/types.hpp"
#include "runtime/staging/stager.hpp"

namespace tony {

struct cache_use {
  /// Who submits: the owner a reused copy must have.
  std::string user;
  /// The staging root's NameNode (unused on file:// and object stores).
  webhdfs::namenode_http nn;
  /// The job's own staging dir: where a copy goes when the cache's is
  /// doubted.
  staging::stager* own = nullptr;
  /// Says a line to the user (why a cached copy was not reused).
  std::function<void(const std::string&)> warn;
  /// [cluster] shared_cache as a URI, and its NameNode: an operator's
  /// cache (<root>/bin/<hash>/tony.tgz, <root>/envs/<sha256>/<name>) looked
  /// in first and never written; empty: none.
  std::string shared_root;
  webhdfs::namenode_http shared_nn;
};

/// Stages the local file `path` as `name` under <dir>/<sha256 of its
/// content>/, or reuses the copy an earlier job left there (localized
/// PRIVATE, as the node bundle).
expected<local_resource> stage_once(const std::string& dir, const std::string& path,
                                    const std::string& name, bool archive,
                                    const cache_use& use);

/// Stages tony's binaries with their libraries (runtime/staging/
/// node_bundle.hpp) once per content as <dir>/<hash>/tony.tgz, or reuses
/// the copy an earlier job left there; `scratch` holds the archive while it
/// is made. Localized PRIVATE, so a node unpacks it once for all of the
/// user's jobs, not once per job.
expected<local_resource> stage_node_bundle(const std::string& dir,
                                           const std::string& bin_dir,
                                           const std::string& scratch,
                                           const cache_use& use);

} // namespace tony
