#pragma once

// The file system itself behind config/file_probe.hpp, and the loaders that
// read a job file from disk. Library tony_config_disk: linked by the
// programs (tony-submit, ytf-submit) and by tests that use real files;
// tony_config itself stays free of file-system calls.

#include <string>
#include <vector>

#include "config/file_probe.hpp"
#include "config/job_config.hpp"

namespace tony {

/// std::filesystem and access(2).
class disk_probe final : public file_probe {
public:
  kind kind_of(const std::string& path) const override;
  int read_error(const std::string& path) const override;
};

/// Reads, overrides, validates and resolves the job file at `path`, checking
/// the paths it names on disk. Messages name the file as `path` spells it;
/// relative paths inside it resolve against its directory.
load_result load_job(const std::string& path, const std::vector<std::string>& overrides);

/// The same with labelled overrides (applied in order, after the file).
load_result load_job_from(const std::string& path,
                          const std::vector<job_override>& overrides);

} // namespace tony
