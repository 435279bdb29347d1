#include "compat/ytf_cli.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "base/text.hpp"
#include "compat/text.hpp"
#include "config/job_toml.hpp"
#include "config/units.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

using base::trim;

std::vector<std::string> split_commas(const std::string& value) {
  return compat::split_commas(value, true);
}

std::optional<int64_t> positive(const std::string& text) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  auto n = std::stoll(text);
  return n > 0 ? std::optional<int64_t>{n} : std::nullopt;
}

// One -c / -m item: "N", "job:N" or "job[index]:N".
struct resource_item {
  std::string job; // empty: every job
  int32_t index = -1;
  std::string value;
};

class ytf_translator {
public:
  ytf_translator(const ytf_args& args, std::string cwd)
      : args_(args)
      , cwd_(std::move(cwd)) {
    // nop
  }

  ytf_job run() {
    jobs();
    resources();
    code();
    data();
    out_.draft.set_string("name", args_.name.empty() ? "TensorFlow" : args_.name,
                          args_.name.empty() ? "YARN-DTF's default name"
                                             : "-n " + args_.name);
    if (!args_.queue.empty())
      out_.draft.set_string("queue", args_.queue, "-q " + args_.queue);
    out_.draft.set_string("framework", "tensorflow", "ytf-submit");
    return std::move(out_);
  }

private:
  // -r ps:2,worker:4
  void jobs() {
    auto label = "-r " + args_.cluster_requirement;
    if (trim(args_.cluster_requirement).empty()) {
      error(label, "needs job_name:num_tasks pairs, e.g. -r \"ps:2,worker:4\"");
      return;
    }
    for (auto& pair : split_commas(args_.cluster_requirement)) {
      auto colon = pair.find(':');
      auto job = trim(pair.substr(0, colon));
      if (colon == std::string::npos || job.empty()) {
        error(label, "'" + pair + "' is not job_name:num_tasks, e.g. worker:4");
        continue;
      }
      auto count = trim(pair.substr(colon + 1));
      auto n = positive(count);
      if (!n) {
        error(label, "the number of " + job + " tasks must be a positive integer, got '" +
                         count + "'");
        continue;
      }
      if (std::find_if(jobs_.begin(), jobs_.end(),
                       [&](auto& j) { return j.first == job; }) != jobs_.end()) {
        error(label, "job '" + job + "' is listed twice");
        continue;
      }
      jobs_.emplace_back(job, *n);
      out_.draft.set("tasks." + job + ".instances", std::to_string(*n), label);
    }
  }

  // -c and -m: general < job-level < task-level, whatever their order.
  void resources() {
    auto memory = items(args_.task_memory, "-m");
    auto vcores = items(args_.task_vcores, "-c");
    for (auto& [job, n] : jobs_) {
      emit(memory, job, "memory", std::to_string(ytf_default_memory_mb), "-m");
      emit(vcores, job, "vcores", std::to_string(ytf_default_vcores), "-c");
    }
  }

  std::vector<std::pair<resource_item, std::string>>
  items(const std::vector<std::string>& given, const std::string& flag) {
    std::vector<std::pair<resource_item, std::string>> out;
    for (auto& arg : given)
      for (auto& text : split_commas(arg)) {
        auto label = flag + " " + arg;
        if (auto item = parse_item(text, label, flag))
          out.emplace_back(std::move(*item), label);
      }
    return out;
  }

  std::optional<resource_item>
  parse_item(const std::string& text, const std::string& label, const std::string& flag) {
    resource_item item;
    auto colon = text.rfind(':');
    item.value = trim(colon == std::string::npos ? text : text.substr(colon + 1));
    if (colon != std::string::npos) {
      auto target = trim(text.substr(0, colon));
      auto bracket = target.find('[');
      item.job = trim(target.substr(0, bracket));
      if (bracket != std::string::npos) {
        auto close = target.find(']', bracket);
        auto idx = close == std::string::npos
                       ? std::string{}
                       : target.substr(bracket + 1, close - bracket - 1);
        bool digits = !idx.empty() && close + 1 == target.size() &&
                      std::all_of(idx.begin(), idx.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
        if (!digits) {
          error(label, "'" + text + "' is not " + flag + " job_name[task_index]:value");
          return std::nullopt;
        }
        item.index = std::stoi(idx);
      }
      auto job = std::find_if(jobs_.begin(), jobs_.end(),
                              [&](auto& j) { return j.first == item.job; });
      if (job == jobs_.end()) {
        error(label, "job '" + item.job + "' is not in -r " + args_.cluster_requirement);
        return std::nullopt;
      }
      if (item.index >= job->second) {
        error(label, item.job + " has " + std::to_string(job->second) +
                         " tasks (indexes 0 to " + std::to_string(job->second - 1) +
                         "), got index " + std::to_string(item.index));
        return std::nullopt;
      }
    }
    bool memory = flag == "-m";
    if (item.value.empty() || (!memory && !positive(item.value))) {
      error(label, "'" + text + "': " +
                       (memory ? "memory is MiB (8192) or a size (8g)"
                               : "vcores must be a positive integer"));
      return std::nullopt;
    }
    return item;
  }

  // The job's value (general, then its own) and each task's own.
  void emit(const std::vector<std::pair<resource_item, std::string>>& items,
            const std::string& job, const std::string& key, const std::string& fallback,
            const std::string& flag) {
    auto value = fallback;
    auto label = std::string{"YARN-DTF's default "} + flag;
    for (int pass = 0; pass < 2; ++pass)
      for (auto& [item, where] : items)
        if (item.index < 0 && (pass == 0 ? item.job.empty() : item.job == job)) {
          value = item.value;
          label = where;
        }
    out_.draft.set("tasks." + job + "." + key, literal(value), label);
    for (auto& [item, where] : items)
      if (item.job == job && item.index >= 0)
        out_.draft.set("tasks." + job + ".index." + std::to_string(item.index) + "." +
                           key,
                       literal(item.value), where);
  }

  static std::string literal(const std::string& value) {
    return positive(value) ? value : toml_quote(value);
  }

  void code() {
    out_.draft.set("code.src_dir", "false", "ytf-submit ships no directory");
    if (trim(args_.task_command).empty())
      error("ytf-submit", "no task_command: give the command every task runs, e.g. "
                          "'python ${DTF_TASK_SCRIPT} --job_name ${DTF_TASK_JOB_NAME}'");
    else
      out_.draft.set_string("code.command", args_.task_command, "task_command");
    out_.client = args_.client;
    out_.client_command = args_.task_command;
    if (args_.script.empty())
      return;
    auto label = "-s " + args_.script;
    auto path = (fs::path{cwd_} / args_.script).lexically_normal();
    auto name = path.filename().string();
    out_.draft.set("code.files", "[{ source = " + toml_quote(path.string()) + " }]",
                   label);
    out_.draft.set_string("env.DTF_TASK_SCRIPT", name, label);
    out_.client_env["DTF_TASK_SCRIPT"] = path.string();
  }

  void data() {
    if (!args_.input.empty())
      out_.draft.set_string("data.input_path", args_.input, "-i " + args_.input);
    if (!args_.output.empty())
      out_.draft.set_string("data.output_path", args_.output, "-o " + args_.output);
    if (args_.tensorboard) {
      if (args_.output.empty())
        error("-t/--tensorboard",
              "needs -o/--output: TensorBoard shows the output path, e.g. -t -o "
              "hdfs:///user/me/mnist/train");
      else
        out_.draft.set("tensorboard.enabled", "true", "-t");
    }
    if (!args_.docker_image.empty())
      out_.draft.set_string("docker.image", args_.docker_image,
                            "--docker_image " + args_.docker_image);
  }

  void error(const std::string& where, std::string message) {
    out_.draft.error(where, std::move(message));
  }

  const ytf_args& args_;
  std::string cwd_;
  std::vector<std::pair<std::string, int64_t>> jobs_;
  ytf_job out_;
};

} // namespace

ytf_job translate_ytf(const ytf_args& args, const std::string& cwd) {
  return ytf_translator{args, cwd}.run();
}

} // namespace tony
