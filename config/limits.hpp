#pragma once

// The limits of a job's numbers; config/validate.hpp turns them into the
// job model's bounds and rules, which every front end checks.

#include <cstdint>

#include "config/units.hpp"

namespace tony {

/// Per task type.
constexpr int64_t max_instances = 10000;
constexpr int64_t max_vcores = 1024;
constexpr int64_t max_gpus = 64;
constexpr int64_t max_restarts = 100;
constexpr int64_t max_tolerated_failures = max_instances;

/// The local pool's vcores.
constexpr int64_t max_pool_vcores = 4096;

/// [policy] max_attempts and [am] max_app_attempts.
constexpr int64_t max_job_attempts = 100;
constexpr int64_t max_app_attempts = 10;

} // namespace tony
