#pragma once

// LinkedIn TonY's command line (ClusterSubmitter / TonyClient options) and
// its configuration (tony.xml, --conf tony.key=value), as a job_draft.
//
// Sources, lowest priority first, as TonY reads them: the --conf_file (or
// ./tony.xml when there is none), $TONY_CONF_DIR/tony-site.xml, the --conf
// items, then the flags that set a key themselves (--executes builds the
// command, --src_dir, --python_venv, ...). doc/migrating.md maps every key.

#include <string>
#include <vector>

#include "compat/job_draft.hpp"
#include "compat/tony_keys.hpp"

namespace tony {

/// TonY's flags as given; empty means not given.
struct tony_cli_args {
  std::string executes;
  std::string task_params;
  std::string python_venv;
  std::string python_binary_path;
  std::string src_dir;
  std::string conf_file;
  std::string sidecar_tensorboard_log_dir;
  std::string hdfs_classpath;
  std::vector<std::string> shell_env;
  std::vector<std::string> container_env;
  std::vector<std::string> conf;

  /// True when any TonY flag was given.
  bool any() const;
};

/// The long options TonY takes (without dashes): "executes", "conf", ...
const std::vector<std::string>& tony_option_names();

/// TonY's parser takes `-executes x` as well as `--executes x`; this turns
/// each single-dash TonY option (and `-opt=value`) into its double-dash form
/// so one parser reads both. Other arguments are left alone.
std::vector<std::string> normalize_tony_dashes(const std::vector<std::string>& args);

/// The job `args` describe. `cwd` anchors relative paths (TonY's are
/// relative to where it runs).
job_draft translate_tony(const tony_cli_args& args, const std::string& cwd);

} // namespace tony
