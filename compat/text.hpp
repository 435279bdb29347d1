#pragma once

// Small text helpers the front ends share.

#include <string>
#include <vector>

namespace tony::compat {

/// The comma-separated items of `value`, trimmed. Empty items are kept
/// when `keep_empty` (to report them), else dropped (Hadoop's getStrings).
std::vector<std::string> split_commas(const std::string& value, bool keep_empty);

/// True when `s`, trimmed, is a decimal integer with an optional sign.
bool is_integer(const std::string& s);

/// A TOML integer when the text is one, else the text as a TOML string (the
/// loader then says what it expected).
std::string int_or_string(const std::string& s);

/// A TOML array of the strings `xs`.
std::string string_array(const std::vector<std::string>& xs);

} // namespace tony::compat
