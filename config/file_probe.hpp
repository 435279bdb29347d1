#pragma once

// What the job.toml reader asks the file system, as an interface: config/
// itself touches no file while it checks a job (src_dir, python_venv,
// shipped files, hadoop_conf, keytab, ca_file). The caller gives the
// implementation: tony-submit and ytf-submit the disk
// (config/disk_probe.hpp, library tony_config_disk), unit tests a fake.

#include <string>

namespace tony {

class file_probe {
public:
  enum class kind { missing, file, directory, other };

  virtual ~file_probe() = default;

  /// What is at the absolute `path`, following symbolic links.
  virtual kind kind_of(const std::string& path) const = 0;

  /// 0 when the file at `path` can be opened for reading, else the errno
  /// that says why not (EACCES, ...).
  virtual int read_error(const std::string& path) const = 0;
};

} // namespace tony
