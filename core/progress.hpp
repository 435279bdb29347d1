#pragma once

// The job's progress as the AM reports it to the resource manager with
// every allocate call (`yarn application -status`, the RM's UI and REST
// API show it). A pure function of the status and what tasks reported.

#include <cstdint>
#include <map>
#include <utility>

#include "messages/types.hpp"

namespace tony::core {

/// What tasks reported of their own progress (TONY_PROGRESS_FILE,
/// doc/task-environment.md): per task, the job attempt it ran in and its
/// last value, 0..1.
using reported_progress = std::map<task_id, std::pair<int32_t, float>>;

/// The job's progress, 0..1. When tracked tasks of the current attempt
/// reported their own progress, the mean over those (one that has succeeded
/// counts 1): the training's own progress, whether every rank or only the
/// chief writes it. Otherwise the fraction of tracked tasks that succeeded.
/// A final job is 1.
float job_progress(const job_status& st, const reported_progress& reported);

} // namespace tony::core
