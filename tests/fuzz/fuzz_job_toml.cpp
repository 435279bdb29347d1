// libFuzzer target: job.toml as tony-submit reads it (load_job_text: parse,
// validate, resolve), against a file system that answers from the path's
// hash, so both "there" and "missing" branches run. No input may crash,
// throw or abort; a bad file is a list of errors. A job that loads is
// written back as job.toml (to_toml, what --print-toml shows) and must load
// back to the same job (job_file aside), as config/job_toml.hpp promises.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>

#include "config/file_probe.hpp"
#include "config/job_config.hpp"
#include "config/job_json.hpp"
#include "config/job_toml.hpp"

namespace {

using namespace tony;

class hashed_probe : public file_probe {
public:
  kind kind_of(const std::string& path) const override {
    switch (std::hash<std::string>{}(path) % 4) {
    case 0:
      return kind::missing;
    case 1:
      return kind::file;
    default:
      return kind::directory;
    }
  }
  int read_error(const std::string& path) const override {
    return std::hash<std::string>{}(path) % 8 == 0 ? 13 : 0; // EACCES
  }
};

std::string comparable(job_spec spec) {
  spec.job_file.clear();
  return to_json(spec);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text{reinterpret_cast<const char*>(data), size};
  hashed_probe probe;
  auto job = load_job_text(text, "job.toml", "/jobs/j", {}, probe);
  if (!job) {
    if (job.error().empty())
      std::abort(); // a failure says why
    return 0;
  }
  (void)unsupported_features(*job);
  auto again = load_job_text(to_toml(*job), "printed.toml", "/elsewhere", {}, probe);
  if (!again) {
    std::fprintf(stderr, "to_toml's text does not load back:\n%s\n%s\n",
                 to_toml(*job).c_str(), to_string(again.error()).c_str());
    std::abort();
  }
  if (comparable(*again) != comparable(*job)) {
    std::fprintf(stderr, "to_toml's text loads back to another job:\n%s\n%s\n",
                 comparable(*job).c_str(), comparable(*again).c_str());
    std::abort();
  }
  return 0;
}
