// The job.toml reader: the top level and [docker], [data], [tensorboard],
// [am], [policy], [cluster], [security] (see toml_reader.hpp).

#include "config/toml_reader.hpp"

#include "base/access_list.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <utility>

namespace tony::config_detail {

namespace fs = std::filesystem;

void job_reader::read_root(const toml::table& root) {
  check_keys(root, "",
             {"name", "framework", "queue", "timeout", "tags", "node_label", "code",
              "env", "data", "tasks", "tensorboard", "docker", "am", "policy", "cluster",
              "security"});
  read_identity(root);
  if (auto label = read_string(root, "node_label"))
    spec_.node_label = read_node_label(*root.get("node_label"), *label);
  if (auto* docker = read_table(root, "docker", "'docker'"))
    read_docker(*docker);
  if (auto* code = read_table(root, "code", "'code'"))
    read_code(*code);
  else if (root.get("code") != nullptr)
    default_command_broken_ = true;
  if (auto* env = read_table(root, "env", "'env'"))
    spec_.env = read_env(*env, "[env]");
  if (auto* data = read_table(root, "data", "'data'"))
    read_data(*data);
  if (auto* tb = read_table(root, "tensorboard", "'tensorboard'")) {
    tensorboard_table_ = tb;
    read_tensorboard(*tb);
  }
  if (auto* am = read_table(root, "am", "'am'"))
    read_am(*am);
  if (auto* policy = read_table(root, "policy", "'policy'"))
    read_policy(*policy);
  if (auto* cluster = read_table(root, "cluster", "'cluster'"))
    read_cluster(*cluster);
  if (auto* security = read_table(root, "security", "'security'"))
    read_security(*security);
  auto* tasks = read_table(root, "tasks", "'tasks'");
  if (tasks != nullptr)
    read_tasks(*tasks);
  else if (root.get("tasks") == nullptr)
    file_error("no task types; add a [tasks.<type>] table, e.g. [tasks.worker] with "
               "instances = 1");
  resolve_code(root.get("code") != nullptr ? root.get("code")->as_table() : nullptr);
  resolve_tensorboard();
  resolve_rendezvous();
  check_job();
}

void job_reader::read_identity(const toml::table& root) {
  if (auto name = read_string(root, "name")) {
    if (name->empty())
      error(*root.get("name"), "'name' must not be empty");
    else if (has_control_chars(*name))
      error(*root.get("name"), "'name' must be printable text, got " + quote_text(*name));
    else
      spec_.name = *name;
  }
  if (spec_.name.empty()) {
    spec_.name = fs::path{file_}.stem().string();
    if (spec_.name.empty() || has_control_chars(spec_.name))
      spec_.name = "job";
  }
  if (auto fw = read_string(root, "framework")) {
    auto& known = known_frameworks();
    if (std::find(known.begin(), known.end(), *fw) == known.end()) {
      std::string msg =
          "unknown framework " + quote_name(*fw) + "; use one of " + join(known, ", ");
      if (auto hint = closest(*fw, known); !hint.empty())
        msg += "; did you mean '" + hint + "'?";
      error(*root.get("framework"), std::move(msg));
    } else {
      spec_.framework = *fw;
    }
  }
  if (auto queue = read_string(root, "queue")) {
    bool bad = queue->empty() ||
               std::any_of(queue->begin(), queue->end(),
                           [](char c) { return c == ' ' || c == '\t'; }) ||
               has_control_chars(*queue);
    if (bad)
      error(*root.get("queue"), "'queue' must be a YARN queue name without spaces, got " +
                                    quote_text(*queue));
    else
      spec_.queue = *queue;
  }
  if (auto timeout = read_duration(root, "timeout", duration_bounds))
    spec_.timeout_ms = *timeout;
  if (auto tags = read_strings(root, "tags")) {
    auto& node = *root.get("tags");
    // YARN's own limits (YarnConfiguration.APPLICATION_MAX_TAGS and
    // APPLICATION_MAX_TAG_LENGTH), checked here rather than at submission.
    bool ok = true;
    if (tags->size() > 10) {
      error(node, "'tags' has " + std::to_string(tags->size()) +
                      " tags; YARN accepts at most 10");
      ok = false;
    }
    for (auto& tag : *tags) {
      bool ascii = std::all_of(tag.begin(), tag.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x20 &&
               static_cast<unsigned char>(c) < 0x7f;
      });
      if (tag.empty() || tag.size() > 100 || !ascii) {
        error(node, "tag " + quote_text(tag) +
                        " must be 1 to 100 printable ASCII characters (a YARN limit)");
        ok = false;
      }
    }
    if (ok)
      spec_.tags = std::move(*tags);
  }
}

void job_reader::read_docker(const toml::table& t) {
  check_keys(t, "[docker]", {"image", "mounts", "network", "run_options"});
  if (auto image = read_string(t, "image"))
    spec_.docker_image = read_docker_image(*t.get("image"), "image", *image);
  if (auto mounts = read_strings(t, "mounts"))
    for (auto& m : *mounts) {
      if (auto why = docker_mount_problem(m); !why.empty())
        error(*t.get("mounts"), "'mounts' entry " + quote_text(m) + " " + why);
      else
        spec_.docker_mounts.push_back(m);
    }
  if (auto network = read_string(t, "network")) {
    bool ok = !network->empty() && network->size() <= 64 &&
              std::all_of(network->begin(), network->end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                       c == '_' || c == '.';
              });
    if (ok)
      spec_.docker_network = *network;
    else
      error(*t.get("network"), "'network' in [docker] is " + quote_text(*network) +
                                   "; name a Docker network: host (the default), "
                                   "bridge, none or one of your own");
  }
  if (auto options = read_strings(t, "run_options"))
    for (auto& o : *options) {
      if (o.empty() || o[0] != '-' || o.find('\n') != std::string::npos)
        error(*t.get("run_options"),
              "'run_options' entry " + quote_text(o) +
                  " is not an option of `docker run`; write one option per entry, "
                  "e.g. \"--shm-size=1g\"");
      else
        spec_.docker_run_options.push_back(o);
    }
}

// "host path:container path[:ro|rw]": both absolute, no ',' (YARN's
// separator of mounts). Empty when fine, else what is wrong.
std::string job_reader::docker_mount_problem(const std::string& m) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    auto end = m.find(':', start);
    parts.push_back(m.substr(start, end - start));
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  bool shape = (parts.size() == 2 || parts.size() == 3) && !parts[0].empty() &&
               parts[0][0] == '/' && !parts[1].empty() && parts[1][0] == '/';
  if (!shape || m.find(',') != std::string::npos || has_control_chars(m))
    return "is not \"/host/path:/container/path\" with an optional \":ro\" or "
           "\":rw\"";
  if (parts.size() == 3 && parts[2] != "ro" && parts[2] != "rw")
    return "has the mode " + quote_text(parts[2]) + "; use ro or rw";
  return {};
}

std::string job_reader::read_docker_image(const toml::node& n, std::string_view key,
                                          const std::string& image) {
  if (is_valid_docker_image(image))
    return image;
  error(n, "'" + std::string{key} + "' " + quote_text(image) +
               " is not a Docker image name; write [registry[:port]/]name[:tag] with a "
               "lower-case name, e.g. \"tensorflow/tensorflow:2.15.0\"");
  return {};
}

std::string job_reader::read_node_label(const toml::node& n, const std::string& label) {
  if (label.empty() || is_valid_node_label(label))
    return label;
  error(n, "'node_label' " + quote_text(label) +
               " is not a YARN node label; use letters, digits, '-' and '_', starting "
               "with a letter or digit");
  return {};
}

void job_reader::read_data(const toml::table& t) {
  check_keys(t, "[data]", {"input_path", "output_path"});
  if (auto in = read_string(t, "input_path"))
    spec_.input_path = *in;
  if (auto out = read_string(t, "output_path"))
    spec_.output_path = *out;
}

void job_reader::read_tensorboard(const toml::table& t) {
  check_keys(t, "[tensorboard]", {"enabled", "log_dir", "on"});
  if (auto on = read_string(t, "on")) {
    static const std::vector<std::string> places{"sidecar", "chief"};
    if (std::find(places.begin(), places.end(), *on) == places.end()) {
      std::string msg = "'on' in [tensorboard] is " + quote_text(*on) +
                        "; use \"sidecar\" (a task of its own) or \"chief\" (the chief "
                        "starts it on TB_PORT)";
      if (auto hint = closest(*on, places); !hint.empty())
        msg += "; did you mean '" + hint + "'?";
      error(*t.get("on"), std::move(msg));
    } else {
      spec_.tensorboard.on = *on;
      spec_.tensorboard.enabled = true; // naming a place asks for it
    }
  }
  if (auto enabled = read_bool(t, "enabled"))
    spec_.tensorboard.enabled = *enabled;
  if (auto dir = read_string(t, "log_dir"))
    spec_.tensorboard.log_dir = *dir;
}

void job_reader::read_am(const toml::table& t) {
  check_keys(t, "[am]", {"memory", "vcores", "max_app_attempts", "reconnect_timeout"});
  if (auto mb = read_memory(t, "memory"))
    spec_.am.capability.memory_mb = *mb;
  if (auto vcores = read_int(t, "vcores", vcores_bounds))
    spec_.am.capability.vcores = static_cast<int32_t>(*vcores);
  if (auto attempts = read_int(t, "max_app_attempts", app_attempts_bounds))
    spec_.am.max_app_attempts = static_cast<int32_t>(*attempts);
  if (auto ms = read_duration(t, "reconnect_timeout", positive_duration_bounds))
    spec_.am.reconnect_timeout_ms = *ms;
}

void job_reader::read_policy(const toml::table& t) {
  check_keys(t, "[policy]",
             {"max_attempts", "allocation_timeout", "registration_timeout",
              "heartbeat_interval", "heartbeat_timeout", "stop_grace",
              "tolerated_failures"});
  auto& p = spec_.policy;
  if (auto v = read_int(t, "max_attempts", job_attempts_bounds))
    p.max_attempts = static_cast<int32_t>(*v);
  if (auto v = read_int(t, "tolerated_failures", tolerated_failures_bounds))
    p.tolerated_failures = static_cast<int32_t>(*v);
  if (auto v = read_duration(t, "allocation_timeout", duration_bounds))
    p.allocation_timeout_ms = *v;
  if (auto v = read_duration(t, "registration_timeout", duration_bounds))
    p.registration_timeout_ms = *v;
  bool interval_ok = true;
  if (auto v = read_duration(t, "heartbeat_interval", positive_duration_bounds))
    p.heartbeat_interval_ms = *v;
  else
    interval_ok = t.get("heartbeat_interval") == nullptr;
  auto timeout = read_duration(t, "heartbeat_timeout", positive_duration_bounds);
  if (timeout)
    p.heartbeat_timeout_ms = *timeout;
  bool timeout_ok = timeout.has_value() || t.get("heartbeat_timeout") == nullptr;
  if (interval_ok && timeout_ok && !heartbeat_timeout_ok(p)) {
    auto* where = t.get("heartbeat_timeout") != nullptr ? t.get("heartbeat_timeout")
                                                        : t.get("heartbeat_interval");
    error(*where, "'heartbeat_timeout' (" + format_duration(p.heartbeat_timeout_ms) +
                      ") must be longer than 'heartbeat_interval' (" +
                      format_duration(p.heartbeat_interval_ms) + ")");
  }
  if (auto v = read_duration(t, "stop_grace", duration_bounds))
    p.stop_grace_ms = *v;
}

void job_reader::read_cluster(const toml::table& t) {
  check_keys(t, "[cluster]",
             {"backend", "hadoop_conf", "install_dir", "staging_dir", "shared_cache",
              "jobs_dir", "history_dir", "local"});
  auto& c = spec_.cluster;
  if (auto backend = read_string(t, "backend")) {
    auto& known = known_backends();
    if (std::find(known.begin(), known.end(), *backend) == known.end()) {
      std::string msg = "unknown backend " + quote_name(*backend) +
                        " in [cluster]; use one of " + join(known, ", ");
      if (auto hint = closest(*backend, known); !hint.empty())
        msg += "; did you mean '" + hint + "'?";
      error(*t.get("backend"), std::move(msg));
    } else {
      c.backend = *backend;
    }
  }
  if (auto conf = read_string(t, "hadoop_conf"); conf && !conf->empty()) {
    auto abs = absolute_path(*conf, base_dir_);
    if (probe_.kind_of(abs) != file_probe::kind::directory)
      error(*t.get("hadoop_conf"), "'hadoop_conf' " + quote_text(*conf) +
                                       " is not a directory (resolved to " + abs + ")");
    else
      c.hadoop_conf = abs;
  }
  if (auto dir = read_string(t, "install_dir"); dir && !dir->empty()) {
    // A path on the nodes, not here: nothing to resolve or check locally.
    if ((*dir)[0] != '/')
      error(*t.get("install_dir"),
            "'install_dir' must be an absolute path on the nodes, got " +
                quote_text(*dir));
    else
      c.install_dir = *dir;
  }
  if (auto dir = read_string(t, "staging_dir"); dir && !dir->empty())
    c.staging_dir = has_uri_scheme(*dir) ? *dir : absolute_path(*dir, base_dir_);
  if (auto dir = read_string(t, "shared_cache"); dir && !dir->empty())
    c.shared_cache = has_uri_scheme(*dir) ? *dir : absolute_path(*dir, base_dir_);
  if (auto dir = read_string(t, "jobs_dir"); dir && !dir->empty())
    c.jobs_dir = absolute_path(*dir, base_dir_);
  if (auto dir = read_string(t, "history_dir"); dir && !dir->empty())
    c.history_dir = has_uri_scheme(*dir) ? *dir : absolute_path(*dir, base_dir_);
  if (auto* local = read_table(t, "local", "'cluster.local'")) {
    check_keys(*local, "[cluster.local]", {"memory", "vcores", "gpus"});
    if (auto mb = read_memory(*local, "memory"))
      c.local.memory_mb = *mb;
    if (auto vcores = read_int(*local, "vcores", pool_vcores_bounds))
      c.local.vcores = static_cast<int32_t>(*vcores);
    if (auto gpus = read_int(*local, "gpus", gpus_bounds))
      c.local.gpus = static_cast<int32_t>(*gpus);
  }
}

void job_reader::read_security(const toml::table& t) {
  check_keys(
      t, "[security]",
      {"principal", "keytab", "file_systems", "ca_file", "view_acl", "modify_acl"});
  auto& s = spec_.security;
  if (auto principal = read_string(t, "principal")) {
    if (!is_kerberos_principal(*principal))
      error(*t.get("principal"),
            "'principal' must be a Kerberos principal such as alice@EXAMPLE.COM or "
            "alice/host@EXAMPLE.COM, got " +
                quote_text(*principal));
    else
      s.principal = *principal;
  }
  if (auto keytab = read_string(t, "keytab")) {
    auto abs = keytab->empty() ? std::string{} : absolute_path(*keytab, base_dir_);
    if (keytab->empty())
      error(*t.get("keytab"), "'keytab' must not be empty; leave it out to use the "
                              "ticket cache (kinit)");
    else if (probe_.kind_of(abs) != file_probe::kind::file)
      error(*t.get("keytab"), "'keytab' " + quote_text(*keytab) +
                                  " is not a file (resolved to " + abs + ")");
    else if (auto err = probe_.read_error(abs); err != 0)
      error(*t.get("keytab"),
            "'keytab' " + abs + " cannot be read: " + std::strerror(err));
    else if (t.get("principal") == nullptr)
      error(*t.get("keytab"), "'keytab' needs 'principal' in [security]: the principal "
                              "whose keys the keytab holds (klist -kt " +
                                  abs + " lists them)");
    else
      s.keytab = abs;
  }
  if (auto ca = read_string(t, "ca_file")) {
    auto abs = ca->empty() ? std::string{} : absolute_path(*ca, base_dir_);
    if (ca->empty())
      error(*t.get("ca_file"), "'ca_file' must not be empty; leave it out to trust the "
                               "system's CA bundle");
    else if (probe_.kind_of(abs) != file_probe::kind::file)
      error(*t.get("ca_file"),
            "'ca_file' " + quote_text(*ca) + " is not a file (resolved to " + abs + ")");
    else if (auto err = probe_.read_error(abs); err != 0)
      error(*t.get("ca_file"),
            "'ca_file' " + abs + " cannot be read: " + std::strerror(err));
    else
      s.ca_file = abs;
  }
  for (auto [key, field] :
       {std::pair{"view_acl", &s.view_acl}, std::pair{"modify_acl", &s.modify_acl}}) {
    auto acl = read_string(t, key);
    if (!acl)
      continue;
    if (auto why = base::invalid_acl(*acl))
      error(*t.get(key), "'" + std::string{key} + "' is not a Hadoop ACL: " + *why);
    else
      *field = *acl;
  }
  if (auto fss = read_strings(t, "file_systems")) {
    auto& node = *t.get("file_systems");
    for (auto& uri : *fss) {
      auto why = file_system_problem(uri);
      if (!why.empty())
        error(node, "'file_systems' entry " + quote_text(uri) + " " + why);
      else if (std::find(s.file_systems.begin(), s.file_systems.end(), uri) !=
               s.file_systems.end())
        error(node, "'file_systems' lists " + quote_text(uri) + " twice");
      else
        s.file_systems.push_back(uri);
    }
  }
}

} // namespace tony::config_detail
