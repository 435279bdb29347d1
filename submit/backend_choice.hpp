#pragma once

// Which backend a job goes to when its command line does not say
// (doc/migrating.md, doc/job-toml.md): TonY's command line and ytf-submit
// go to YARN when a Hadoop configuration is found, as TonY's
// ClusterSubmitter and YARN-DTF's ytf-submit always did; a job.toml goes
// where its [cluster] backend says (local by default, as spark.master).
// Above both: --backend, then the TONY_BACKEND environment variable.

#include <string>
#include <utility>

namespace tony {

enum class front_end { job_toml, tony, ytf };

struct backend_inputs {
  front_end front = front_end::job_toml;
  std::string flag;                // --backend
  std::string env;                 // TONY_BACKEND
  std::string hadoop_conf_flag;    // --hadoop-conf
  std::string hadoop_conf_dir;     // HADOOP_CONF_DIR
  std::string yarn_conf_dir;       // YARN_CONF_DIR
  std::string hadoop_command_conf; // the `hadoop` command's configuration dir
};

struct backend_choice {
  /// "local" or "yarn"; empty: the job.toml's [cluster] backend decides.
  std::string backend;
  /// The Hadoop configuration found, in the order above; empty if none.
  std::string conf_dir;
  /// Why, in words: "--backend local", "HADOOP_CONF_DIR=/etc/hadoop".
  std::string reason;
  /// Set when TONY_BACKEND holds neither local nor yarn.
  std::string error;
};

/// The decision table (pure: tests give every input).
backend_choice choose_backend(const backend_inputs& in);

/// The first Hadoop configuration dir found: --hadoop-conf, HADOOP_CONF_DIR,
/// YARN_CONF_DIR, then the `hadoop` command's; with where it came from.
/// Empty when none.
std::pair<std::string, std::string> find_hadoop_conf(const backend_inputs& in);

/// The yarn backend's configuration dir: --hadoop-conf (`from_cli`),
/// HADOOP_CONF_DIR, [cluster] hadoop_conf (`from_job`), YARN_CONF_DIR, the
/// `hadoop` command's; empty when none.
std::string yarn_conf_dir(const std::string& from_cli, const std::string& from_job);

/// The configuration dir of the `hadoop` command: $HADOOP_HOME/etc/hadoop,
/// else <prefix>/etc/hadoop of the `hadoop` found on PATH (symlinks
/// resolved), else /etc/hadoop/conf when a `hadoop` is on PATH; empty
/// when there is no `hadoop` or no such directory.
std::string hadoop_command_conf_dir();

/// The inputs from this process's environment.
backend_inputs backend_inputs_here(front_end front, const std::string& flag,
                                   const std::string& hadoop_conf_flag);

/// The line that says where the job goes and why (the front-end's first
/// line), given the backend the job ended with (`--set cluster.backend` and
/// the job.toml are applied after the choice); empty when nothing needs
/// saying: a job.toml's own backend, or --backend, with no configuration
/// left unused.
std::string backend_line(const backend_inputs& in, const backend_choice& c,
                         const std::string& final_backend);

} // namespace tony
