// TonY's command-line flags (compat/tony_cli.hpp): which were given, their
// names, and TonY's single-dash forms.

#include <algorithm>

#include "compat/tony_cli.hpp"

namespace tony {

bool tony_cli_args::any() const {
  return !executes.empty() || !task_params.empty() || !python_venv.empty() ||
         !python_binary_path.empty() || !src_dir.empty() || !conf_file.empty() ||
         !sidecar_tensorboard_log_dir.empty() || !hdfs_classpath.empty() ||
         !shell_env.empty() || !container_env.empty() || !conf.empty();
}

const std::vector<std::string>& tony_option_names() {
  static const std::vector<std::string> xs{"executes",
                                           "task_params",
                                           "python_venv",
                                           "python_binary_path",
                                           "src_dir",
                                           "shell_env",
                                           "container_env",
                                           "conf",
                                           "conf_file",
                                           "hdfs_classpath",
                                           "sidecar_tensorboard_log_dir"};
  return xs;
}

std::vector<std::string> normalize_tony_dashes(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (auto& a : args) {
    if (a.size() > 1 && a[0] == '-' && a[1] != '-') {
      auto name = a.substr(1, a.find('=') - 1);
      auto& names = tony_option_names();
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        out.push_back("-" + a);
        continue;
      }
    }
    out.push_back(a);
  }
  return out;
}

} // namespace tony
