#pragma once

// Staging: where tony-submit puts what a job ships (binaries, the resolved
// job spec, the code archive, the virtualenv) so NodeManagers can localize
// it. One directory per application on the cluster's default filesystem:
//
//   file:///...  a local directory (fs.defaultFS = file:///, one machine or
//                a shared mount)
//   hdfs://...   HDFS, written through WebHDFS with libcurl (no JVM)
//   s3a://, gs://, abfs://, ... (any other scheme): through the cluster's
//                own `hadoop fs` (hadoop_fs.hpp)
//
// put() returns the LocalResource describing the staged copy: URL, exact
// size and modification time as the filesystem reports them (the
// NodeManager refuses a resource whose timestamp differs).

#include <memory>
#include <string>

#include "hadoop/webhdfs.hpp"
#include "messages/error.hpp"
#include "messages/types.hpp"

namespace tony::staging {

/// The modes a stager gives what it makes, as MapReduce's staging does: the
/// job's directory 0700 and its files 0600 (only the job's user reads them:
/// job.json holds the job's [env], the archives its code); the history dir
/// 0750 and its event logs 0640 (the history service's group reads them).
struct permissions {
  unsigned dir = 0700;
  unsigned file = 0600;
};

/// The modes of the history dir and the event logs kept there.
constexpr permissions history_permissions{0750, 0640};

/// What a file system tells of a staged file's content (stager::content).
struct staged_content {
  /// file://: the staged file's path, to read.
  std::string path;
  /// HDFS: the FileChecksum's algorithm ("MD5-of-0MD5-of-512CRC32C") and
  /// its bytes in hex, as WebHDFS answers them, and the file's block size.
  std::string algorithm;
  std::string bytes;
  int64_t block_size = 0;
  /// The file's length in bytes.
  int64_t length = 0;
  /// file://: what changes whenever the file's content may have (device,
  /// inode, size, and the change time no user can set back), so that a
  /// copy checked before needs no second read; empty elsewhere.
  std::string identity;
};

class stager {
public:
  virtual ~stager();

  /// Copies the local file `path` into the staging dir as `name`.
  virtual expected<local_resource> put(const std::string& path, const std::string& name,
                                       bool archive) = 0;

  /// Like put(), for a name whose path carries the file's content hash
  /// (tony's binaries, a packed environment): when another submit staged
  /// the same name meanwhile, that copy stays and is returned. Replacing it
  /// would change the modification time YARN checks when it localizes the
  /// jobs already submitted with it ("changed on src filesystem").
  virtual expected<local_resource> put_shared(const std::string& path,
                                              const std::string& name, bool archive) = 0;

  /// Like put(), but the staged copy is readable by its owner only (0600):
  /// a keytab. The NodeManager localizes it into the application's own
  /// cache, readable by the application's user only.
  virtual expected<local_resource> put_private(const std::string& path,
                                               const std::string& name) = 0;

  /// The LocalResource of a file already staged as `name`, or an error
  /// when there is none.
  virtual expected<local_resource> stat(const std::string& name, bool archive) = 0;

  /// Why a copy already staged as `name` may not hold what its name
  /// promises: empty when `user` (or `also`, when given: the owner of an
  /// operator's shared cache) owns the file and its directory and
  /// nobody else can write either, nor move the directory (the directory
  /// above is `user`'s or sticky, and not writable by others); otherwise
  /// the first thing wrong ("... is owned by mallory, not by alice").
  /// Shared caches (the node bundle, packed environments: the content hash
  /// is in the path) reuse a copy only when this is empty. On object
  /// stores (the `hadoop fs` stager) ownership means nothing and the
  /// bucket's policy decides who writes: always empty there.
  virtual expected<std::string> doubt(const std::string& name, const std::string& user,
                                      const std::string& also = {}) = 0;

  /// Who owns the staging dir itself: a user name on HDFS, a decimal uid
  /// on file://, empty on object stores (the `hadoop fs` stager).
  virtual expected<std::string> owner() = 0;

  /// What the file system tells of the content of the staged file `name`,
  /// to compare with a local file (submit/content_check.hpp): on file://
  /// the file itself; on HDFS its FileChecksum (GETFILECHECKSUM, computed
  /// by the DataNodes from the CRCs they keep: no data is read back) and
  /// block size; nothing on object stores (the `hadoop fs` stager), whose
  /// bucket policy decides who writes. errc::unsatisfiable when there is
  /// no such file.
  virtual expected<staged_content> content(const std::string& name) = 0;

  /// The content of the staged file `name` (a small one: the AM's address,
  /// its saved state); errc::unsatisfiable when there is none.
  virtual expected<std::string> read(const std::string& name) = 0;

  /// Deletes the staging dir and everything in it.
  virtual expected<void> remove_all() = 0;

  /// The staging dir as a URI (file:///..., hdfs://host:port/...).
  virtual std::string uri() const = 0;
};

/// Stages into a local directory (created if missing, then given
/// `modes.dir`; files get `modes.file`).
std::unique_ptr<stager> make_file_stager(std::string dir, permissions modes = {});

/// Stages into `dir` on HDFS through the NameNode's WebHDFS endpoint `nn`
/// (webhdfs.hpp: its address, and SIMPLE, SPNEGO or a delegation token);
/// `fs_uri` is the filesystem's URI ("hdfs://host:port") the NodeManagers
/// localize from.
/// The directory is made with MKDIRS `permission=modes.dir` before the first
/// file, and every file is created with `permission=modes.file`.
std::unique_ptr<stager> make_webhdfs_stager(webhdfs::namenode_http nn, std::string fs_uri,
                                            std::string dir, permissions modes = {});

/// Stages into `uri` (scheme://authority/dir) with `hadoop fs`.
std::unique_ptr<stager> make_hadoop_cli_stager(std::string uri);

/// The stager for a staging URI: file:///dir or hdfs://host:port/dir (then
/// `nn` is the NameNode's WebHDFS endpoint), or any other scheme through
/// `hadoop fs` (errc::invalid_config when no `hadoop` command is found).
expected<std::unique_ptr<stager>> make_stager(const std::string& uri,
                                              const webhdfs::namenode_http& nn,
                                              permissions modes = {});

/// The first 16 hex digits of the SHA-256 of a file's content (empty on a
/// read error): binaries are staged once per content under the staging root.
std::string content_hash(const std::string& path);

/// The whole SHA-256 of a file's content in hex (empty on a read error).
std::string file_sha256(const std::string& path);

struct archive_options {
  /// Store the files symbolic links name, not the links.
  bool follow_links = false;
  /// gzip -1: 2.5 times faster than the default level for 10 % more bytes
  /// on tony's binaries (bench/notes.md, "Portable binaries").
  bool fast = false;
  /// The same bytes for the same files wherever it is made (GNU tar's
  /// --sort=name, no times, owners or names of this machine): a copy
  /// staged from another gateway can be checked against one made here.
  bool reproducible = false;
};

/// Packs the contents of directory `dir` into a gzip'd tar at `out`
/// (entries relative to `dir`, so it unpacks into the resource's own dir).
expected<void> make_archive(const std::string& dir, const std::string& out,
                            archive_options opts = {});

} // namespace tony::staging
