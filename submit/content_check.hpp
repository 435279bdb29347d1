#pragma once

// Whether a staged copy holds the same bytes as a local file, without
// reading the copy back over the network (doc/operations.md, "Staging"):
// on file:// the two files' SHA-256; on HDFS the FileChecksum the
// DataNodes compute from the CRCs they keep (MD5 of the blocks' MD5s of
// their chunks' CRC32C, HDFS's default) is computed here for the local
// file and compared. Object stores keep nothing tony can compare.

#include <cstdint>
#include <optional>
#include <string>

#include "messages/error.hpp"
#include "runtime/staging/stager.hpp"

namespace tony {

/// HDFS's MD5-of-MD5-of-CRC FileChecksum of the local file `path` as the
/// DataNodes would compute it were the file stored with `block_size` and
/// a CRC32C per `bytes_per_crc` bytes, with `crc_per_block` written into
/// it: its bytes in hex, as WebHDFS writes them (bytes per CRC, CRCs per
/// block, the MD5). nullopt when the file cannot be read.
std::optional<std::string> hdfs_file_checksum(const std::string& path, int64_t block_size,
                                              int32_t bytes_per_crc,
                                              int64_t crc_per_block);

/// What tells the content of `staged` apart, comparable with
/// local_fingerprint: the SHA-256 of a file:// copy, the algorithm and
/// bytes of an HDFS FileChecksum. errc::unsatisfiable when the file system
/// keeps nothing to compare (object stores) or an HDFS checksum of a kind
/// tony does not compute (CRC32, COMPOSITE-CRC).
expected<std::string> staged_fingerprint(const staging::staged_content& staged);

/// The same fingerprint for the local file `path`, as if it were staged
/// where `staged` is (the same block size and checksum kind).
expected<std::string> local_fingerprint(const staging::staged_content& staged,
                                        const std::string& path);

} // namespace tony
