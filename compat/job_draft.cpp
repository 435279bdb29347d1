#include "compat/job_draft.hpp"

#include <algorithm>

#include "config/job_toml.hpp"

namespace tony {

void job_draft::set(const std::string& key, const std::string& value,
                    const std::string& label) {
  auto unique = label;
  for (int n = 2; std::any_of(overrides.begin(), overrides.end(),
                              [&](const job_override& o) { return o.label == unique; });
       ++n)
    unique = label + " (" + std::to_string(n) + ")";
  overrides.push_back({key + "=" + value, unique});
  origins[key] = label;
}

void job_draft::set_string(const std::string& key, const std::string& text,
                           const std::string& label) {
  set(key, toml_quote(text), label);
}

} // namespace tony
