#pragma once

// The executor process: reads its container environment, reserves the
// task's port, connects to the AM's registry and runs the executor actor.
// tony-executor's main is a thin shell around run_executor.

#include <string>

namespace tony {

/// Exit codes: the task command's own exit code once it ran; otherwise 2 for
/// a bad container environment or a refused registration, 3 when the AM
/// cannot be reached (its registry, or its spec channel before the first
/// spec came), 143 when stopped before the command started.
/// `guard_program` is tony-guard's path (empty: a shell guards the command).
int run_executor(const std::string& guard_program = {});

} // namespace tony
