#pragma once

// Tests compare job and task states with the names users see ("RUNNING"),
// as doc/lifecycle.md lists them; the product compares the enums.

#include <stdexcept>
#include <string>
#include <string_view>

#include "messages/states.hpp"

namespace tony {

inline bool operator==(job_state x, std::string_view name) {
  return name == to_string(x);
}

inline bool operator!=(job_state x, std::string_view name) {
  return !(x == name);
}

inline bool operator==(task_state x, std::string_view name) {
  return name == to_string(x);
}

inline bool operator!=(task_state x, std::string_view name) {
  return !(x == name);
}

/// The state a test names; an unknown name throws.
inline job_state job_state_of(std::string_view name) {
  if (auto x = job_state_named(name))
    return *x;
  throw std::invalid_argument("no job state " + std::string{name});
}

inline task_state task_state_of(std::string_view name) {
  if (auto x = task_state_named(name))
    return *x;
  throw std::invalid_argument("no task state " + std::string{name});
}

} // namespace tony
