#pragma once

// Reading a job: job.toml, then `--set KEY=VALUE` overrides (command line >
// file > defaults), then validation and resolution into a job_spec. The
// format is the public contract documented in doc/job-toml.md.
//
// Every problem found is reported, not just the first, each with where it is:
// "job.toml:12:3: unknown key 'instaces' in [tasks.worker]; did you mean
// 'instances'?" or "--set tasks.worker.instances=x: 'instances' must be an
// integer, got string". No exception escapes.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.hpp"
#include "config/job_spec.hpp"
#include "config/limits.hpp"
#include "config/result.hpp"

namespace tony {

using load_result = result<job_spec, std::vector<config_error>>;

/// At most this many errors are listed; one last line counts the rest.
constexpr size_t max_reported_errors = 20;

/// Larger files are refused before parsing (a job file is a few KiB).
constexpr size_t max_job_file_size = size_t{1} << 20;

/// Reads, overrides, validates and resolves the job file at `path`. Messages
/// name the file as `path` spells it; relative paths inside it resolve against
/// its directory. Touches the filesystem: reads `path`, checks that src_dir,
/// python_venv and hadoop_conf exist.
load_result load_job(const std::string& path, const std::vector<std::string>& overrides);

/// The same for text in memory. `file_name` names the text in messages and
/// gives the default job name (its stem); `base_dir` anchors relative paths
/// and is the default src_dir.
load_result load_job_text(std::string_view text, const std::string& file_name,
                          const std::string& base_dir,
                          const std::vector<std::string>& overrides);

/// tensorflow, pytorch, horovod, standalone.
const std::vector<std::string>& known_frameworks();

/// local, yarn.
const std::vector<std::string>& known_backends();

/// True for a valid task type name: [a-z][a-z0-9_-]*, at most 64 characters.
bool is_valid_task_type_name(std::string_view name);

} // namespace tony
