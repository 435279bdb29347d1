#pragma once

// The tony.* keys of TonY's configuration that tony knows: the ones it
// reads, the ones it ignores and why, and the segments that are no task
// type's (compat/tony_cli.cpp translates them; doc/migrating.md lists them).

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tony {

/// Segments `s` of tony.<s>.* keys that name no task type ("application",
/// "am", "task", ...).
const std::set<std::string>& reserved_segments();

/// The properties of a task type: tony.<type>.<prop>.
const std::vector<std::string>& type_props();

/// The tony.* keys tony reads (for hints and doc/migrating.md's test);
/// `<type>` stands for a task type.
const std::vector<std::string>& known_tony_keys();

/// Settings of TonY's that tony has no use for, with why; a key ending in
/// '.' is a prefix.
const std::vector<std::pair<std::string, std::string>>& ignored_tony_keys();

/// tony.other.namenodes ("hdfs://nn2:8020,hdfs://nn3:8020") as [security]
/// file_systems: a path after an hdfs:// NameNode dropped, duplicates
/// merged; other URIs are kept for the loader to refuse.
std::vector<std::string> tony_namenodes(const std::string& value);

} // namespace tony
