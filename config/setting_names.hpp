#pragma once

// What a refusal of a request tells the user to change, in the words of the
// front end they wrote the job in: `-m/--task_memory` for ytf-submit,
// `tony.worker.memory` for TonY's command line, `tasks.worker.memory` for
// job.toml (doc/migrating.md). The front end fills job_spec::setting_names;
// tony-submit's and the AM's refusals read them through these functions.

#include <map>
#include <string>

#include "config/job_spec.hpp"

namespace tony {

enum class setting_words { job_toml, tony, ytf };

/// The names of the settings a refusal may name (each task type's
/// instances, memory, vcores and gpus), for the front end `words`.
std::map<std::string, std::string> setting_names_for(setting_words words,
                                                     const job_spec& job);

/// What to lower when `asked` does not fit `limit`: "lower
/// tasks.worker.memory" for the dimensions that do not fit, naming the
/// settings of `type` in the job's own words. `total`: the whole job does
/// not fit, so every type's setting of those dimensions, and its number
/// of tasks, are named.
std::string what_to_lower(const job_spec& job, const task_type_spec* type,
                          const resource& asked, const resource& limit);

} // namespace tony
