#pragma once

// A resolved job written back as job.toml: what `tony-submit --print-toml`
// shows for a TonY command line, a tony.xml or a ytf-submit command line, so
// a job that came from elsewhere can be kept as a job file from then on.
//
// The text loads back (load_job_text) to the same job_spec, job_file aside:
// every value the spec holds is written unless it is the default the loader
// would give it anyway. Paths are absolute, so the file loads the same from
// any directory.

#include <string>
#include <string_view>
#include <vector>

#include "config/job_spec.hpp"

namespace tony {

/// A TOML basic string ("...") holding `s` exactly.
std::string toml_quote(std::string_view s);

/// `job` as job.toml text. Each line of `comments` is written first, as a
/// TOML comment ("# ...").
std::string to_toml(const job_spec& job, const std::vector<std::string>& comments = {});

} // namespace tony
