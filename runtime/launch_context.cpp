#include "runtime/launch_context.hpp"

namespace tony {

std::map<std::string, std::string> executor_env(const job_spec& job, const task_id& task,
                                                int32_t attempt, const am_endpoint& am) {
  std::map<std::string, std::string> env = job.env;
  auto type = job.find(task.type);
  if (type)
    for (auto& [k, v] : type->env)
      env[k] = v;
  if (!job.input_path.empty())
    env["DTF_INPUT_PATH"] = job.input_path;
  if (!job.output_path.empty())
    env["DTF_OUTPUT_PATH"] = job.output_path;
  env["TONY_APP_ID"] = am.app_id;
  env["TONY_AM_ADDRESS"] = am.host + ":" + std::to_string(am.port);
  if (!am.secret.empty()) // YARN hands it over in the container's tokens instead
    env["TONY_JOB_SECRET"] = am.secret;
  env["TONY_TASK_TYPE"] = task.type;
  env["TONY_TASK_INDEX"] = std::to_string(task.index);
  env["TONY_ATTEMPT"] = std::to_string(attempt);
  env["TONY_FRAMEWORK"] = job.framework;
  env["TONY_TASK_COMMAND"] = type ? type->command : job.command;
  env["TONY_STOP_GRACE_MS"] = std::to_string(job.policy.stop_grace_ms);
  if (!job.python_binary_path.empty())
    env[launch_env::python_binary_path] = job.python_binary_path;
  std::string shipped;
  for (auto& f : shipped_files_of(job, task.type))
    shipped += (shipped.empty() ? "" : "/") + f.name;
  if (!shipped.empty())
    env[launch_env::shipped_files] = shipped;
  return env;
}

bool is_executor_private(const std::string& name) {
  return name == "TONY_JOB_SECRET" || name == "TONY_AM_ADDRESS" ||
         name == "TONY_TASK_COMMAND" || name == "TONY_STOP_GRACE_MS" ||
         name == launch_env::python_binary_path || name == launch_env::shipped_files;
}

std::vector<shipped_file> shipped_files_of(const job_spec& job, const std::string& type) {
  auto out = job.files;
  if (auto t = job.find(type))
    out.insert(out.end(), t->files.begin(), t->files.end());
  return out;
}

std::vector<std::string> split_shipped_names(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < value.size()) {
    auto end = value.find('/', start);
    if (end == std::string::npos)
      end = value.size();
    if (end > start)
      out.push_back(value.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

} // namespace tony
