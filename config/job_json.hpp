#pragma once

// The resolved job_spec as JSON: tony-submit writes it, the AM reads it. The
// document carries a format version; readers refuse versions they do not
// know, ignore keys they do not know and take defaults for missing ones.

#include <string>

#include "config/job_spec.hpp"
#include "messages/error.hpp"

namespace tony {

/// Version written by to_json and the highest one job_from_json reads.
constexpr int job_json_version = 1;

/// The spec as a JSON object (pretty-printed with `indent` spaces when >= 0).
std::string to_json(const job_spec& spec, int indent = -1);

/// The spec back, or errc::invalid_config naming what is wrong and where
/// ("job spec JSON: 'tasks[0].instances' must be an integer"). What the
/// document holds is checked by the job model's range checker, the rules
/// job.toml is read with (config/validate.hpp, check_job_spec).
expected<job_spec> job_from_json(const std::string& text);

} // namespace tony
