#pragma once

// The size and duration notations of job.toml (doc/job-toml.md, "Units").
// Parsers return the amount or the reason the text is not one; the reason
// reads after the quoted text: `'memory' = "2x" <reason>`.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace tony {

/// Upper bound of a single task's or pool's memory: 1 TiB in MiB.
constexpr int64_t max_memory_mb = int64_t{1} << 20;

/// Upper bound of any duration: 400 days in milliseconds.
constexpr int64_t max_duration_ms = int64_t{400} * 24 * 3600 * 1000;

/// "2048" (MiB), "512m", "2g", "1t", "1048576k", "1.5g"; case-insensitive,
/// an optional "b" or "ib" after the unit ("2GiB", "512mb"). The result is
/// in MiB and may be negative, zero or above max_memory_mb: the caller checks
/// the range. Amounts that are no whole number of MiB are errors.
result<int64_t, std::string> parse_memory_mb(std::string_view text);

/// "500ms", "90s", "30m", "2h", "3d", combinations "1h30m", or a plain
/// integer of seconds "90". May be negative; the caller checks the range.
result<int64_t, std::string> parse_duration_ms(std::string_view text);

/// 2048 -> "2g", 1536 -> "1536m".
std::string format_memory(int64_t mb);

/// 5400000 -> "1h30m", 500 -> "500ms", 0 -> "0s".
std::string format_duration(int64_t ms);

/// Optimal-string-alignment distance (edits, with adjacent swaps), for
/// "did you mean" hints.
size_t edit_distance(std::string_view a, std::string_view b);

} // namespace tony
