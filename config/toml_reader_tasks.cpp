// The job.toml reader: [tasks.<type>] and the rules over the whole job (see
// toml_reader.hpp).

#include "config/toml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <csignal>

#include "config/task_env.hpp"

namespace tony::config_detail {

namespace fs = std::filesystem;

void job_reader::read_tasks(const toml::table& tasks) {
  if (tasks.empty()) {
    error(tasks, "no task types; add a [tasks.<type>] table, e.g. [tasks.worker] with "
                 "instances = 1");
    return;
  }
  for (auto&& [k, v] : tasks) {
    std::string name{k.str()};
    std::string where = "[tasks." + name + "]";
    if (!is_valid_task_type_name(name)) {
      error(k.source(), "invalid task type name " + quote_name(name) + " in [tasks." +
                            name +
                            "]; use lower-case letters, digits, '_' and '-', starting "
                            "with a letter (at most 64)");
      continue;
    }
    auto* t = v.as_table();
    if (t == nullptr) {
      error(v, "'tasks." + name + "' must be a table, got " + type_name(v.type()) +
                   "; write [tasks." + name + "] with instances = ...");
      continue;
    }
    entries_.push_back(read_task(name, *t, where));
  }
}

job_reader::task_entry job_reader::read_task(const std::string& name,
                                             const toml::table& t,
                                             const std::string& where) {
  // clang-format off
  check_keys(t, where,
             {"instances", "memory", "vcores", "gpus", "command", "tracked", "sidecar",
              "node_label", "placement", "max_per_node", "env", "files", "archives",
              "docker_image", "index", "restart", "max_restarts", "restart_backoff",
              "tolerated_failures", "elastic", "spec_signal", "execution_timeout"});
  // clang-format on
  task_entry e;
  e.table = &t;
  auto& s = e.spec;
  s.name = name;
  if (auto n = read_int(t, "instances", instances_bounds))
    s.instances = static_cast<int32_t>(*n);
  if (auto mb = read_memory(t, "memory"))
    s.capability.memory_mb = *mb;
  if (auto vcores = read_int(t, "vcores", vcores_bounds))
    s.capability.vcores = static_cast<int32_t>(*vcores);
  if (auto gpus = read_int(t, "gpus", gpus_bounds))
    s.capability.gpus = static_cast<int32_t>(*gpus);
  if (auto cmd = read_string(t, "command")) {
    if (is_blank(*cmd)) {
      error(*t.get("command"), "'command' in " + where + " must not be empty");
      e.has_command = true; // reported; don't also report it missing
    } else {
      s.command = *cmd;
      e.has_command = true;
    }
  }
  e.tracked = read_bool(t, "tracked");
  e.sidecar = read_bool(t, "sidecar");
  if (auto label = read_string(t, "node_label"))
    s.node_label = read_node_label(*t.get("node_label"), *label);
  read_task_placement(t, where, s);
  if (auto* env = read_table(t, "env", "'env' in " + where))
    s.env = read_env(*env, "[tasks." + name + ".env]");
  s.files = read_shipped(t, where);
  if (auto image = read_string(t, "docker_image"))
    s.docker_image = read_docker_image(*t.get("docker_image"), "docker_image", *image);
  e.docker_image_given = t.get("docker_image") != nullptr;
  if (auto* index = read_table(t, "index", "'index' in " + where))
    read_task_indexes(*index, s, where);
  read_task_policy(t, where, e);
  return e;
}

// placement ("spread" or "pack") and max_per_node.
void job_reader::read_task_placement(const toml::table& t, const std::string& where,
                                     task_type_spec& s) {
  if (auto p = read_string(t, "placement")) {
    if (*p == "pack" || *p == "spread") {
      s.pack = *p == "pack";
    } else {
      static const std::vector<std::string> names{"spread", "pack"};
      auto hint = closest(*p, names);
      error(*t.get("placement"),
            "'placement' in " + where +
                " must be \"spread\" (each node its share, the "
                "default) or \"pack\", got " +
                quote_text(*p) +
                (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
    }
  }
  if (auto n = read_int(t, "max_per_node", instances_bounds))
    s.max_per_node = static_cast<int32_t>(*n);
}

// [tasks.<type>.index.<i>]: the capability of single tasks, each key
// defaulting to the type's own.
void job_reader::read_task_indexes(const toml::table& t, task_type_spec& s,
                                   const std::string& where) {
  for (auto&& [k, v] : t) {
    std::string key{k.str()};
    auto place = "[tasks." + s.name + ".index." + key + "]";
    int32_t index = -1;
    auto res = std::from_chars(key.data(), key.data() + key.size(), index);
    if (res.ec != std::errc{} || res.ptr != key.data() + key.size() || index < 0 ||
        index >= s.instances) {
      error(k.source(), "'index' keys in " + where + " are task indexes from 0 to " +
                            std::to_string(s.instances - 1) + ", got " + quote_name(key));
      continue;
    }
    auto* sub = v.as_table();
    if (sub == nullptr) {
      error(v, place + " must be a table with memory, vcores or gpus, got " +
                   type_name(v.type()));
      continue;
    }
    check_keys(*sub, place, {"memory", "vcores", "gpus"});
    resource r = s.capability;
    if (auto mb = read_memory(*sub, "memory"))
      r.memory_mb = *mb;
    if (auto vcores = read_int(*sub, "vcores", vcores_bounds))
      r.vcores = static_cast<int32_t>(*vcores);
    if (auto gpus = read_int(*sub, "gpus", gpus_bounds))
      r.gpus = static_cast<int32_t>(*gpus);
    if (!(r == s.capability))
      s.index_capability[index] = r;
  }
}

// restart, max_restarts, restart_backoff, tolerated_failures, elastic,
// spec_signal, execution_timeout: what happens when a task of the type
// fails or runs too long (resolved with the whole job in resolve_policy).
void job_reader::read_task_policy(const toml::table& t, const std::string& where,
                                  task_entry& e) {
  auto& s = e.spec;
  if (auto r = read_string(t, "restart")) {
    if (*r == "never")
      e.restart = restart_policy::never;
    else if (*r == "on-failure")
      e.restart = restart_policy::on_failure;
    else
      error(*t.get("restart"), "'restart' in " + where +
                                   " must be \"never\" or \"on-failure\", got " +
                                   quote_text(*r));
  }
  if (auto n = read_int(t, "max_restarts", max_restarts_bounds))
    e.max_restarts = static_cast<int32_t>(*n);
  if (auto ms = read_duration(t, "restart_backoff", duration_bounds))
    s.restart_backoff_ms = *ms;
  if (auto ms = read_duration(t, "execution_timeout", duration_bounds))
    s.execution_timeout_ms = *ms;
  if (auto n = read_int(t, "tolerated_failures", tolerated_failures_bounds))
    s.tolerated_failures = static_cast<int32_t>(*n);
  if (auto* el = read_table(t, "elastic", "'elastic' in " + where)) {
    check_keys(*el, where + " elastic", {"min", "max"});
    auto lo = read_int(*el, "min", instances_bounds);
    auto hi = read_int(*el, "max", instances_bounds);
    if (el->get("min") == nullptr || el->get("max") == nullptr)
      error(*t.get("elastic"), "'elastic' in " + where +
                                   " needs both 'min' and 'max', e.g. elastic = "
                                   "{ min = 2, max = 4 }");
    else if (lo && hi && *lo > *hi)
      error(*t.get("elastic"), "'elastic' in " + where + ": 'min' (" +
                                   std::to_string(*lo) + ") is larger than 'max' (" +
                                   std::to_string(*hi) + ")");
    else if (lo && hi) {
      s.elastic_min = static_cast<int32_t>(*lo);
      s.elastic_max = static_cast<int32_t>(*hi);
      e.elastic = t.get("elastic");
    }
  }
  if (auto sig = read_string(t, "spec_signal")) {
    auto number = signal_number(*sig);
    if (number == 0)
      error(*t.get("spec_signal"), "'spec_signal' in " + where + " must be one of " +
                                       "HUP, USR1, USR2, got " + quote_text(*sig));
    s.spec_signal = number;
  }
}

int32_t job_reader::signal_number(const std::string& name) {
  auto bare = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  if (bare == "HUP")
    return SIGHUP;
  if (bare == "USR1")
    return SIGUSR1;
  if (bare == "USR2")
    return SIGUSR2;
  return 0;
}

// [tensorboard] enabled adds a sidecar task type running TensorBoard on its
// reserved port, unless the job declares [tasks.tensorboard] itself.
void job_reader::resolve_tensorboard() {
  bool declared = std::any_of(entries_.begin(), entries_.end(),
                              [](auto& e) { return e.spec.name == "tensorboard"; });
  if (spec_.tensorboard.on_chief()) {
    resolve_chief_tensorboard(declared);
    return;
  }
  if (declared) {
    spec_.tensorboard.enabled = true;
    return;
  }
  if (!spec_.tensorboard.enabled)
    return;
  auto log_dir = spec_.tensorboard.log_dir;
  if (log_dir.empty())
    log_dir = spec_.output_path;
  if (log_dir.empty()) {
    if (tensorboard_table_ != nullptr)
      error(*tensorboard_table_, "[tensorboard] enabled needs 'log_dir' (or [data] "
                                 "output_path) to know what to show");
    return;
  }
  spec_.tensorboard.log_dir = log_dir;
  task_entry e;
  e.spec.name = "tensorboard";
  e.spec.instances = 1;
  e.spec.capability = resource{2048, 1, 0};
  // TensorBoard behind the AM's token (config/task_env.hpp).
  e.spec.command = "python3 \"$TONY_TENSORBOARD_GUARD\" --logdir " +
                   base::shell_quote(log_dir) +
                   " --host 0.0.0.0 --port \"$TONY_TASK_PORT\"";
  e.has_command = true;
  entries_.push_back(std::move(e));
}

// [tensorboard] on = "chief": no task of its own; the chief's executor
// reserves TB_PORT and the chief's command starts TensorBoard there.
void job_reader::resolve_chief_tensorboard(bool declared) {
  auto where = [this](std::string msg) {
    if (tensorboard_table_ != nullptr)
      error(*tensorboard_table_, std::move(msg));
    else
      file_error(std::move(msg));
  };
  if (declared) {
    where("[tensorboard] on = \"chief\" and a [tasks.tensorboard] type both ask for "
          "TensorBoard; keep one");
    return;
  }
  std::vector<std::string> types;
  for (auto& e : entries_)
    types.push_back(e.spec.name);
  if (!types.empty() && !world_chief(types))
    where("[tensorboard] on = \"chief\" needs a chief, but no task type trains (a "
          "chief, master or worker type); use on = \"sidecar\"");
  if (spec_.tensorboard.log_dir.empty())
    spec_.tensorboard.log_dir = spec_.output_path;
}

// An elastic job's nodes meet at a c10d store (torchrun's c10d rendezvous
// backend) served by a task of its own, so that any node may go: the
// `rendezvous` type, unless the job declares [tasks.rendezvous] itself.
void job_reader::resolve_rendezvous() {
  auto elastic = std::any_of(entries_.begin(), entries_.end(),
                             [](auto& e) { return e.elastic != nullptr; });
  auto declared = std::any_of(entries_.begin(), entries_.end(),
                              [](auto& e) { return e.spec.name == rendezvous_type; });
  if (!elastic || declared)
    return;
  task_entry e;
  e.spec.name = rendezvous_type;
  e.spec.instances = 1;
  e.spec.capability = resource{512, 1, 0};
  e.spec.command =
      "exec python3 -c 'import datetime, os, time\n"
      "from torch.distributed import TCPStore\n"
      "port = int(os.environ[\"TONY_TASK_PORT\"])\n"
      "store = TCPStore(\"0.0.0.0\", port, is_master=True, wait_for_workers=False,\n"
      "                 timeout=datetime.timedelta(days=1))\n"
      "print(\"tony: c10d rendezvous store on port\", port, flush=True)\n"
      "while True:\n"
      "    time.sleep(3600)'";
  e.has_command = true;
  entries_.push_back(std::move(e));
}

// restart, max_restarts and elastic resolved for one type: defaults, and
// what cannot work.
void job_reader::resolve_policy(task_entry& e, const std::string& where) {
  auto& s = e.spec;
  auto& fw = spec_.framework;
  bool elastic = e.elastic != nullptr;
  if (elastic) {
    if (fw != "pytorch")
      error(*e.elastic, "'elastic' in " + where +
                            " needs framework = \"pytorch\" (its nodes meet in "
                            "torchrun's rendezvous); this job's framework is '" +
                            fw + "'");
    auto* n = e.table != nullptr ? e.table->get("instances") : nullptr;
    if (n == nullptr)
      s.instances = s.elastic_max;
    else if (s.instances < s.elastic_min || s.instances > s.elastic_max)
      error(*n, "'instances' in " + where + " must be within its elastic min and max (" +
                    std::to_string(s.elastic_min) + " to " +
                    std::to_string(s.elastic_max) + "), got " +
                    std::to_string(s.instances));
  }
  s.restart =
      e.restart.value_or(elastic ? restart_policy::on_failure : restart_policy::never);
  if (s.restart == restart_policy::never) {
    if (e.max_restarts && *e.max_restarts > 0 && e.table != nullptr)
      error(*e.table->get("max_restarts"),
            "'max_restarts' in " + where + " needs restart = \"on-failure\"");
    s.max_restarts = 0;
    return;
  }
  s.max_restarts = e.max_restarts.value_or(3);
  bool fixed_world =
      !elastic && (fw == "pytorch" || fw == "horovod") && is_world_type(s.name);
  if (fixed_world && e.table != nullptr && e.table->get("restart") != nullptr)
    error(*e.table->get("restart"),
          where + " cannot restart one task of a fixed " + fw +
              " world: the other ranks' process group would hang without it; "
              "restart every task with [policy] max_attempts, or make the type "
              "elastic = { min = ..., max = ... }");
}

// Rules over the whole job: the chief is never restarted, and an elastic
// job trains one elastic type.
void job_reader::check_lifecycle() {
  std::vector<std::string> names;
  for (auto& e : entries_)
    names.push_back(e.spec.name);
  auto chief = world_chief(names);
  const task_entry* elastic = nullptr;
  for (auto& e : entries_) {
    auto where = "[tasks." + e.spec.name + "]";
    auto* restart = e.table != nullptr ? e.table->get("restart") : nullptr;
    if (chief && e.spec.name == chief->type && e.spec.instances == 1 &&
        e.elastic == nullptr && restart != nullptr &&
        e.spec.restart == restart_policy::on_failure)
      error(*restart, where + " is the job's chief, which is never restarted: its "
                              "failure fails the job (or starts a new attempt with "
                              "[policy] max_attempts)");
    if (e.elastic == nullptr)
      continue;
    if (elastic != nullptr)
      error(*e.elastic, "only one task type can be elastic; [tasks." +
                            elastic->spec.name + "] is already");
    elastic = &e;
  }
  if (elastic == nullptr)
    return;
  for (auto& e : entries_)
    if (e.elastic == nullptr && is_world_type(e.spec.name) && e.table != nullptr)
      error(*e.table, "[tasks." + e.spec.name +
                          "] would train beside the elastic world of [tasks." +
                          elastic->spec.name +
                          "], not in it (torchrun's rendezvous is the world); train in "
                          "one type, or make this one a ps or evaluator");
}

int job_reader::order_rank(const std::string& name) {
  if (name == "chief")
    return 0;
  if (name == "master")
    return 1;
  if (name == "worker")
    return 2;
  return 3;
}

void job_reader::check_job() {
  std::stable_sort(entries_.begin(), entries_.end(), [](auto& x, auto& y) {
    auto rx = order_rank(x.spec.name);
    auto ry = order_rank(y.spec.name);
    return rx != ry ? rx < ry : x.spec.name < y.spec.name;
  });
  bool any_tracked = false;
  bool any_world = false;
  // "a-b" and "a_b" would both export DTF_A_B_HOSTS (doc/task-environment.md).
  std::map<std::string, std::string> dtf_names;
  for (auto& e : entries_) {
    std::string dtf = e.spec.name;
    for (auto& c : dtf)
      c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    auto [it, added] = dtf_names.emplace(dtf, e.spec.name);
    if (!added && e.table != nullptr)
      error(*e.table, "task types '" + it->second + "' and '" + e.spec.name +
                          "' would both export DTF_" + dtf + "_HOSTS; rename one");
  }
  for (auto& e : entries_) {
    auto& s = e.spec;
    std::string where = "[tasks." + s.name + "]";
    bool untracked_by_default =
        s.name == "ps" || s.name == "tensorboard" || s.name == rendezvous_type;
    // Explicit settings beat defaults: `tracked = true` alone makes a
    // tensorboard task an ordinary one. A sidecar's failure is ignored, so
    // by default the job does not wait for it either.
    bool sidecar =
        e.sidecar.value_or(s.name == "tensorboard" && !e.tracked.value_or(false));
    bool tracked = e.tracked.value_or(!untracked_by_default && !sidecar);
    if (sidecar && tracked && e.table != nullptr) {
      error(*e.table->get("sidecar"),
            where + " cannot be both a sidecar and tracked: the job would wait for a "
                    "task whose failure it ignores; remove one of them");
    }
    s.sidecar = sidecar;
    s.tracked = tracked;
    resolve_policy(e, where);
    any_tracked = any_tracked || tracked;
    any_world = any_world || is_world_type(s.name);
    if (!e.has_command) {
      if (spec_.command.empty()) {
        // A broken [code] command was reported already.
        if (e.table != nullptr && !default_command_broken_)
          error(*e.table, where + " has no command; set 'command' there or a default "
                                  "'command' in [code]");
      } else {
        s.command = spec_.command;
      }
    }
    if (spec_.framework == "tensorflow" && s.name == "chief" && s.instances > 1 &&
        e.table != nullptr) {
      // Without 'instances', more than one comes from an elastic range,
      // which TensorFlow refuses already.
      if (auto* n = e.table->get("instances"))
        error(*n, "TensorFlow allows one chief; 'instances' in [tasks.chief] must be 1, "
                  "got " +
                      std::to_string(s.instances));
    }
  }
  check_lifecycle();
  if (!entries_.empty() && !any_tracked)
    file_error("no task type is tracked, so the job would succeed at once; set "
               "'tracked = true' on at least one [tasks.<type>]");
  if (!entries_.empty() && !any_world &&
      (spec_.framework == "pytorch" || spec_.framework == "horovod"))
    file_error("framework '" + spec_.framework +
               "' needs a task type that trains: chief, master, worker, or any type "
               "other than ps, tensorboard and evaluator");
  for (auto& e : entries_) {
    if (!e.docker_image_given)
      e.spec.docker_image = spec_.docker_image;
    check_file_names(e);
  }
  assign_priorities();
}

// Every task type's files, its own and the job's, appear side by side in
// its working directory: their names must differ.
void job_reader::check_file_names(const task_entry& e) {
  std::map<std::string, std::string> seen;
  auto where_of = [&](bool own) {
    return own ? "[tasks." + e.spec.name + "]" : std::string{"[code]"};
  };
  for (bool own : {false, true}) {
    for (auto& f : own ? e.spec.files : spec_.files) {
      auto [it, added] = seen.emplace(f.name, where_of(own));
      if (added)
        continue;
      if (own || &e == &entries_.front())
        file_error("two shipped files are named " + quote_text(f.name) + " (in " +
                   it->second + " and " + where_of(own) +
                   "); give one another name with { source = ..., name = ... }");
    }
  }
}

// Each type asks with its own priority (its position + 1); the tasks of a
// type whose [tasks.<type>.index.<i>] capability differs ask with further
// priorities after every type's, one per distinct capability, because
// YARN hands out one capability per priority.
void job_reader::assign_priorities() {
  int32_t priority = 1;
  for (auto& e : entries_)
    e.spec.priority = priority++;
  for (auto& e : entries_) {
    std::vector<std::pair<resource, int32_t>> groups;
    for (auto& [index, cap] : e.spec.index_capability) {
      // A structured binding cannot be captured before C++20 (clang).
      const resource& c = cap;
      auto same = std::find_if(groups.begin(), groups.end(),
                               [&](auto& g) { return g.first == c; });
      if (same == groups.end())
        same = groups.insert(groups.end(), {cap, priority++});
      e.spec.index_priority[index] = same->second;
    }
  }
  for (auto& e : entries_)
    spec_.tasks.push_back(std::move(e.spec));
}

} // namespace tony::config_detail
