#pragma once

// job_status as JSON: the AM's final status file, the tracking page's
// /api/job, and what tony-submit reads back. The format is documented in
// doc/tracking.md ("/api/job").

#include <string>

#include <caf/expected.hpp>

#include "messages/types.hpp"

namespace tony {

std::string to_json(const job_status& st, int indent = -1);

caf::expected<job_status> job_status_from_json(const std::string& text);

} // namespace tony
