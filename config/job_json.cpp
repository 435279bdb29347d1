#include "config/job_json.hpp"

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "config/limits.hpp"
#include "config/validate.hpp"
#include "messages/error.hpp"

namespace tony {

namespace {

using json = nlohmann::json;

json resource_json(const resource& r) {
  return {{"memory_mb", r.memory_mb}, {"vcores", r.vcores}, {"gpus", r.gpus}};
}

json files_json(const std::vector<shipped_file>& files) {
  json out = json::array();
  for (auto& f : files)
    out.push_back({{"source", f.source}, {"name", f.name}, {"archive", f.archive}});
  return out;
}

// [tasks.<type>.index.<i>] as [{"index": i, "capability": {...}, "priority": p}].
json indexes_json(const task_type_spec& t) {
  json out = json::array();
  for (auto& [index, cap] : t.index_capability)
    out.push_back({{"index", index},
                   {"capability", resource_json(cap)},
                   {"priority", t.priority_of(index)}});
  return out;
}

// Reads typed fields out of a JSON object, remembering the first problem
// with its path. After an error every further read is a no-op.
class json_reader {
public:
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  void fail(const std::string& path, const std::string& what) {
    if (!failed())
      error_ = "'" + path + "' " + what;
  }

  // The member `key` of `obj`, or nullptr when missing (a default applies).
  const json* member(const json& obj, const std::string& path, const char* key) {
    if (failed())
      return nullptr;
    if (!obj.is_object()) {
      fail(path, "must be an object");
      return nullptr;
    }
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string{key} : path + "." + key;
  }

  void read(const json& obj, const std::string& path, const char* key, std::string& out) {
    if (auto* v = member(obj, path, key)) {
      if (v->is_string())
        out = v->get<std::string>();
      else
        fail(join(path, key), "must be a string");
    }
  }

  void read(const json& obj, const std::string& path, const char* key, bool& out) {
    if (auto* v = member(obj, path, key)) {
      if (v->is_boolean())
        out = v->get<bool>();
      else
        fail(join(path, key), "must be a boolean");
    }
  }

  template <class Int>
  void read_int(const json& obj, const std::string& path, const char* key, Int& out,
                int64_t lo, int64_t hi) {
    if (auto* v = member(obj, path, key)) {
      if (!v->is_number_integer()) {
        fail(join(path, key), "must be an integer");
        return;
      }
      // Unsigned values past int64 read as negative here and fail the range.
      auto x = v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX)
                   ? int64_t{-1}
                   : v->get<int64_t>();
      if (x < lo || x > hi)
        fail(join(path, key), "must be between " + std::to_string(lo) + " and " +
                                  std::to_string(hi) + ", got " + std::to_string(x));
      else
        out = static_cast<Int>(x);
    }
  }

  void read(const json& obj, const std::string& path, const char* key,
            std::vector<std::string>& out) {
    if (auto* v = member(obj, path, key)) {
      if (!v->is_array()) {
        fail(join(path, key), "must be an array of strings");
        return;
      }
      out.clear();
      for (auto& x : *v) {
        if (!x.is_string()) {
          fail(join(path, key), "must be an array of strings");
          return;
        }
        out.push_back(x.get<std::string>());
      }
    }
  }

  void read(const json& obj, const std::string& path, const char* key,
            std::map<std::string, std::string>& out) {
    if (auto* v = member(obj, path, key)) {
      if (!v->is_object()) {
        fail(join(path, key), "must be an object of strings");
        return;
      }
      out.clear();
      for (auto& [k, x] : v->items()) {
        if (!x.is_string()) {
          fail(join(path, key) + "." + k, "must be a string");
          return;
        }
        out.emplace(k, x.get<std::string>());
      }
    }
  }

  void read(const json& obj, const std::string& path, const char* key,
            std::vector<shipped_file>& out) {
    auto* v = member(obj, path, key);
    if (v == nullptr)
      return;
    if (!v->is_array()) {
      fail(join(path, key), "must be an array of files");
      return;
    }
    out.clear();
    for (size_t i = 0; i < v->size() && !failed(); ++i) {
      auto p = join(path, key) + "[" + std::to_string(i) + "]";
      shipped_file f;
      read((*v)[i], p, "source", f.source);
      read((*v)[i], p, "name", f.name);
      read((*v)[i], p, "archive", f.archive);
      if (!failed() && (f.source.empty() || f.name.empty()))
        fail(p, "needs a source and a name");
      out.push_back(std::move(f));
    }
  }

  void read_indexes(const json& obj, const std::string& path, task_type_spec& t) {
    auto* v = member(obj, path, "indexes");
    if (v == nullptr)
      return;
    if (!v->is_array()) {
      fail(join(path, "indexes"), "must be an array");
      return;
    }
    for (size_t i = 0; i < v->size() && !failed(); ++i) {
      auto p = join(path, "indexes") + "[" + std::to_string(i) + "]";
      int32_t index = 0;
      int32_t priority = 0;
      resource cap;
      read_int((*v)[i], p, "index", index, 0, INT32_MAX);
      read((*v)[i], p, "capability", cap);
      read_int((*v)[i], p, "priority", priority, 0, INT32_MAX);
      t.index_capability[index] = cap;
      t.index_priority[index] = priority;
    }
  }

  void read(const json& obj, const std::string& path, const char* key, resource& out) {
    if (auto* v = member(obj, path, key)) {
      auto p = join(path, key);
      read_int(*v, p, "memory_mb", out.memory_mb, 0, int64_t{1} << 40);
      read_int(*v, p, "vcores", out.vcores, 0, INT32_MAX);
      read_int(*v, p, "gpus", out.gpus, 0, INT32_MAX);
    }
  }

private:
  std::string error_;
};

constexpr int64_t int64_max = INT64_MAX;

void read_task_policy(json_reader& r, const json& t, const std::string& path,
                      task_type_spec& ts) {
  std::string restart = "never";
  r.read(t, path, "restart", restart);
  if (restart == "on-failure")
    ts.restart = restart_policy::on_failure;
  else if (restart != "never")
    r.fail(path + ".restart", "must be \"never\" or \"on-failure\"");
  r.read_int(t, path, "max_restarts", ts.max_restarts, 0, INT32_MAX);
  r.read_int(t, path, "restart_backoff_ms", ts.restart_backoff_ms, 0, int64_max);
  r.read_int(t, path, "tolerated_failures", ts.tolerated_failures, -1, INT32_MAX);
  r.read_int(t, path, "elastic_min", ts.elastic_min, 0, INT32_MAX);
  r.read_int(t, path, "elastic_max", ts.elastic_max, 0, INT32_MAX);
  r.read_int(t, path, "spec_signal", ts.spec_signal, 0, 64);
  std::string placement = "spread";
  r.read(t, path, "placement", placement);
  if (placement == "pack")
    ts.pack = true;
  else if (placement != "spread")
    r.fail(path + ".placement", "must be \"spread\" or \"pack\"");
  r.read_int(t, path, "max_per_node", ts.max_per_node, 0, INT32_MAX);
  r.read_int(t, path, "execution_timeout_ms", ts.execution_timeout_ms, 0, int64_max);
}

json task_json(const task_type_spec& t) {
  return {{"name", t.name},
          {"instances", t.instances},
          {"capability", resource_json(t.capability)},
          {"command", t.command},
          {"tracked", t.tracked},
          {"sidecar", t.sidecar},
          {"node_label", t.node_label},
          {"placement", t.pack ? "pack" : "spread"},
          {"max_per_node", t.max_per_node},
          {"env", t.env},
          {"priority", t.priority},
          {"files", files_json(t.files)},
          {"docker_image", t.docker_image},
          {"indexes", indexes_json(t)},
          {"restart", t.restart == restart_policy::on_failure ? "on-failure" : "never"},
          {"max_restarts", t.max_restarts},
          {"restart_backoff_ms", t.restart_backoff_ms},
          {"tolerated_failures", t.tolerated_failures},
          {"elastic_min", t.elastic_min},
          {"elastic_max", t.elastic_max},
          {"spec_signal", t.spec_signal},
          {"execution_timeout_ms", t.execution_timeout_ms}};
}

} // namespace

std::string to_json(const job_spec& spec, int indent) {
  json tasks = json::array();
  for (auto& t : spec.tasks)
    tasks.push_back(task_json(t));
  json doc = {
      {"version", job_json_version},
      {"name", spec.name},
      {"framework", spec.framework},
      {"queue", spec.queue},
      {"timeout_ms", spec.timeout_ms},
      {"tags", spec.tags},
      {"node_label", spec.node_label},
      {"docker_image", spec.docker_image},
      {"docker",
       {{"mounts", spec.docker_mounts},
        {"network", spec.docker_network},
        {"run_options", spec.docker_run_options}}},
      {"code",
       {{"src_dir", spec.src_dir},
        {"command", spec.command},
        {"python_venv", spec.python_venv},
        {"python_binary_path", spec.python_binary_path},
        {"files", files_json(spec.files)}}},
      {"env", spec.env},
      {"setting_names", spec.setting_names},
      {"data", {{"input_path", spec.input_path}, {"output_path", spec.output_path}}},
      {"tasks", tasks},
      {"tensorboard",
       {{"enabled", spec.tensorboard.enabled},
        {"log_dir", spec.tensorboard.log_dir},
        {"on", spec.tensorboard.on}}},
      {"cluster",
       {{"backend", spec.cluster.backend},
        {"hadoop_conf", spec.cluster.hadoop_conf},
        {"install_dir", spec.cluster.install_dir},
        {"staging_dir", spec.cluster.staging_dir},
        {"shared_cache", spec.cluster.shared_cache},
        {"jobs_dir", spec.cluster.jobs_dir},
        {"history_dir", spec.cluster.history_dir},
        {"local",
         {{"memory_mb", spec.cluster.local.memory_mb},
          {"vcores", spec.cluster.local.vcores},
          {"gpus", spec.cluster.local.gpus}}}}},
      {"am",
       {{"capability", resource_json(spec.am.capability)},
        {"max_app_attempts", spec.am.max_app_attempts},
        {"reconnect_timeout_ms", spec.am.reconnect_timeout_ms}}},
      {"policy",
       {{"max_attempts", spec.policy.max_attempts},
        {"allocation_timeout_ms", spec.policy.allocation_timeout_ms},
        {"registration_timeout_ms", spec.policy.registration_timeout_ms},
        {"heartbeat_interval_ms", spec.policy.heartbeat_interval_ms},
        {"heartbeat_timeout_ms", spec.policy.heartbeat_timeout_ms},
        {"stop_grace_ms", spec.policy.stop_grace_ms},
        {"tolerated_failures", spec.policy.tolerated_failures}}},
      {"job_file", spec.job_file},
  };
  // Replace, not throw, on invalid UTF-8: the loader validated the text, and
  // a spec built elsewhere must still serialize.
  return doc.dump(indent, ' ', false, json::error_handler_t::replace);
}

namespace {

// The sections of a job.json document, each read into `s` by `r`.
void read_top(json_reader& r, const json& doc, job_spec& s) {
  r.read(doc, "", "name", s.name);
  r.read(doc, "", "framework", s.framework);
  r.read(doc, "", "queue", s.queue);
  r.read_int(doc, "", "timeout_ms", s.timeout_ms, 0, int64_max);
  r.read(doc, "", "tags", s.tags);
  r.read(doc, "", "node_label", s.node_label);
  r.read(doc, "", "docker_image", s.docker_image);
  if (auto* docker = r.member(doc, "", "docker")) {
    r.read(*docker, "docker", "mounts", s.docker_mounts);
    r.read(*docker, "docker", "network", s.docker_network);
    r.read(*docker, "docker", "run_options", s.docker_run_options);
  }
  if (auto* code = r.member(doc, "", "code")) {
    r.read(*code, "code", "src_dir", s.src_dir);
    r.read(*code, "code", "command", s.command);
    r.read(*code, "code", "python_venv", s.python_venv);
    r.read(*code, "code", "python_binary_path", s.python_binary_path);
    r.read(*code, "code", "files", s.files);
  }
  r.read(doc, "", "env", s.env);
  r.read(doc, "", "setting_names", s.setting_names);
  if (auto* data = r.member(doc, "", "data")) {
    r.read(*data, "data", "input_path", s.input_path);
    r.read(*data, "data", "output_path", s.output_path);
  }
}

void read_tasks(json_reader& r, const json& doc, job_spec& s) {
  if (auto* tasks = r.member(doc, "", "tasks")) {
    if (!tasks->is_array()) {
      r.fail("tasks", "must be an array");
    } else {
      for (size_t i = 0; i < tasks->size() && !r.failed(); ++i) {
        auto& t = (*tasks)[i];
        auto path = "tasks[" + std::to_string(i) + "]";
        task_type_spec ts;
        r.read(t, path, "name", ts.name);
        r.read_int(t, path, "instances", ts.instances, 1, INT32_MAX);
        r.read(t, path, "capability", ts.capability);
        r.read(t, path, "command", ts.command);
        r.read(t, path, "tracked", ts.tracked);
        r.read(t, path, "sidecar", ts.sidecar);
        r.read(t, path, "node_label", ts.node_label);
        r.read(t, path, "env", ts.env);
        r.read_int(t, path, "priority", ts.priority, 0, INT32_MAX);
        r.read(t, path, "files", ts.files);
        r.read(t, path, "docker_image", ts.docker_image);
        r.read_indexes(t, path, ts);
        read_task_policy(r, t, path, ts);
        if (!r.failed() && ts.name.empty())
          r.fail(path + ".name", "must not be empty");
        s.tasks.push_back(std::move(ts));
      }
    }
  }
}

void read_tensorboard_cluster(json_reader& r, const json& doc, job_spec& s) {
  if (auto* tb = r.member(doc, "", "tensorboard")) {
    r.read(*tb, "tensorboard", "enabled", s.tensorboard.enabled);
    r.read(*tb, "tensorboard", "log_dir", s.tensorboard.log_dir);
    r.read(*tb, "tensorboard", "on", s.tensorboard.on);
  }
  if (auto* c = r.member(doc, "", "cluster")) {
    r.read(*c, "cluster", "backend", s.cluster.backend);
    r.read(*c, "cluster", "hadoop_conf", s.cluster.hadoop_conf);
    r.read(*c, "cluster", "install_dir", s.cluster.install_dir);
    r.read(*c, "cluster", "staging_dir", s.cluster.staging_dir);
    r.read(*c, "cluster", "shared_cache", s.cluster.shared_cache);
    r.read(*c, "cluster", "jobs_dir", s.cluster.jobs_dir);
    r.read(*c, "cluster", "history_dir", s.cluster.history_dir);
    if (auto* l = r.member(*c, "cluster", "local")) {
      r.read_int(*l, "cluster.local", "memory_mb", s.cluster.local.memory_mb, 0,
                 int64_max);
      r.read_int(*l, "cluster.local", "vcores", s.cluster.local.vcores, 0, INT32_MAX);
      r.read_int(*l, "cluster.local", "gpus", s.cluster.local.gpus, -1, INT32_MAX);
    }
  }
}

void read_am_policy(json_reader& r, const json& doc, job_spec& s) {
  if (auto* am = r.member(doc, "", "am")) {
    r.read(*am, "am", "capability", s.am.capability);
    r.read_int(*am, "am", "max_app_attempts", s.am.max_app_attempts, 1, INT32_MAX);
    r.read_int(*am, "am", "reconnect_timeout_ms", s.am.reconnect_timeout_ms, 1,
               int64_max);
  }
  if (auto* p = r.member(doc, "", "policy")) {
    auto& pol = s.policy;
    r.read_int(*p, "policy", "max_attempts", pol.max_attempts, 1, INT32_MAX);
    r.read_int(*p, "policy", "allocation_timeout_ms", pol.allocation_timeout_ms, 0,
               int64_max);
    r.read_int(*p, "policy", "registration_timeout_ms", pol.registration_timeout_ms, 0,
               int64_max);
    r.read_int(*p, "policy", "heartbeat_interval_ms", pol.heartbeat_interval_ms, 1,
               int64_max);
    r.read_int(*p, "policy", "heartbeat_timeout_ms", pol.heartbeat_timeout_ms, 1,
               int64_max);
    r.read_int(*p, "policy", "stop_grace_ms", pol.stop_grace_ms, 0, int64_max);
    r.read_int(*p, "policy", "tolerated_failures", pol.tolerated_failures, 0, INT32_MAX);
  }
}

} // namespace

expected<job_spec> job_from_json(const std::string& text) {
  auto fail = [](const std::string& what) {
    return make_error(errc::invalid_config, "job spec JSON: " + what);
  };
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return fail(std::string{"not valid JSON: "} + e.what());
  } catch (const std::exception& e) {
    return fail(std::string{"cannot parse: "} + e.what());
  }
  if (!doc.is_object())
    return fail("the document must be an object");
  try {
    json_reader r;
    int version = 0;
    r.read_int(doc, "", "version", version, 0, INT32_MAX);
    if (r.failed())
      return fail(r.error());
    if (doc.find("version") == doc.end())
      return fail("'version' is missing; is this a tony job spec?");
    if (version < 1 || version > job_json_version)
      return fail("version " + std::to_string(version) +
                  " is not supported (this tony "
                  "reads up to " +
                  std::to_string(job_json_version) +
                  "); use the same tony release to submit and run");
    job_spec s;
    read_top(r, doc, s);
    read_tasks(r, doc, s);
    read_tensorboard_cluster(r, doc, s);
    read_am_policy(r, doc, s);
    r.read(doc, "", "job_file", s.job_file);
    if (r.failed())
      return fail(r.error());
    if (s.tasks.empty())
      return fail("'tasks' is missing or empty; a job has at least one task type");
    if (auto problem = check_job_spec(s); !problem.empty())
      return fail(problem);
    return s;
  } catch (const std::exception& e) {
    return fail(std::string{"cannot read: "} + e.what());
  }
}

} // namespace tony
