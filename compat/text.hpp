#pragma once

// Small text helpers the front ends share.

#include <string>
#include <vector>

namespace tony::compat {

/// The comma-separated items of `value`, trimmed. Empty items are kept
/// when `keep_empty` (to report them), else dropped (Hadoop's getStrings).
std::vector<std::string> split_commas(const std::string& value, bool keep_empty);

} // namespace tony::compat
