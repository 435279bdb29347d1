#pragma once

// YARN's aggregated logs, read without a JVM. When an application ends, each
// NodeManager uploads the log dirs of the application's containers on its
// node into one file under yarn.nodemanager.remote-app-log-dir (default
// /tmp/logs on the default filesystem):
//
//   <root>/<user>/bucket-<suffix>-tfile/<app seq % 10000, 4 digits>/<app>/<host>_<port>
//   <root>/<user>/<suffix>/<app>/<host>_<port>            (Hadoop before 3.3)
//
// (<suffix> is yarn.nodemanager.remote-app-log-dir-suffix, default "logs";
// a file ending in ".tmp" is still being written). Each file is a TFile
// (Hadoop's org.apache.hadoop.io.file.tfile) in AggregatedLogFormat:
//
//   BCFile    magic(16) | data blocks | meta blocks | meta index |
//             offset of the meta index (int64 BE) | version (2 x int16) | magic(16)
//   meta index  vint count, per block: string "data:<name>", string
//             compression, region (vlong offset, compressed size, raw size)
//   "BCFile.index"  string default compression, vint n, n data regions
//   data block  records: vint key length, key; value as chunks (vint n < 0:
//             -n bytes and more chunks; n >= 0: the last n bytes)
//   records   key = Java writeUTF (u16 length, UTF-8) of "VERSION" (value:
//             int32 1), "APPLICATION_ACL" (writeUTF pairs),
//             "APPLICATION_OWNER" (writeUTF user), or a container id whose
//             value is its files: writeUTF(name), writeUTF(decimal length),
//             then that many bytes, until the value ends
//
// TFile's vint is its own (Utils.writeVLong), neither protobuf's nor
// WritableUtils'. Compression "none" and "gz" (zlib) are read; others
// ("lzo", "snappy") are refused by name.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hadoop/expected.hpp"

namespace tony::yarn {

/// One file of a container's log dir.
struct aggregated_file {
  std::string name; // "stdout", "executor.log", ...
  std::string content;
};

/// One container's log dir as a NodeManager uploaded it.
struct aggregated_container {
  std::string container_id;
  std::vector<aggregated_file> files;

  /// The file named `name`, or nullptr.
  const aggregated_file* find(const std::string& name) const;
};

/// One node's aggregated log file of an application.
struct aggregated_log {
  int32_t version = 0; // AggregatedLogFormat's VERSION record (1)
  std::string owner;   // APPLICATION_OWNER
  std::vector<aggregated_container> containers;

  /// The container `container_id`, or nullptr.
  const aggregated_container* find(const std::string& container_id) const;
};

/// How far a gz block may inflate: deflate's own limit (about 1032:1), and
/// an absolute cap on one block of a node's logs.
constexpr uint64_t max_inflation_ratio = 1032;
constexpr int64_t max_inflated_block = int64_t{512} << 20;

/// Inflates a gz block of an aggregated log (zlib streams one after the
/// other) into exactly `raw` bytes; a claim beyond max_inflation_ratio times
/// the block's size or beyond max_inflated_block is refused before anything
/// is allocated. `at` is the block's offset, for the message.
hadoop::expected<std::string> inflate_block(std::string_view compressed, int64_t raw,
                                            size_t at);

/// Parses the bytes of one aggregated log file. Fails (invalid_input,
/// naming the offset) on bytes that are not a TFile in AggregatedLogFormat,
/// and on compression other than none and gz.
hadoop::expected<aggregated_log> parse_aggregated_log(std::string_view bytes);

/// TFile's variable-length integer (Utils.readVLong) at `*pos` of `data`;
/// advances `*pos`. Exposed for tests.
hadoop::expected<int64_t> read_tfile_vlong(std::string_view data, size_t* pos);

/// The directories where the aggregated logs of application `app_id` of
/// `user` may be, newest layout first: `root` is
/// yarn.nodemanager.remote-app-log-dir (a URI or path), `suffix`
/// yarn.nodemanager.remote-app-log-dir-suffix; `tfile_suffix` the TFile
/// controller's own suffix when configured
/// (yarn.log-aggregation.TFile.remote-app-log-dir-suffix), else empty.
std::vector<std::string> aggregated_log_dirs(const std::string& root,
                                             const std::string& user,
                                             const std::string& suffix,
                                             const std::string& app_id,
                                             const std::string& tfile_suffix = {});

} // namespace tony::yarn
