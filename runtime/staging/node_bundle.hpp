#pragma once

// What tony ships to YARN nodes, so that they need nothing installed: one
// archive holding
//
//   bin/tony-am  bin/tony-executor  bin/tony-guard
//   lib/tony/<every shared library they need but glibc>  lib/tony/glibc-floor
//   lib/tony/sasl2/<Cyrus SASL's DIGEST-MD5 plug-in>
//
// The binaries carry the RPATH $ORIGIN/../lib/tony, so once a NodeManager
// has unpacked the archive (a LocalResource of type ARCHIVE, linked into the
// container as `tony/`) they load their libraries from it. The build fills
// <build>/lib/tony (cmake/bundle_libs.sh); an install keeps the same layout,
// so the archive is made from `<bin dir>` and `<bin dir>/../lib/tony`
// wherever tony-submit runs from.
//
// The archive is staged once per content: its name in the staging cache is
// the hash of its members' names and contents, which needs no archive to
// compute; the archive is only built when the cache lacks it.

#include <string>
#include <utility>
#include <vector>

#include "messages/error.hpp"

namespace tony::staging {

struct node_bundle {
  /// (path in the archive, local file) in archive order: bin/ then lib/tony/.
  std::vector<std::pair<std::string, std::string>> members;
  /// 16 hex digits naming the content (see content_hash).
  std::string hash;
  /// False when <bin dir>/../lib/tony is absent (a build that skipped the
  /// tony-bundle target): the nodes then need tony's libraries installed.
  bool has_libraries = false;
};

/// The bundle of the binaries in `bin_dir` and the libraries in
/// `bin_dir`/../lib/tony. tony-am and tony-executor must be there;
/// tony-guard is taken when present. Fails naming what is missing.
expected<node_bundle> collect_node_bundle(const std::string& bin_dir);

/// The first 16 hex digits of the SHA-256 of `text`, like content_hash
/// (empty when OpenSSL fails).
std::string text_hash(const std::string& text);

/// Writes the bundle as a gzip'd tar at `out` (entries bin/..., lib/tony/...),
/// using `scratch` (an empty or absent directory, removed afterwards) to lay
/// the members out.
expected<void> write_node_bundle(const node_bundle& bundle, const std::string& out,
                                 const std::string& scratch);

} // namespace tony::staging
