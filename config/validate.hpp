#pragma once

// The range checker of the job model: every bound and relation of a job's
// numbers, named once and checked on the job_spec itself, whichever front
// end made it (job.toml through config/job_config.hpp, job.json through
// config/job_json.hpp, which the AM reads). The job.toml reader takes its
// bounds from the rules here and only adds where the value is written
// (file:line); the AM's lifecycle takes the heartbeat check period from here.
//
// A new bounded number: a line in job_rules() or task_rules() (validate.cpp),
// its bounds beside the others below, and a row in
// tests/unit/config/validate_test.cpp.

#include <cstdint>
#include <string>
#include <vector>

#include "config/job_spec.hpp"
#include "config/limits.hpp"

namespace tony {

/// A closed range of allowed values.
struct bounds {
  int64_t lo = 0;
  int64_t hi = 0;
  constexpr bool contains(int64_t x) const { return x >= lo && x <= hi; }
};

// -- the bounds, by value ------------------------------------------------------

constexpr bounds instances_bounds{1, max_instances};
constexpr bounds memory_mb_bounds{1, max_memory_mb};
constexpr bounds vcores_bounds{1, max_vcores};
constexpr bounds gpus_bounds{0, max_gpus};
constexpr bounds max_restarts_bounds{0, max_restarts};
constexpr bounds tolerated_failures_bounds{0, max_tolerated_failures};
constexpr bounds job_attempts_bounds{1, max_job_attempts};
constexpr bounds app_attempts_bounds{1, max_app_attempts};
constexpr bounds pool_vcores_bounds{1, max_pool_vcores};
/// Durations in milliseconds: those where 0 means "none", and the others.
constexpr bounds duration_bounds{0, max_duration_ms};
constexpr bounds positive_duration_bounds{1, max_duration_ms};

// -- relations -------------------------------------------------------------------

/// An executor is lost when it is silent for heartbeat_timeout, so the
/// timeout must be longer than the interval it beats at.
constexpr bool heartbeat_timeout_ok(const policy_spec& p) {
  return p.heartbeat_timeout_ms > p.heartbeat_interval_ms;
}

/// How often the AM looks for executors silent past heartbeat_timeout: a
/// tenth of it, within 100 ms to 1 s.
constexpr int64_t heartbeat_check_period_ms(const policy_spec& p) {
  auto tenth = p.heartbeat_timeout_ms / 10;
  return tenth < 100 ? 100 : tenth > 1000 ? 1000 : tenth;
}

// -- the rule table ------------------------------------------------------------------

/// One bounded number of the job: its job.json path, how to read and write
/// it, and its bounds (which may depend on other values of the job).
struct job_rule {
  const char* path; // "policy.heartbeat_timeout_ms"
  int64_t (*get)(const job_spec&);
  void (*set)(job_spec&, int64_t);
  bounds range;
  /// When set, the bounds depend on the job and this gives them.
  bounds (*range_of)(const job_spec&) = nullptr;

  bounds bounds_for(const job_spec& s) const { return range_of ? range_of(s) : range; }
};

/// The same for one number of a task type; `path` follows "tasks[i].".
struct task_rule {
  const char* path; // "capability.memory_mb"
  int64_t (*get)(const task_type_spec&);
  void (*set)(task_type_spec&, int64_t);
  bounds range;
};

/// Every rule, in the order they are checked.
const std::vector<job_rule>& job_rules();
const std::vector<task_rule>& task_rules();

/// The first value of `spec` outside its rule, as "'tasks[0].instances' must
/// be between 1 and 10000, got 20000" (task types first, then the job's
/// rules in table order); empty when every value keeps its rule.
std::string check_job_spec(const job_spec& spec);

} // namespace tony
