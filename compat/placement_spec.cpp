#include "compat/placement_spec.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "compat/text.hpp"

namespace tony::compat {

namespace {

bool is_count(const std::string& s) {
  return !s.empty() && s.size() <= 4 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

} // namespace

placement_spec_translation
translate_placement_spec(const std::string& spec,
                         const std::vector<std::string>& own_tags) {
  auto parts = split_commas(spec, true);
  for (size_t i = 0; i < parts.size() && i < 2; ++i)
    parts[i] = base::lower(parts[i]);
  auto own = [&](const std::string& tag) {
    return std::find(own_tags.begin(), own_tags.end(), tag) != own_tags.end();
  };
  placement_spec_translation out;
  if (parts.size() == 3 && parts[0] == "notin" && parts[1] == "node" && own(parts[2]))
    out.max_per_node = 1;
  else if (parts.size() == 5 && parts[0] == "cardinality" && parts[1] == "node" &&
           own(parts[2]) && parts[3] == "0" && is_count(parts[4]))
    out.max_per_node = std::stoi(parts[4]) + 1;
  else
    out.error = "tony maps only a task type's anti-affinity with itself onto "
                "max_per_node: NOTIN,NODE,<tag> (one per node) or "
                "CARDINALITY,NODE,<tag>,0,<n> (n + 1 per node), <tag> being one of the "
                "type's allocation tags (" +
                base::join(own_tags, ", ") +
                "); remove the key, or write [tasks.<type>] max_per_node or "
                "placement = \"pack\" in job.toml (doc/migrating.md)";
  return out;
}

} // namespace tony::compat
