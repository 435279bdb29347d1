#include "config/setting_names.hpp"

#include <algorithm>
#include <vector>

#include "base/text.hpp"

namespace tony {

std::map<std::string, std::string> setting_names_for(setting_words words,
                                                     const job_spec& job) {
  std::map<std::string, std::string> names;
  if (words == setting_words::job_toml)
    return names; // job.toml's own keys name themselves
  for (auto& t : job.tasks) {
    auto key = "tasks." + t.name + ".";
    if (words == setting_words::tony) {
      for (auto* k : {"instances", "memory", "vcores", "gpus"})
        names[key + k] = "tony." + t.name + "." + k;
    } else {
      names[key + "instances"] = "-r/--cluster_requirement";
      names[key + "memory"] = "-m/--task_memory";
      names[key + "vcores"] = "-c/--task_vcores";
      names[key + "gpus"] = "[tasks." + t.name + "] gpus (ytf-submit has no option)";
    }
  }
  return names;
}

namespace {

std::string name_of(const job_spec& job, const std::string& key) {
  auto i = job.setting_names.find(key);
  return i == job.setting_names.end() ? key : i->second;
}

void add_once(std::vector<std::string>& xs, std::string x) {
  if (std::find(xs.begin(), xs.end(), x) == xs.end())
    xs.push_back(std::move(x));
}

} // namespace

std::string what_to_lower(const job_spec& job, const task_type_spec* type,
                          const resource& asked, const resource& limit) {
  std::vector<std::string> dims;
  if (asked.memory_mb > limit.memory_mb)
    dims.push_back("memory");
  if (asked.vcores > limit.vcores)
    dims.push_back("vcores");
  if (asked.gpus > limit.gpus)
    dims.push_back("gpus");
  std::vector<std::string> names;
  for (auto& t : job.tasks) {
    if (type != nullptr && &t != type)
      continue;
    for (auto& d : dims)
      add_once(names, name_of(job, "tasks." + t.name + "." + d));
    if (type == nullptr)
      add_once(names, name_of(job, "tasks." + t.name + ".instances"));
  }
  if (names.empty())
    return {};
  return "lower " + base::join(names, " or ");
}

} // namespace tony
