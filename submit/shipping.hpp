#pragma once

// What a job ships, as YARN local resources: the source directory, the
// venv, and the [code] / [tasks.<type>] files and archives. Local paths are
// uploaded to the staging dir; hdfs://, viewfs:// and other Hadoop file
// systems' sources (s3a://, gs://, ... through `hadoop fs`) stay where they
// are and are only looked up (size and modification time, which the
// NodeManager checks).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/job_spec.hpp"
#include "hadoop/configuration.hpp"
#include "messages/error.hpp"
#include "messages/types.hpp"
#include "runtime/staging/stager.hpp"

namespace tony {

/// The hdfs:// URI a viewfs:// URI stands for, by the longest
/// `fs.viewfs.mounttable.<table>.link.<path>` prefix of its path (table:
/// the URI's authority, else fs.viewfs.mounttable.default.name.key, else
/// "default"). Fails when no link covers the path.
expected<std::string> resolve_viewfs(const std::string& uri,
                                     const hadoop::configuration& conf);

/// The WebHDFS address of the NameNode at `authority` ("host:port" of an
/// hdfs:// URI): webhdfs::webhdfs_address for the default filesystem's
/// NameNode and for a nameservice of dfs.nameservices (all its NameNodes,
/// comma-separated; fails naming a key the configuration lacks), else the
/// default port of its host ("host:9870", or "https://host:9871" under
/// dfs.http.policy HTTPS_ONLY).
expected<std::string> webhdfs_address_of(const std::string& authority,
                                         const hadoop::configuration& conf);

/// The local resource of a file already on HDFS (hdfs:// or viewfs://),
/// linked as `name`, looked up through WebHDFS as `auth` says; on another
/// Hadoop file system (s3a://, gs://, ...) with `hadoop fs -stat`.
/// errc::unsatisfiable when it does not exist.
expected<local_resource> remote_resource(const std::string& uri, const std::string& name,
                                         bool archive, const hadoop::configuration& conf,
                                         const webhdfs::http_auth& auth);

/// Everything `job` ships: `common` for every executor, `by_type` for the
/// tasks of one type. Errors say which job.toml key and entry failed;
/// errc::unsatisfiable means an entry that does not exist or a URI that
/// needs a `hadoop` command there is none of (the user's error), anything
/// else a staging failure.
struct shipped_resources {
  std::vector<local_resource> common;
  std::map<std::string, std::vector<local_resource>> by_type;
};

/// Stages a local file somewhere of its own (e.g. once per content) and
/// returns its resource: (path, staged name, archive).
using stage_fn =
    std::function<expected<local_resource>(const std::string&, const std::string&, bool)>;

/// `stage_env`, when given, stages a local `[code] python_venv` file instead
/// of the job's stager (the venv is then shared by later jobs).
expected<shipped_resources> ship_job_files(const job_spec& job, staging::stager& stager,
                                           const std::string& scratch_dir,
                                           const hadoop::configuration& conf,
                                           const webhdfs::http_auth& auth,
                                           const stage_fn& stage_env = nullptr);

/// tony-submit's scratch directory for staging, holding the job's description
/// as `job.json`: made by mkdtemp under $TMPDIR (else /tmp, else ~/.tony/tmp),
/// 0700 and its owner checked, and the file created with
/// O_CREAT|O_EXCL|O_NOFOLLOW (0600), so a directory another user pre-created
/// under a predictable name, links inside, is never used. Its path, or empty
/// after saying why on stderr.
std::string private_scratch(const std::string& app_id, const std::string& job_json);

} // namespace tony
