#include "config/validate.hpp"

#include <type_traits>

namespace tony {

namespace {

// A number reached from `S` through the member pointers `Ms` (a fold over
// .*), read and written as int64_t.
template <class S, auto... Ms>
int64_t get(const S& s) {
  return (s.*....*Ms);
}

template <class S, auto... Ms>
void set(S& s, int64_t v) {
  auto& field = (s.*....*Ms);
  field = static_cast<std::decay_t<decltype(field)>>(v);
}

template <auto... Ms>
job_rule rule(const char* path, bounds range,
              bounds (*range_of)(const job_spec&) = nullptr) {
  return {path, &get<job_spec, Ms...>, &set<job_spec, Ms...>, range, range_of};
}

template <auto... Ms>
task_rule type_rule(const char* path, bounds range) {
  return {path, &get<task_type_spec, Ms...>, &set<task_type_spec, Ms...>, range};
}

bounds heartbeat_timeout_range(const job_spec& s) {
  // heartbeat_timeout_ok: longer than the interval.
  return {s.policy.heartbeat_interval_ms + 1, max_duration_ms};
}

// "'<path>' must be between lo and hi, got x", or nothing.
std::string out_of(const std::string& path, int64_t x, bounds b) {
  if (b.contains(x))
    return {};
  return "'" + path + "' must be between " + std::to_string(b.lo) + " and " +
         std::to_string(b.hi) + ", got " + std::to_string(x);
}

// An elastic type's world: 1 <= min <= instances <= max.
std::string elastic_problem(const task_type_spec& t, const std::string& path) {
  if (t.elastic() && (t.elastic_min < 1 || t.elastic_min > t.elastic_max ||
                      t.instances < t.elastic_min || t.instances > t.elastic_max))
    return "'" + path + "' is elastic from " + std::to_string(t.elastic_min) + " to " +
           std::to_string(t.elastic_max) + " nodes but has " +
           std::to_string(t.instances) + " instances";
  return {};
}

} // namespace

const std::vector<task_rule>& task_rules() {
  using t = task_type_spec;
  static const std::vector<task_rule> rules{
      type_rule<&t::instances>("instances", instances_bounds),
      type_rule<&t::capability, &resource::memory_mb>("capability.memory_mb",
                                                      memory_mb_bounds),
      type_rule<&t::capability, &resource::vcores>("capability.vcores", vcores_bounds),
      type_rule<&t::capability, &resource::gpus>("capability.gpus", gpus_bounds),
      type_rule<&t::max_restarts>("max_restarts", max_restarts_bounds),
      type_rule<&t::restart_backoff_ms>("restart_backoff_ms", duration_bounds),
      // -1: the job's [policy] budget applies.
      type_rule<&t::tolerated_failures>("tolerated_failures",
                                        {-1, max_tolerated_failures}),
      // 0: a fixed world.
      type_rule<&t::elastic_max>("elastic_max", {0, max_instances}),
      type_rule<&t::execution_timeout_ms>("execution_timeout_ms", duration_bounds),
  };
  return rules;
}

const std::vector<job_rule>& job_rules() {
  using j = job_spec;
  using p = policy_spec;
  static const std::vector<job_rule> rules{
      rule<&j::policy, &p::max_attempts>("policy.max_attempts", job_attempts_bounds),
      rule<&j::policy, &p::tolerated_failures>("policy.tolerated_failures",
                                               tolerated_failures_bounds),
      rule<&j::policy, &p::allocation_timeout_ms>("policy.allocation_timeout_ms",
                                                  duration_bounds),
      rule<&j::policy, &p::registration_timeout_ms>("policy.registration_timeout_ms",
                                                    duration_bounds),
      rule<&j::policy, &p::heartbeat_interval_ms>("policy.heartbeat_interval_ms",
                                                  positive_duration_bounds),
      rule<&j::policy, &p::heartbeat_timeout_ms>("policy.heartbeat_timeout_ms",
                                                 positive_duration_bounds,
                                                 heartbeat_timeout_range),
      rule<&j::policy, &p::stop_grace_ms>("policy.stop_grace_ms", duration_bounds),
      rule<&j::timeout_ms>("timeout_ms", duration_bounds),
      rule<&j::am, &am_spec::max_app_attempts>("am.max_app_attempts",
                                               app_attempts_bounds),
      rule<&j::am, &am_spec::reconnect_timeout_ms>("am.reconnect_timeout_ms",
                                                   positive_duration_bounds),
      rule<&j::am, &am_spec::capability, &resource::memory_mb>("am.capability.memory_mb",
                                                               memory_mb_bounds),
      rule<&j::am, &am_spec::capability, &resource::vcores>("am.capability.vcores",
                                                            vcores_bounds),
      // 0: this machine's memory and 4 x its cores; -1: its GPUs.
      rule<&j::cluster, &cluster_settings::local, &local_pool_spec::memory_mb>(
          "cluster.local.memory_mb", {0, max_memory_mb}),
      rule<&j::cluster, &cluster_settings::local, &local_pool_spec::vcores>(
          "cluster.local.vcores", {0, max_pool_vcores}),
      rule<&j::cluster, &cluster_settings::local, &local_pool_spec::gpus>(
          "cluster.local.gpus", {-1, max_gpus}),
  };
  return rules;
}

std::string check_job_spec(const job_spec& s) {
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    auto path = "tasks[" + std::to_string(i) + "]";
    auto& t = s.tasks[i];
    for (auto& r : task_rules())
      if (auto problem = out_of(path + "." + r.path, r.get(t), r.range); !problem.empty())
        return problem;
    if (auto problem = elastic_problem(t, path); !problem.empty())
      return problem;
  }
  for (auto& r : job_rules())
    if (auto problem = out_of(r.path, r.get(s), r.bounds_for(s)); !problem.empty())
      return problem;
  return {};
}

} // namespace tony
