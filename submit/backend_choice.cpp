#include "submit/backend_choice.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace tony {

namespace {

std::string env_or_empty(const char* name) {
  auto* v = std::getenv(name);
  return v != nullptr ? std::string{v} : std::string{};
}

bool is_dir(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_directory(path, ec);
}

// The first executable `name` on PATH, or empty.
std::string on_path(const std::string& name) {
  std::istringstream path{env_or_empty("PATH")};
  std::string dir;
  while (std::getline(path, dir, ':')) {
    if (dir.empty())
      continue;
    auto candidate = dir + "/" + name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return {};
}

const char* const how_to_yarn =
    "--backend yarn with --hadoop-conf DIR (or HADOOP_CONF_DIR) submits to YARN";

} // namespace

std::string hadoop_command_conf_dir() {
  if (auto home = env_or_empty("HADOOP_HOME");
      !home.empty() && is_dir(home + "/etc/hadoop"))
    return home + "/etc/hadoop";
  auto hadoop = on_path("hadoop");
  if (hadoop.empty())
    return {};
  std::error_code ec;
  auto real = fs::canonical(hadoop, ec);
  if (!ec) {
    auto conf = (real.parent_path().parent_path() / "etc" / "hadoop").string();
    if (is_dir(conf))
      return conf;
  }
  // Distributions' wrapper scripts (/usr/bin/hadoop) and their conf dir.
  if (is_dir("/etc/hadoop/conf"))
    return "/etc/hadoop/conf";
  return {};
}

std::pair<std::string, std::string> find_hadoop_conf(const backend_inputs& in) {
  if (!in.hadoop_conf_flag.empty())
    return {in.hadoop_conf_flag, "--hadoop-conf " + in.hadoop_conf_flag};
  if (!in.hadoop_conf_dir.empty())
    return {in.hadoop_conf_dir, "HADOOP_CONF_DIR=" + in.hadoop_conf_dir};
  if (!in.yarn_conf_dir.empty())
    return {in.yarn_conf_dir, "YARN_CONF_DIR=" + in.yarn_conf_dir};
  if (!in.hadoop_command_conf.empty())
    return {in.hadoop_command_conf,
            "the hadoop command's configuration " + in.hadoop_command_conf};
  return {};
}

std::string yarn_conf_dir(const std::string& from_cli, const std::string& from_job) {
  if (!from_cli.empty())
    return from_cli;
  if (auto env = env_or_empty("HADOOP_CONF_DIR"); !env.empty())
    return env;
  if (!from_job.empty())
    return from_job;
  return find_hadoop_conf(backend_inputs_here(front_end::job_toml, "", "")).first;
}

backend_choice choose_backend(const backend_inputs& in) {
  backend_choice c;
  auto [dir, from] = find_hadoop_conf(in);
  c.conf_dir = dir;
  if (!in.flag.empty()) {
    c.backend = in.flag;
    c.reason = "--backend " + in.flag;
    return c;
  }
  if (!in.env.empty()) {
    if (in.env != "local" && in.env != "yarn") {
      c.error = "TONY_BACKEND=" + in.env +
                ": the backend is local or yarn; set TONY_BACKEND=yarn, "
                "TONY_BACKEND=local, or unset it";
      return c;
    }
    c.backend = in.env;
    c.reason = "TONY_BACKEND=" + in.env;
    return c;
  }
  if (in.front == front_end::job_toml)
    return c; // the job.toml's [cluster] backend (default local)
  if (!dir.empty()) {
    c.backend = "yarn";
    c.reason = "a Hadoop configuration is found (" + from + ")";
  } else {
    c.backend = "local";
    c.reason = "no Hadoop configuration is found (no --hadoop-conf, HADOOP_CONF_DIR, "
               "YARN_CONF_DIR or hadoop command)";
  }
  return c;
}

backend_inputs backend_inputs_here(front_end front, const std::string& flag,
                                   const std::string& hadoop_conf_flag) {
  backend_inputs in;
  in.front = front;
  in.flag = flag;
  in.env = env_or_empty("TONY_BACKEND");
  in.hadoop_conf_flag = hadoop_conf_flag;
  in.hadoop_conf_dir = env_or_empty("HADOOP_CONF_DIR");
  in.yarn_conf_dir = env_or_empty("YARN_CONF_DIR");
  // Only looked for when nothing above says: it reads PATH and the disk.
  if (in.hadoop_conf_flag.empty() && in.hadoop_conf_dir.empty() &&
      in.yarn_conf_dir.empty())
    in.hadoop_command_conf = hadoop_command_conf_dir();
  return in;
}

std::string backend_line(const backend_inputs& in, const backend_choice& c,
                         const std::string& final_backend) {
  auto [dir, from] = find_hadoop_conf(in);
  std::string reason = c.reason;
  if (!c.backend.empty() && c.backend != final_backend)
    reason = "--set cluster.backend";
  if (in.front == front_end::job_toml) {
    if (c.backend.empty()) {
      if (final_backend != "local" || dir.empty())
        return {};
      return "backend local: the job.toml's [cluster] backend (local unless it says "
             "yarn); a Hadoop configuration is found (" +
             from + "): --backend yarn or TONY_BACKEND=yarn submits to YARN";
    }
    if (in.flag.empty() || reason != c.reason)
      return "backend " + final_backend + ": " + reason;
    return {};
  }
  if (final_backend == "local")
    return "backend local: " + reason +
           (dir.empty() ? "; " + std::string{how_to_yarn} : "");
  return "backend yarn: " + reason +
         (in.flag.empty() ? "; --backend local runs the job on this machine" : "");
}

} // namespace tony
