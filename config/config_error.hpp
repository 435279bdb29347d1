#pragma once

// One problem found in a job.toml or in a `--set` override, with where it is.

#include <string>
#include <vector>

#include "messages/error.hpp"

namespace tony {

struct config_error {
  /// The job file as the user named it, or "--set KEY=VALUE" for an override.
  std::string file;
  /// 1-based position, or 0 when the problem has no single place (a missing
  /// table, an override).
  int line = 0;
  int col = 0;
  std::string message;

  /// "job.toml:12:3: message", "job.toml: message" without a position,
  /// "--set k=v: message" for an override, "message" without a file.
  std::string to_string() const;
};

inline bool operator==(const config_error& x, const config_error& y) {
  return x.file == y.file && x.line == y.line && x.col == y.col && x.message == y.message;
}

/// One line per error, each ending in '\n'.
std::string to_string(const std::vector<config_error>& errors);

/// The errors as one tony::error (errc::invalid_config), for callers that
/// return tony::expected.
error to_error(const std::vector<config_error>& errors);

} // namespace tony
