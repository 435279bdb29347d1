#pragma once

// Every call that leaves the process carries an absolute deadline on the
// monotonic clock; relative timeouts are turned into deadlines once, at the
// API boundary, so that retries and nested steps share one budget.

#include <chrono>
#include <string>

namespace tony::hadoop {

using clock = std::chrono::steady_clock;
using deadline = clock::time_point;

inline deadline deadline_after(std::chrono::milliseconds timeout) {
  return clock::now() + timeout;
}

/// Time left until `d`, never negative.
inline std::chrono::milliseconds remaining(deadline d) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(d - clock::now());
  return left.count() > 0 ? left : std::chrono::milliseconds{0};
}

inline bool expired(deadline d) {
  return clock::now() >= d;
}

/// "250 ms", "3.2 s": durations in error messages.
std::string describe_duration(std::chrono::milliseconds x);

} // namespace tony::hadoop
