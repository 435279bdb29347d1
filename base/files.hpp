#pragma once

// Small file helpers. Nothing here follows a policy of its own: callers that
// must not follow links or must check owners use runtime/'s private files.

#include <optional>
#include <string>

namespace tony::base {

/// The whole content of the file at `path`, or nullopt when it cannot be
/// opened or read.
std::optional<std::string> read_file(const std::string& path);

/// "~" and "~/rest" with the user's home ($HOME, else the password
/// database's entry); any other path unchanged ("~user" included).
std::string expand_home(const std::string& path);

} // namespace tony::base
