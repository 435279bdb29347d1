#pragma once

// TonY's tony.<type>.placement-spec (a YARN placement constraint
// expression, with tony.<type>.allocation-tags naming the type's
// containers) as tony's [tasks.<type>] max_per_node, which tony asks with
// a SchedulingRequest of that anti-affinity where the ResourceManager
// enables placement constraints, with node lists elsewhere
// (doc/architecture.md "Spread placement"). It maps the one constraint jobs
// use it for, a type's anti-affinity with itself; any other expression is
// refused by name.

#include <cstdint>
#include <string>
#include <vector>

namespace tony::compat {

struct placement_spec_translation {
  int32_t max_per_node = 0; // > 0 when translated
  std::string error;        // why not, when not
};

/// `spec` against the type's own allocation tags `own_tags`:
/// NOTIN,NODE,<tag> is at most 1 per node; CARDINALITY,NODE,<tag>,0,<n> at
/// most n + 1 (YARN counts the containers already there).
placement_spec_translation
translate_placement_spec(const std::string& spec,
                         const std::vector<std::string>& own_tags);

} // namespace tony::compat
