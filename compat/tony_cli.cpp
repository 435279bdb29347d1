#include "compat/tony_cli.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/text.hpp"
#include "compat/placement_spec.hpp"
#include "compat/text.hpp"
#include "compat/tony_keys.hpp"
#include "config/job_toml.hpp"
#include "config/task_env.hpp"
#include "config/units.hpp"
#include "hadoop/configuration.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

// -- text helpers ---------------------------------------------------------------

using base::lower;
using base::trim;

// Hadoop's getStrings: comma-separated, trimmed, empty items dropped.
std::vector<std::string> split_list(const std::string& value) {
  return compat::split_commas(value, false);
}

using compat::int_or_string;
using compat::is_integer;
using compat::string_array;

bool is_within(const fs::path& path, const fs::path& dir) {
  auto rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// -- the configuration ------------------------------------------------------------

struct conf_value {
  std::string value;
  std::string origin; // "tony.xml:7:5", or "--conf"
};

using conf_map = std::map<std::string, conf_value>;

class tony_translator {
public:
  tony_translator(const tony_cli_args& args, std::string cwd)
      : args_(args)
      , cwd_(std::move(cwd)) {
    // nop
  }

  job_draft run() {
    read_sources();
    if (!d_.errors.empty())
      return std::move(d_);
    find_types();
    if (types_.empty())
      d_.error("TonY job", "no task type: set the number of tasks of each type, e.g. "
                           "--conf tony.worker.instances=2 (tony.<type>.instances)");
    application_keys();
    policy_keys();
    docker_keys();
    for (auto& [type, info] : types_)
      type_keys(type);
    flags();
    tensorboard_place();
    remaining_keys();
    check_commands();
    return std::move(d_);
  }

private:
  // -- reading ----------------------------------------------------------------

  void read_sources() {
    std::string file = args_.conf_file;
    if (file.empty() && fs::exists(fs::path{cwd_} / "tony.xml")) {
      file = "tony.xml";
      d_.note("read ./tony.xml, as TonY reads tony.xml from its classpath; pass "
              "--conf_file to name another");
    }
    if (!file.empty())
      read_xml(file);
    if (auto* dir = std::getenv("TONY_CONF_DIR"); dir != nullptr && *dir != '\0') {
      auto site = std::string{dir} + "/tony-site.xml";
      if (fs::exists(site))
        read_xml(site);
    }
    for (auto& item : args_.conf) {
      auto eq = item.find('=');
      if (eq == std::string::npos || trim(item.substr(0, eq)).empty()) {
        d_.error("--conf " + item,
                 "expected KEY=VALUE, e.g. --conf tony.worker.instances=2");
        continue;
      }
      auto key = trim(item.substr(0, eq));
      auto value = trim(item.substr(eq + 1));
      auto& slot = conf_[key];
      // TonY appends --conf values to these lists instead of replacing them.
      bool list = key == "tony.containers.resources" || key == "tony.containers.envs" ||
                  key == "tony.execution.envs";
      slot.value = list && !slot.value.empty() ? slot.value + "," + value : value;
      slot.origin = "--conf";
    }
  }

  void read_xml(const std::string& path) {
    auto full = fs::path{path}.is_absolute() ? fs::path{path} : fs::path{cwd_} / path;
    std::error_code ec;
    if (!fs::is_regular_file(full, ec)) {
      d_.error(path, "the TonY configuration file does not exist (resolved to " +
                         full.lexically_normal().string() + ")");
      return;
    }
    hadoop::configuration conf;
    if (auto ok = conf.add_file(full.string()); !ok) {
      auto msg = ok.error().message();
      // "<full path>:line:col: ..." names the file as the user gave it.
      if (msg.rfind(full.string(), 0) == 0)
        msg = path + msg.substr(full.string().size());
      d_.errors.push_back({"", 0, 0, msg});
      return;
    }
    std::vector<std::string> foreign;
    for (auto& key : conf.keys()) {
      auto origin = conf.origin(key);
      if (origin == "default")
        continue;
      if (origin.rfind(full.string(), 0) == 0)
        origin = path + origin.substr(full.string().size());
      if (key.rfind("tony.", 0) != 0) {
        foreign.push_back(key);
        continue;
      }
      conf_[key] = {conf.get_or(key, *conf.raw(key)), origin};
    }
    if (!foreign.empty()) {
      std::string list;
      for (auto& k : foreign)
        list += (list.empty() ? "" : ", ") + k;
      d_.note(path + ": ignored what is not a TonY key: " + list);
    }
  }

  // -- helpers ----------------------------------------------------------------

  const conf_value* get(const std::string& key) {
    auto i = conf_.find(key);
    if (i == conf_.end())
      return nullptr;
    used_.insert(key);
    return &i->second;
  }

  std::string label(const std::string& key) {
    auto& v = conf_.at(key);
    auto shown = v.value.size() > 60 ? v.value.substr(0, 57) + "..." : v.value;
    if (v.origin == "--conf")
      return "--conf " + key + "=" + shown;
    return v.origin + ": " + key + "=" + shown;
  }

  void set(const std::string& key, const std::string& toml_key,
           const std::string& toml_value) {
    d_.set(toml_key, toml_value, label(key));
  }

  void note(const std::string& key, const std::string& text) {
    d_.note(label(key) + ": " + text);
  }

  void unsupported(const std::string& key, const std::string& what) {
    d_.error(label(key), what + " is not supported yet; remove the setting to run "
                                "without it (doc/migrating.md)");
  }

  std::optional<bool> boolean(const std::string& key) {
    auto* v = get(key);
    if (v == nullptr)
      return std::nullopt;
    auto b = lower(trim(v->value));
    if (b == "true" || b == "false")
      return b == "true";
    d_.error(label(key), "must be true or false");
    return std::nullopt;
  }

  // A duration in milliseconds as TonY writes it, as a TOML duration;
  // negative means none (0). Nothing when unset or malformed (reported).
  std::optional<std::string> millis_value(const std::string& key) {
    auto* v = get(key);
    if (v == nullptr)
      return std::nullopt;
    if (!is_integer(v->value)) {
      d_.error(label(key), "must be a number of milliseconds");
      return std::nullopt;
    }
    auto ms = std::max<int64_t>(std::atoll(trim(v->value).c_str()), 0);
    return toml_quote(std::to_string(ms) + "ms");
  }

  void millis(const std::string& key, const std::string& toml_key) {
    if (auto value = millis_value(key))
      set(key, toml_key, *value);
  }

  // -- task types ---------------------------------------------------------------

  struct type_info {
    int64_t instances = 0;
  };

  // TonY's task types are those with tony.<type>.instances (INSTANCES_REGEX);
  // a type with 0 instances does not run.
  void find_types() {
    for (auto& [key, v] : conf_) {
      if (key.rfind("tony.", 0) != 0)
        continue;
      auto rest = key.substr(5);
      auto dot = rest.find('.');
      if (dot == std::string::npos || rest.substr(dot + 1) != "instances" ||
          reserved_segments().count(rest.substr(0, dot)) != 0)
        continue;
      auto type = rest.substr(0, dot);
      if (!is_integer(v.value)) {
        get(key);
        d_.error(label(key), "must be a number of tasks");
        continue;
      }
      auto n = std::atoll(trim(v.value).c_str());
      if (n > 0)
        types_[type].instances = n;
      else
        get(key);
    }
  }

  void type_keys(const std::string& type) {
    auto prefix = "tony." + type + ".";
    auto table = "tasks." + type;
    if (auto* v = get(prefix + "instances"))
      set(prefix + "instances", table + ".instances", int_or_string(v->value));
    if (auto* v = get(prefix + "memory"))
      set(prefix + "memory", table + ".memory", memory_value(v->value));
    for (auto [prop, key] : {std::pair{"vcores", "vcores"}, std::pair{"gpus", "gpus"}})
      if (auto* v = get(prefix + prop))
        set(prefix + prop, table + "." + key, int_or_string(v->value));
    if (auto* v = get(prefix + "command"))
      set(prefix + "command", table + ".command", toml_quote(v->value));
    if (auto* v = get(prefix + "node-label"))
      set(prefix + "node-label", table + ".node_label", toml_quote(v->value));
    if (auto* v = get(prefix + "resources"))
      files_value(prefix + "resources", table, v->value);
    if (auto* v = get(prefix + "placement-spec"))
      placement_spec(type, v->value);
    for (auto key : {"tony.docker." + type + ".image", prefix + "docker.image"})
      if (auto* v = get(key)) {
        if (docker_enabled_)
          set(key, table + ".docker_image", toml_quote(v->value));
        else
          note(key, "ignored, as TonY does: tony.docker.enabled is not true");
      }
    if (auto* v = get(prefix + "max-instances"))
      if (is_integer(v->value) && std::atoll(v->value.c_str()) >= 0 &&
          types_[type].instances > std::atoll(v->value.c_str()))
        d_.error(label(prefix + "max-instances"),
                 "the job asks for " + std::to_string(types_[type].instances) + " " +
                     type + " tasks, more than this limit");
    if (auto* v = get(prefix + "depends-on"); v != nullptr && !trim(v->value).empty())
      unsupported(prefix + "depends-on", "starting a task type after another");
    if (auto* v = get(prefix + "timeout"); v != nullptr && trim(v->value) != "0")
      d_.error(label(prefix + "timeout"),
               "TonY applied this timeout to its preprocessing job only, which tony "
               "does not run; remove it, and give the tasks a time limit with "
               "tony.task.executor.execution-timeout-ms (doc/migrating.md)");
  }

  // tony.<type>.placement-spec as max_per_node (compat/placement_spec.hpp).
  void placement_spec(const std::string& type, const std::string& spec) {
    auto key = "tony." + type + ".placement-spec";
    auto* tags = get("tony." + type + ".allocation-tags");
    auto own =
        tags ? compat::split_commas(tags->value, false) : std::vector<std::string>{type};
    if (auto x = compat::translate_placement_spec(spec, own); x.max_per_node > 0)
      set(key, "tasks." + type + ".max_per_node", std::to_string(x.max_per_node));
    else
      d_.error(label(key), x.error);
  }

  // TonY's memory strings ("4g", "2048m", "2048") are tony's sizes too.
  static std::string memory_value(const std::string& value) {
    auto v = lower(trim(value));
    return is_integer(v) ? v : toml_quote(v);
  }

  // tony.<type>.resources / tony.containers.resources: "path[::name][#archive]".
  void files_value(const std::string& key, const std::string& table,
                   const std::string& value) {
    std::vector<std::string> files;
    std::vector<std::string> archives;
    for (auto item : split_list(value)) {
      bool archive = false;
      if (item.size() > 8 && lower(item.substr(item.size() - 8)) == "#archive") {
        archive = true;
        item.resize(item.size() - 8);
      }
      auto sep = item.find("::");
      auto source = item.substr(0, sep);
      if (source.find("://") == std::string::npos)
        source = (fs::path{cwd_} / source).lexically_normal().string();
      auto entry = "{ source = " + toml_quote(source);
      if (sep != std::string::npos)
        entry += ", name = " + toml_quote(item.substr(sep + 2));
      (archive ? archives : files).push_back(entry + " }");
    }
    auto join = [](const std::vector<std::string>& xs) {
      return "[" + base::join(xs, ", ") + "]";
    };
    if (!files.empty())
      set(key, table + ".files", join(files));
    if (!archives.empty())
      set(key, table + ".archives", join(archives));
  }

  // -- the application ----------------------------------------------------------

  void application_keys() {
    if (auto* v = get("tony.application.name"))
      set("tony.application.name", "name", toml_quote(v->value));
    for (auto key : {"tony.application.queue", "tony.yarn.queue"})
      if (auto* v = get(key))
        set(key, "queue", toml_quote(v->value));
    if (auto* v = get("tony.application.tags"))
      set("tony.application.tags", "tags", string_array(split_list(v->value)));
    if (auto* v = get("tony.application.node-label"))
      set("tony.application.node-label", "node_label", toml_quote(v->value));
    millis("tony.application.timeout", "timeout");
    if (auto* v = get("tony.application.framework")) {
      auto fw = lower(trim(v->value));
      if (fw == "mxnet")
        unsupported("tony.application.framework", "MXNet");
      else
        set("tony.application.framework", "framework", toml_quote(fw));
    }
    if (auto* v = get("tony.application.distributed-mode");
        v != nullptr && lower(trim(v->value)) != "gang")
      unsupported("tony.application.distributed-mode",
                  "starting tasks as they come (FCFS) instead of as a gang");
    if (boolean("tony.application.enable-preprocess").value_or(false))
      unsupported("tony.application.enable-preprocess", "TonY's preprocessing job");
    for (auto key : {"tony.application.prepare-stage", "tony.application.training-stage"})
      if (auto* v = get(key); v != nullptr && !trim(v->value).empty())
        unsupported(key, "TonY's staged jobs");
    if (auto* v = get("tony.application.tensorboard-log-dir")) {
      set("tony.application.tensorboard-log-dir", "tensorboard.enabled", "true");
      set("tony.application.tensorboard-log-dir", "tensorboard.log_dir",
          toml_quote(v->value));
    }
    if (auto* v = get("tony.containers.command"))
      set("tony.containers.command", "code.command", toml_quote(v->value));
    if (auto* v = get("tony.containers.resources"))
      files_value("tony.containers.resources", "code", v->value);
    if (auto* v = get("tony.python-exec-path"))
      set("tony.python-exec-path", "code.python_binary_path", toml_quote(v->value));
    env_list("tony.containers.envs");
    env_list("tony.execution.envs");
    other_namenodes();
    job_type_lists();
    am_keys();
  }

  void env_list(const std::string& key) {
    auto* v = get(key);
    if (v == nullptr)
      return;
    for (auto& pair : split_list(v->value)) {
      auto eq = pair.find('=');
      if (eq == std::string::npos || eq == 0)
        d_.error(label(key), "'" + pair + "' is not NAME=VALUE");
      else
        set(key, "env." + pair.substr(0, eq), toml_quote(pair.substr(eq + 1)));
    }
  }

  // untracked.jobtypes and sidecar.jobtypes name types; tony's defaults
  // (ps untracked, tensorboard a sidecar) are TonY's too.
  // TonY monitors a type unless it is untracked or a sidecar
  // (Utils.isJobTypeMonitored).
  void job_type_lists() {
    const std::string untracked_key = "tony.application.untracked.jobtypes";
    const std::string sidecar_key = "tony.application.sidecar.jobtypes";
    auto* untracked_v = get(untracked_key);
    auto* sidecar_v = get(sidecar_key);
    if (untracked_v == nullptr && sidecar_v == nullptr)
      return;
    auto untracked =
        untracked_v ? split_list(untracked_v->value) : std::vector<std::string>{"ps"};
    auto sidecars = sidecar_v ? split_list(sidecar_v->value)
                              : std::vector<std::string>{"tensorboard"};
    auto in = [](const std::vector<std::string>& xs, const std::string& x) {
      return std::find(xs.begin(), xs.end(), x) != xs.end();
    };
    for (auto& [type, info] : types_) {
      bool sidecar = in(sidecars, type);
      if (sidecar_v != nullptr)
        set(sidecar_key, "tasks." + type + ".sidecar", sidecar ? "true" : "false");
      set(untracked_v != nullptr ? untracked_key : sidecar_key,
          "tasks." + type + ".tracked",
          !in(untracked, type) && !sidecar ? "true" : "false");
    }
  }

  void am_keys() {
    if (auto* v = get("tony.am.memory"))
      set("tony.am.memory", "am.memory", memory_value(v->value));
    if (auto* v = get("tony.am.vcores"))
      set("tony.am.vcores", "am.vcores", int_or_string(v->value));
    if (auto* v = get("tony.am.gpus"); v != nullptr && trim(v->value) != "0")
      note("tony.am.gpus", "ignored: tony's AM trains nothing and asks for no GPU");
    if (auto* v = get("tony.am.retry-count")) {
      if (!is_integer(v->value) || std::atoll(v->value.c_str()) < 0) {
        d_.error(label("tony.am.retry-count"), "must be a number of retries");
      } else {
        auto attempts = std::atoll(v->value.c_str()) + 1;
        set("tony.am.retry-count", "am.max_app_attempts", std::to_string(attempts));
        note("tony.am.retry-count", "tony counts attempts, not retries: [am] "
                                    "max_app_attempts = " +
                                        std::to_string(attempts));
      }
    }
  }

  // -- lifecycle ----------------------------------------------------------------

  void policy_keys() {
    millis("tony.container.allocation.timeout", "policy.allocation_timeout");
    registration_timeout();
    execution_timeout();
    if (auto* v = get("tony.am.startup-timeout"); v != nullptr && !is_integer(v->value))
      d_.error(label("tony.am.startup-timeout"), "must be a number of milliseconds");
    else if (v != nullptr && std::atoll(trim(v->value).c_str()) > 0)
      d_.error(label("tony.am.startup-timeout"),
               "tony-submit does not give up on an application whose "
               "ApplicationMaster has not started (YARN keeps it ACCEPTED while the "
               "queue is full); remove the key, and stop such a job with tony-submit "
               "--kill <application id>");
    auto* interval = get("tony.task.heartbeat-interval-ms");
    auto* missed = get("tony.task.max-missed-heartbeats");
    int64_t interval_ms = 1000;
    if (interval != nullptr && is_integer(interval->value))
      interval_ms = std::atoll(interval->value.c_str());
    if (interval != nullptr)
      millis("tony.task.heartbeat-interval-ms", "policy.heartbeat_interval");
    if (missed != nullptr) {
      if (!is_integer(missed->value) || std::atoll(missed->value.c_str()) < 1) {
        d_.error(label("tony.task.max-missed-heartbeats"), "must be a positive number");
      } else {
        auto ms = interval_ms * std::atoll(missed->value.c_str());
        set("tony.task.max-missed-heartbeats", "policy.heartbeat_timeout",
            toml_quote(std::to_string(ms) + "ms"));
        note("tony.task.max-missed-heartbeats",
             "tony counts time, not heartbeats: [policy] heartbeat_timeout = \"" +
                 format_duration(ms) + "\"");
      }
    }
    failure_policy();
    total_limits();
  }

  // TonY's AM waits tony.container.registration.timeout (ms) for executors
  // to register, and each executor tries to register for
  // tony.task.executor.registry-timeout-sec (s); tony's AM alone waits,
  // [policy] registration_timeout: the shorter of the two bounds it.
  void registration_timeout() {
    const std::string am_key = "tony.container.registration.timeout";
    const std::string exec_key = "tony.task.executor.registry-timeout-sec";
    auto* am = get(am_key);
    auto* exec = get(exec_key);
    for (auto [v, key, unit] :
         {std::tuple{am, am_key, "milliseconds"}, std::tuple{exec, exec_key, "seconds"}})
      if (v != nullptr && !is_integer(v->value)) {
        d_.error(label(key), std::string{"must be a number of "} + unit);
        return;
      }
    int64_t am_ms = am ? std::atoll(trim(am->value).c_str()) : 0;
    int64_t exec_ms = exec ? std::atoll(trim(exec->value).c_str()) * 1000 : 0;
    if (exec_ms > 0 && (am_ms <= 0 || exec_ms < am_ms)) {
      set(exec_key, "policy.registration_timeout",
          toml_quote(std::to_string(exec_ms) + "ms"));
      note(exec_key, "tony's AM waits this long for every executor to register: "
                     "[policy] registration_timeout = \"" +
                         format_duration(exec_ms) + "\"");
    } else if (am != nullptr) {
      set(am_key, "policy.registration_timeout",
          toml_quote(std::to_string(std::max<int64_t>(am_ms, 0)) + "ms"));
      if (exec_ms > 0)
        note(exec_key, "has no effect: tony.container.registration.timeout is shorter");
    }
  }

  // TonY's executors kill the task command after
  // tony.task.executor.execution-timeout-ms: every type's execution_timeout.
  void execution_timeout() {
    const std::string key = "tony.task.executor.execution-timeout-ms";
    if (auto value = millis_value(key))
      for (auto& [type, info] : types_)
        set(key, "tasks." + type + ".execution_timeout", *value);
  }

  // TonY gets delegation tokens of tony.other.namenodes ("hdfs://nn:8020",
  // comma-separated) besides fs.defaultFS's: [security] file_systems.
  void other_namenodes() {
    const std::string key = "tony.other.namenodes";
    auto* v = get(key);
    if (v == nullptr)
      return;
    auto uris = tony_namenodes(v->value);
    if (!uris.empty())
      set(key, "security.file_systems", string_array(uris));
  }

  // TonY lets non-chief workers fail unless fail-on-worker-failure-enabled;
  // tony fails at the first failed tracked task unless [policy]
  // tolerated_failures says otherwise (the chief's failure always ends it).
  void failure_policy() {
    auto fail_fast = boolean("tony.application.fail-on-worker-failure-enabled");
    int64_t tracked = 0;
    for (auto& [type, info] : types_)
      if (type != "ps" && type != "tensorboard")
        tracked += info.instances;
    if (fail_fast.has_value() && !*fail_fast && tracked > 1) {
      set("tony.application.fail-on-worker-failure-enabled", "policy.tolerated_failures",
          std::to_string(tracked - 1));
    } else if (!fail_fast.has_value() && tracked > 1) {
      d_.note("TonY lets workers other than the chief fail unless "
              "tony.application.fail-on-worker-failure-enabled=true; tony fails the job "
              "at the first failed tracked task (set [policy] tolerated_failures to "
              "allow some)");
    }
  }

  void total_limits() {
    int64_t instances = 0;
    for (auto& [type, info] : types_)
      instances += info.instances;
    if (auto* v = get("tony.task.max-total-instances"))
      if (is_integer(v->value) && std::atoll(v->value.c_str()) >= 0 &&
          instances > std::atoll(v->value.c_str()))
        d_.error(label("tony.task.max-total-instances"),
                 "the job asks for " + std::to_string(instances) +
                     " tasks, more than this limit");
    for (auto& [key, v] : conf_)
      if (key.rfind("tony.task.max-total-", 0) == 0 &&
          key != "tony.task.max-total-instances")
        get(key); // resource limits: the cluster's queue enforces them anyway
  }

  // TonY's chief gets TB_PORT for a TensorBoard it starts, unless TonY runs
  // the sidecar (tony.application.tensorboard-log-dir,
  // --sidecar_tensorboard_log_dir): so does tony's.
  void tensorboard_place() {
    if (conf_.count("tony.application.tensorboard-log-dir") ||
        !args_.sidecar_tensorboard_log_dir.empty())
      return;
    std::vector<std::string> names;
    for (auto& t : types_)
      names.push_back(t.first);
    if (names.empty() || !world_chief(names))
      return;
    d_.set("tensorboard.on", "\"chief\"", "TonY's TensorBoard on the chief");
    d_.note("the chief (" + to_string(*world_chief(names)) +
            ") gets TB_PORT for a TensorBoard it starts, as in TonY ([tensorboard] on = "
            "\"chief\"); the tracking URL links to it");
  }

  // -- Docker ---------------------------------------------------------------------

  void docker_keys() {
    auto enabled = boolean("tony.docker.enabled");
    auto old = boolean("tony.application.docker.enabled");
    docker_enabled_ = enabled.value_or(false) || old.value_or(false);
    for (auto key : {"tony.docker.containers.image", "tony.application.docker.image"})
      if (auto* v = get(key);
          v != nullptr && (enabled.value_or(false) || old.value_or(false)))
        set(key, "docker.image", toml_quote(v->value));
    // TonY's mounts: "src:dst[:mode]" separated by ','.
    if (auto* v = get("tony.docker.containers.mount"); v != nullptr && docker_enabled_) {
      auto mounts = split_list(v->value);
      if (!mounts.empty())
        set("tony.docker.containers.mount", "docker.mounts", string_array(mounts));
    }
    if (enabled.value_or(false) && !conf_.count("tony.docker.containers.image")) {
      bool any_type = std::any_of(types_.begin(), types_.end(), [&](auto& t) {
        return conf_.count("tony.docker." + t.first + ".image") != 0;
      });
      if (!any_type)
        d_.error(label("tony.docker.enabled"),
                 "Docker is enabled but no image is set (tony.docker.containers.image)");
    }
  }

  // -- the command line -------------------------------------------------------------

  void flags() {
    std::string src;
    if (!args_.src_dir.empty()) {
      src = (fs::path{cwd_} / args_.src_dir).lexically_normal().string();
      d_.set_string("code.src_dir", src, "--src_dir " + args_.src_dir);
    } else {
      d_.set("code.src_dir", "false", "no --src_dir");
    }
    if (!args_.python_venv.empty())
      d_.set_string("code.python_venv",
                    (fs::path{cwd_} / args_.python_venv).lexically_normal().string(),
                    "--python_venv " + args_.python_venv);
    if (!args_.python_binary_path.empty())
      d_.set_string("code.python_binary_path", args_.python_binary_path,
                    "--python_binary_path " + args_.python_binary_path);
    if (!args_.executes.empty())
      command(src);
    for (auto* list : {&args_.shell_env, &args_.container_env})
      for (auto& pair : *list) {
        auto flag = list == &args_.shell_env ? "--shell_env " : "--container_env ";
        auto eq = pair.find('=');
        if (eq == std::string::npos || eq == 0)
          d_.error(flag + pair, "expected NAME=VALUE, e.g. " + std::string{flag} +
                                    "LD_LIBRARY_PATH=/usr/lib");
        else
          d_.set_string("env." + pair.substr(0, eq), pair.substr(eq + 1), flag + pair);
      }
    if (!args_.sidecar_tensorboard_log_dir.empty()) {
      auto flag = "--sidecar_tensorboard_log_dir " + args_.sidecar_tensorboard_log_dir;
      d_.set("tensorboard.enabled", "true", flag);
      d_.set_string("tensorboard.log_dir", args_.sidecar_tensorboard_log_dir, flag);
    }
    if (!args_.hdfs_classpath.empty())
      d_.error(
          "--hdfs_classpath " + args_.hdfs_classpath,
          "a JVM classpath for the tasks is not supported; ship the jars as files "
          "(--conf tony.containers.resources=...) and set CLASSPATH with --shell_env");
    if (!conf_.count("tony.application.name"))
      d_.set_string("name", "TonyApplication", "TonY's default name");
  }

  // TonyClient.buildTaskCommand: [<python>] <executes> [<task_params>].
  void command(const std::string& src) {
    auto label = "--executes " + args_.executes;
    auto exec = executes_in(src, label);
    if (exec.empty())
      return;
    bool python_given = !args_.python_binary_path.empty() || !args_.python_venv.empty();
    bool is_python = exec.size() > 3 && exec.compare(exec.size() - 3, 3, ".py") == 0;
    std::string cmd;
    if (python_given)
      cmd = "python " + exec;
    else if (is_python)
      cmd = "python3 " + exec;
    else
      cmd = exec.find('/') == std::string::npos ? "./" + exec : exec;
    if (!args_.task_params.empty())
      cmd += " " + args_.task_params;
    d_.set_string("code.command", cmd, label);
  }

  // Where --executes is, relative to the working directory: inside the
  // shipped src dir, or shipped on its own when there is none.
  std::string executes_in(const std::string& src, const std::string& label) {
    fs::path exec{args_.executes};
    auto here = exec.is_absolute() ? exec : (fs::path{cwd_} / exec).lexically_normal();
    std::error_code ec;
    if (!src.empty()) {
      if (!exec.is_absolute() && fs::exists(fs::path{src} / exec, ec))
        return exec.lexically_normal().string();
      if (is_within(here, src) && fs::exists(here, ec))
        return here.lexically_relative(src).string();
      if (exec.is_absolute())
        return exec.string(); // on the nodes
      d_.error(label,
               "not found in --src_dir " + src + " (nor at " + here.string() + ")");
      return {};
    }
    if (fs::is_regular_file(here, ec)) {
      auto name = here.filename().string();
      d_.set("code.files", "[{ source = " + toml_quote(here.string()) + " }]", label);
      return name;
    }
    if (exec.is_absolute())
      return exec.string();
    d_.error(label, "does not exist (resolved to " + here.string() +
                        "); without --src_dir it is shipped on its own");
    return {};
  }

  // A job without --executes needs tony.containers.command or a command for
  // every type.
  void check_commands() {
    if (!args_.executes.empty() || conf_.count("tony.containers.command") != 0)
      return;
    for (auto& [type, info] : types_)
      if (conf_.count("tony." + type + ".command") == 0) {
        d_.error("TonY job", "no command for the " + type +
                                 " tasks: give --executes (and --task_params), or set "
                                 "tony.containers.command or tony." +
                                 type + ".command");
        return;
      }
  }

  // -- the rest -----------------------------------------------------------------------

  void remaining_keys() {
    std::set<std::string> idle_types;
    for (auto& [key, v] : conf_) {
      if (used_.count(key) != 0)
        continue;
      if (key.rfind("tony.", 0) != 0) {
        note(key, "ignored: not a TonY key");
        continue;
      }
      bool ignored = false;
      for (auto& [prefix, why] : ignored_tony_keys())
        if (key == prefix || (prefix.back() == '.' && key.rfind(prefix, 0) == 0)) {
          if (!trim(v.value).empty())
            note(key, "ignored: " + why);
          ignored = true;
          break;
        }
      if (ignored)
        continue;
      auto& known = known_tony_keys();
      if (std::find(known.begin(), known.end(), key) != known.end()) {
        note(key, "has no effect in this job");
        continue;
      }
      auto rest = key.substr(5);
      auto dot = rest.find('.');
      auto segment = rest.substr(0, dot);
      auto prop = dot == std::string::npos ? std::string{} : rest.substr(dot + 1);
      bool type_key =
          key.rfind("tony.", 0) == 0 && dot != std::string::npos &&
          reserved_segments().count(segment) == 0 &&
          std::find(type_props().begin(), type_props().end(), prop) != type_props().end();
      if (type_key) {
        idle_types.insert(segment);
        continue;
      }
      unknown(key, segment);
    }
    for (auto& type : idle_types)
      d_.note("tony." + type + ".* ignored: there is no tony." + type +
              ".instances, so TonY runs no " + type + " task either");
  }

  void unknown(const std::string& key, const std::string& segment) {
    std::string best;
    size_t best_d = std::string::npos;
    for (auto known : known_tony_keys()) {
      if (auto pos = known.find("<type>"); pos != std::string::npos)
        known.replace(pos, 6, segment);
      auto d = edit_distance(key, known);
      if (d < best_d) {
        best_d = d;
        best = known;
      }
    }
    std::string msg = "unknown TonY key '" + key + "'";
    if (best_d <= 3)
      msg += "; did you mean '" + best + "'?";
    else
      msg += "; doc/migrating.md lists the keys tony reads";
    d_.error(label(key), msg);
  }

  const tony_cli_args& args_;
  std::string cwd_;
  conf_map conf_;
  std::set<std::string> used_;
  std::map<std::string, type_info> types_;
  bool docker_enabled_ = false;
  job_draft d_;
};

} // namespace

job_draft translate_tony(const tony_cli_args& args, const std::string& cwd) {
  return tony_translator{args, cwd}.run();
}

} // namespace tony
