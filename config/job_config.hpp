#pragma once

// Reading a job: job.toml, then `--set KEY=VALUE` overrides (command line >
// file > defaults), then validation and resolution into a job_spec. The
// format is the public contract documented in doc/job-toml.md.
//
// Every problem found is reported, not just the first, each with where it is:
// "job.toml:12:3: unknown key 'instaces' in [tasks.worker]; did you mean
// 'instances'?" or "--set tasks.worker.instances=x: 'instances' must be an
// integer, got string". No exception escapes.
//
// A new job.toml key: see config/toml_reader.hpp (which file reads which
// section, and the steps); its bounds go in config/validate.hpp.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "config/config_error.hpp"
#include "config/file_probe.hpp"
#include "config/job_spec.hpp"
#include "config/limits.hpp"

namespace tony {

using load_result = result<job_spec, std::vector<config_error>>;

/// At most this many errors are listed; one last line counts the rest.
constexpr size_t max_reported_errors = 20;

/// Larger files are refused before parsing (a job file is a few KiB).
constexpr size_t max_job_file_size = size_t{1} << 20;

/// One override of the job document: `item` is "KEY=VALUE" as --set takes it;
/// `label` names it in messages ("--set KEY=VALUE", or where a translated
/// TonY or YARN-DTF setting came from: "tony.xml:7:5: tony.worker.memory").
/// Labels must be unique among the overrides of one load.
struct job_override {
  std::string item;
  std::string label;
};

/// `--set` items as overrides labelled "--set ITEM".
std::vector<job_override> set_overrides(const std::vector<std::string>& items);

/// Reads, overrides, validates and resolves job.toml text. `file_name` names
/// the text in messages and gives the default job name (its stem); `base_dir`
/// anchors relative paths and is the default src_dir. The paths the job
/// names (src_dir, python_venv, shipped files, hadoop_conf, keytab, ca_file)
/// are checked through `probe`; nothing else is read. A job file on disk:
/// load_job in config/disk_probe.hpp.
load_result load_job_text(std::string_view text, const std::string& file_name,
                          const std::string& base_dir,
                          const std::vector<std::string>& overrides,
                          const file_probe& probe);

/// The same with labelled overrides (applied in order, after the file).
load_result load_job_text_from(std::string_view text, const std::string& file_name,
                               const std::string& base_dir,
                               const std::vector<job_override>& overrides,
                               const file_probe& probe);

/// A feature the job asks for that the job model holds but tony cannot run
/// yet (Docker images, tolerated failures): `key` is the job.toml key,
/// `message` says what is missing and what to do.
struct unsupported_feature {
  std::string key;
  std::string message;
};

/// Every unsupported feature `job` asks for; tony-submit refuses to submit
/// such a job (exit 2) but can still print it (--print-toml).
std::vector<unsupported_feature> unsupported_features(const job_spec& job);

/// True for a Docker image reference: [registry[:port]/]name[:tag][@digest],
/// the name's components lower-case letters and digits with '.', '_', '__'
/// or '-' between them (Docker's reference grammar).
bool is_valid_docker_image(std::string_view image);

/// Names a shipped file may not take: tony's own entries of the working
/// directory (src, venv, ...) and those a NodeManager creates.
bool is_reserved_file_name(std::string_view name);

/// tensorflow, pytorch, horovod, standalone.
const std::vector<std::string>& known_frameworks();

/// local, yarn.
const std::vector<std::string>& known_backends();

/// True for a valid task type name: [a-z][a-z0-9_-]*, at most 64 characters.
bool is_valid_task_type_name(std::string_view name);

} // namespace tony
