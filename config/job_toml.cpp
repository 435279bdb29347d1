#include "config/job_toml.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "config/units.hpp"

namespace tony {

namespace {

namespace fs = std::filesystem;

// Writes sections in the order of doc/job-toml.md; a section is written only
// when it has a line.
class toml_writer {
public:
  explicit toml_writer(std::ostringstream& out)
      : out_(out) {
    // nop
  }

  void section(std::string name) { pending_ = std::move(name); }

  void line(const std::string& key, const std::string& value) {
    if (!pending_.empty()) {
      out_ << "\n[" << pending_ << "]\n";
      pending_.clear();
    }
    out_ << key << " = " << value << "\n";
  }

  void string(const std::string& key, const std::string& value) {
    line(key, toml_quote(value));
  }

  void string_if(const std::string& key, const std::string& value) {
    if (!value.empty())
      string(key, value);
  }

  void integer(const std::string& key, int64_t value) {
    line(key, std::to_string(value));
  }

  void boolean(const std::string& key, bool value) {
    line(key, value ? "true" : "false");
  }

  void duration_if(const std::string& key, int64_t ms, int64_t default_ms) {
    if (ms != default_ms)
      string(key, format_duration(ms));
  }

  void strings(const std::string& key, const std::vector<std::string>& values) {
    std::string out = "[";
    for (auto& v : values)
      out += (out.size() > 1 ? ", " : "") + toml_quote(v);
    line(key, out + "]");
  }

  void env(const std::string& name, const std::map<std::string, std::string>& vars) {
    section(name);
    for (auto& [k, v] : vars)
      string(k, v);
  }

  // `files` and `archives`: a bare path where the name is the path's own.
  void files(const std::vector<shipped_file>& files) {
    for (bool archive : {false, true}) {
      std::string out;
      for (auto& f : files) {
        if (f.archive != archive)
          continue;
        out += out.empty() ? "[\n" : "";
        bool plain = f.source.find("://") == std::string::npos &&
                     fs::path{f.source}.filename().string() == f.name;
        out += plain ? "  " + toml_quote(f.source) + ",\n"
                     : "  { source = " + toml_quote(f.source) +
                           ", name = " + toml_quote(f.name) + " },\n";
      }
      if (!out.empty())
        line(archive ? "archives" : "files", out + "]");
    }
  }

private:
  std::ostringstream& out_;
  std::string pending_;
};

void write_top(toml_writer& w, const job_spec& job) {
  w.string("name", job.name);
  w.string("framework", job.framework);
  if (job.queue != "default")
    w.string("queue", job.queue);
  w.duration_if("timeout", job.timeout_ms, 0);
  if (!job.tags.empty())
    w.strings("tags", job.tags);
  w.string_if("node_label", job.node_label);
}

void write_code(toml_writer& w, const job_spec& job) {
  w.section("code");
  if (job.src_dir.empty())
    w.boolean("src_dir", false);
  else
    w.string("src_dir", job.src_dir);
  w.string_if("command", job.command);
  w.string_if("python_venv", job.python_venv);
  w.string_if("python_binary_path", job.python_binary_path);
  w.files(job.files);
}

void write_task(toml_writer& w, const job_spec& job, const task_type_spec& t) {
  auto table = "tasks." + t.name;
  w.section(table);
  w.integer("instances", t.instances);
  w.string("memory", format_memory(t.capability.memory_mb));
  w.integer("vcores", t.capability.vcores);
  if (t.capability.gpus != 0)
    w.integer("gpus", t.capability.gpus);
  if (t.command != job.command)
    w.string("command", t.command);
  // The loader's defaults for a type of this name with neither key given.
  bool default_sidecar = t.name == "tensorboard";
  bool default_tracked = t.name != "ps" && !default_sidecar;
  if (t.sidecar != default_sidecar || t.tracked != default_tracked) {
    w.boolean("tracked", t.tracked);
    w.boolean("sidecar", t.sidecar);
  }
  w.string_if("node_label", t.node_label);
  if (t.pack)
    w.string("placement", "pack");
  if (t.max_per_node > 0)
    w.integer("max_per_node", t.max_per_node);
  w.duration_if("execution_timeout", t.execution_timeout_ms, 0);
  if (t.docker_image != job.docker_image)
    w.string("docker_image", t.docker_image);
  w.files(t.files);
  if (!t.env.empty())
    w.env(table + ".env", t.env);
  for (auto& [index, cap] : t.index_capability) {
    w.section(table + ".index." + std::to_string(index));
    w.string("memory", format_memory(cap.memory_mb));
    w.integer("vcores", cap.vcores);
    w.integer("gpus", cap.gpus);
  }
}

void write_am_and_policy(toml_writer& w, const job_spec& job) {
  w.section("am");
  job_spec defaults;
  auto& am = job.am.capability;
  if (am.memory_mb != defaults.am.capability.memory_mb)
    w.string("memory", format_memory(am.memory_mb));
  if (am.vcores != defaults.am.capability.vcores)
    w.integer("vcores", am.vcores);
  if (job.am.max_app_attempts != defaults.am.max_app_attempts)
    w.integer("max_app_attempts", job.am.max_app_attempts);
  w.duration_if("reconnect_timeout", job.am.reconnect_timeout_ms,
                defaults.am.reconnect_timeout_ms);
  w.section("policy");
  auto& p = job.policy;
  auto& d = defaults.policy;
  if (p.max_attempts != d.max_attempts)
    w.integer("max_attempts", p.max_attempts);
  w.duration_if("allocation_timeout", p.allocation_timeout_ms, d.allocation_timeout_ms);
  w.duration_if("registration_timeout", p.registration_timeout_ms,
                d.registration_timeout_ms);
  w.duration_if("heartbeat_interval", p.heartbeat_interval_ms, d.heartbeat_interval_ms);
  w.duration_if("heartbeat_timeout", p.heartbeat_timeout_ms, d.heartbeat_timeout_ms);
  w.duration_if("stop_grace", p.stop_grace_ms, d.stop_grace_ms);
  if (p.tolerated_failures != 0)
    w.integer("tolerated_failures", p.tolerated_failures);
}

void write_cluster(toml_writer& w, const job_spec& job) {
  auto& c = job.cluster;
  w.section("cluster");
  if (c.backend != "local")
    w.string("backend", c.backend);
  w.string_if("hadoop_conf", c.hadoop_conf);
  w.string_if("install_dir", c.install_dir);
  w.string_if("staging_dir", c.staging_dir);
  w.string_if("shared_cache", c.shared_cache);
  std::string default_jobs;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    default_jobs = (fs::path{home} / ".tony" / "jobs").lexically_normal().string();
  if (c.jobs_dir != default_jobs)
    w.string_if("jobs_dir", c.jobs_dir);
  w.string_if("history_dir", c.history_dir);
  w.section("cluster.local");
  if (c.local.memory_mb != 0)
    w.string("memory", format_memory(c.local.memory_mb));
  if (c.local.vcores != 0)
    w.integer("vcores", c.local.vcores);
  if (c.local.gpus >= 0)
    w.integer("gpus", c.local.gpus);
}

} // namespace

std::string toml_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (u < 0x20 || u == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", u);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  out += '"';
  return out;
}

std::string to_toml(const job_spec& job, const std::vector<std::string>& comments) {
  std::ostringstream out;
  for (auto& c : comments) {
    std::istringstream lines{c};
    for (std::string l; std::getline(lines, l);)
      out << "# " << l << "\n";
  }
  if (!comments.empty())
    out << "\n";
  toml_writer w{out};
  write_top(w, job);
  write_code(w, job);
  if (!job.env.empty())
    w.env("env", job.env);
  w.section("data");
  w.string_if("input_path", job.input_path);
  w.string_if("output_path", job.output_path);
  for (auto& t : job.tasks)
    write_task(w, job, t);
  w.section("tensorboard");
  if (job.tensorboard.on_chief())
    w.string("on", "chief");
  else if (job.tensorboard.enabled)
    w.boolean("enabled", true);
  w.string_if("log_dir", job.tensorboard.log_dir);
  w.section("docker");
  w.string_if("image", job.docker_image);
  if (!job.docker_mounts.empty())
    w.strings("mounts", job.docker_mounts);
  if (job.docker_network != "host")
    w.string("network", job.docker_network);
  if (!job.docker_run_options.empty())
    w.strings("run_options", job.docker_run_options);
  write_am_and_policy(w, job);
  write_cluster(w, job);
  return out.str();
}

} // namespace tony
