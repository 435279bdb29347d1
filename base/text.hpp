#pragma once

// Small text helpers every layer uses. base/ includes nothing of tony's: it is
// the lowest room, and anything may include it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tony::base {

/// `s` with ASCII letters lower-cased; other bytes unchanged (no locale).
std::string lower(std::string_view s);

/// `s` without leading and trailing spaces, tabs, CRs and LFs.
std::string trim(std::string_view s);

/// `xs` joined with `sep` between items: {"a", "b"}, ", " -> "a, b".
std::string join(const std::vector<std::string>& xs, std::string_view sep);

/// "1 task", "3 tasks": `n` and `word`, with an "s" unless `n` is 1.
std::string plural(int64_t n, std::string_view word);

/// `s` in single quotes for a POSIX shell; a quote inside becomes '\''.
std::string shell_quote(std::string_view s);

} // namespace tony::base
