#include "config/disk_probe.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <unistd.h>

namespace tony {

namespace fs = std::filesystem;

file_probe::kind disk_probe::kind_of(const std::string& path) const {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (!fs::exists(st))
    return kind::missing;
  if (fs::is_regular_file(st))
    return kind::file;
  if (fs::is_directory(st))
    return kind::directory;
  return kind::other;
}

int disk_probe::read_error(const std::string& path) const {
  return ::access(path.c_str(), R_OK) == 0 ? 0 : errno;
}

load_result load_job_from(const std::string& path,
                          const std::vector<job_override>& overrides) {
  auto fail = [&](std::string msg) {
    return load_result{std::vector<config_error>{{path, 0, 0, std::move(msg)}}};
  };
  std::error_code ec;
  if (path.empty())
    return fail("no job file given");
  if (fs::is_directory(path, ec))
    return fail("is a directory; give the path of a job file (job.toml)");
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return fail(std::string{"cannot read the file: "} + std::strerror(errno));
  std::string text;
  // Read one byte past the limit so oversized files are told apart.
  text.resize(max_job_file_size + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad())
    return fail(std::string{"cannot read the file: "} + std::strerror(errno));
  auto abs = fs::absolute(fs::path{path}, ec);
  auto dir = abs.parent_path().lexically_normal().string();
  return load_job_text_from(text, path, dir, overrides, disk_probe{});
}

load_result load_job(const std::string& path, const std::vector<std::string>& overrides) {
  return load_job_from(path, set_overrides(overrides));
}

} // namespace tony
