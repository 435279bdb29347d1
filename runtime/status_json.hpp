#pragma once

// job_status as JSON: the AM's final status file, the tracking page's
// /api/job, and what tony-submit reads back. The format is documented in
// doc/tracking.md ("/api/job").

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "messages/error.hpp"
#include "messages/types.hpp"

namespace tony {

std::string to_json(const job_status& st, int indent = -1);

expected<job_status> job_status_from_json(const std::string& text);

/// A JSON number read as an int64_t: 0 for what is not a number and for a
/// number beyond int64_t's range (a float such as 1e300, or an integer
/// literal too long for 64 bits, which JSON readers take as a float;
/// converting those would be undefined).
int64_t json_int64(const nlohmann::json& v);

} // namespace tony
