#include "config/job_config.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <system_error>

#include "config/toml_reader.hpp"

namespace tony {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view override_prefix = "--set ";

} // namespace

using config_detail::job_reader;
using config_detail::quote_text;

const std::vector<std::string>& known_frameworks() {
  static const std::vector<std::string> xs{"tensorflow", "pytorch", "horovod",
                                           "standalone"};
  return xs;
}

const std::vector<std::string>& known_backends() {
  static const std::vector<std::string> xs{"local", "yarn"};
  return xs;
}

bool is_valid_docker_image(std::string_view image) {
  // Docker's reference grammar (distribution/reference): an optional
  // registry, lower-case path components, a tag, a digest.
  static const std::regex component{"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"};
  static const std::regex domain{
      "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
      "(?:\\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*"
      "(?::[0-9]+)?"};
  static const std::regex tag{"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"};
  static const std::regex digest{"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:"
                                 "[0-9a-fA-F]{32,}"};
  std::string rest{image};
  if (rest.empty() || rest.size() > 512)
    return false;
  if (auto at = rest.find('@'); at != std::string::npos) {
    if (!std::regex_match(rest.substr(at + 1), digest))
      return false;
    rest.resize(at);
  }
  // A ':' after the last '/' starts the tag; one before it is a port.
  auto slash = rest.rfind('/');
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    if (!std::regex_match(rest.substr(colon + 1), tag))
      return false;
    rest.resize(colon);
  }
  if (rest.empty() || rest.size() > 255)
    return false;
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    auto end = rest.find('/', start);
    parts.push_back(rest.substr(start, end - start));
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  size_t first = 0;
  auto& head = parts.front();
  bool is_domain = parts.size() > 1 && (head.find_first_of(".:") != std::string::npos ||
                                        head == "localhost" ||
                                        std::any_of(head.begin(), head.end(), [](char c) {
                                          return c >= 'A' && c <= 'Z';
                                        }));
  if (is_domain) {
    if (!std::regex_match(head, domain))
      return false;
    first = 1;
  }
  for (size_t i = first; i < parts.size(); ++i)
    if (!std::regex_match(parts[i], component))
      return false;
  return true;
}

bool is_reserved_file_name(std::string_view name) {
  static const std::vector<std::string_view> reserved{
      "src",
      "venv",
      "venv.pex",
      "tony-executor",
      "tony-guard",
      "tony-am",
      "job.json",
      ".tony-bin",
      "stdout",
      "stderr",
      "executor.log",
      "launch_container.sh",
      "container_tokens",
      "tmp",
      "default_container_executor.sh",
      "default_container_executor_session.sh"};
  return std::find(reserved.begin(), reserved.end(), name) != reserved.end();
}

std::vector<unsupported_feature> unsupported_features(const job_spec& job) {
  std::vector<unsupported_feature> out;
  // YARN's Docker runtime takes an image, mounts and a network, nothing
  // like `docker run`'s own options.
  bool images = !job.docker_image.empty() ||
                std::any_of(job.tasks.begin(), job.tasks.end(),
                            [](auto& t) { return !t.docker_image.empty(); });
  if (images && job.cluster.backend == "yarn" && !job.docker_run_options.empty())
    out.push_back({"docker.run_options",
                   "[docker] run_options = [" + quote_text(job.docker_run_options[0]) +
                       (job.docker_run_options.size() > 1 ? ", ..." : "") +
                       "]: YARN's Docker runtime takes an image, mounts and a network, "
                       "no other `docker run` options; remove run_options to run on "
                       "YARN (they apply on the local backend)"});
  return out;
}

bool is_valid_task_type_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] < 'a' || name[0] > 'z')
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::vector<job_override> set_overrides(const std::vector<std::string>& items) {
  std::vector<job_override> out;
  for (auto& item : items)
    out.push_back({item, std::string{override_prefix} + item});
  return out;
}

load_result load_job_text_from(std::string_view text, const std::string& file_name,
                               const std::string& base_dir,
                               const std::vector<job_override>& overrides,
                               const file_probe& probe) {
  try {
    std::error_code ec;
    auto base = fs::absolute(base_dir.empty() ? fs::path{"."} : fs::path{base_dir}, ec);
    job_reader reader{file_name, base.lexically_normal().string(), probe};
    return reader.load(text, overrides);
  } catch (const std::exception& e) {
    // Only allocation failures can get here; keep the no-throw promise.
    return std::vector<config_error>{
        {file_name, 0, 0, std::string{"cannot load the job: "} + e.what()}};
  }
}

load_result load_job_text(std::string_view text, const std::string& file_name,
                          const std::string& base_dir,
                          const std::vector<std::string>& overrides,
                          const file_probe& probe) {
  return load_job_text_from(text, file_name, base_dir, set_overrides(overrides), probe);
}

} // namespace tony
