#include "runtime/launch_context.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "base/text.hpp"
#include "config/task_env.hpp"
#include "messages/error.hpp"

namespace tony {

namespace {

constexpr const char* v_app_id = "TONY_APP_ID";
constexpr const char* v_am_address = "TONY_AM_ADDRESS";
constexpr const char* v_secret = "TONY_JOB_SECRET";
constexpr const char* v_task_type = "TONY_TASK_TYPE";
constexpr const char* v_task_index = "TONY_TASK_INDEX";
constexpr const char* v_attempt = "TONY_ATTEMPT";
constexpr const char* v_restart = "TONY_RESTART";
constexpr const char* v_framework = "TONY_FRAMEWORK";
constexpr const char* v_command = "TONY_TASK_COMMAND";
constexpr const char* v_stop_grace = "TONY_STOP_GRACE_MS";
constexpr const char* v_spec_signal = "TONY_SPEC_SIGNAL";
constexpr const char* v_elastic = "TONY_ELASTIC";
constexpr const char* v_python_binary_path = "TONY_PYTHON_BINARY_PATH";
constexpr const char* v_shipped_files = "TONY_SHIPPED_FILES";
constexpr const char* v_horovod = "TONY_HOROVOD_RENDEZVOUS";
constexpr const char* v_tensorboard = "TONY_TENSORBOARD";
constexpr const char* v_docker_image = "TONY_DOCKER_IMAGE";
constexpr const char* v_docker_mounts = "TONY_DOCKER_MOUNTS";
constexpr const char* v_docker_network = "TONY_DOCKER_NETWORK";
constexpr const char* v_docker_options = "TONY_DOCKER_RUN_OPTIONS";
constexpr const char* v_docker_gpus = "TONY_DOCKER_GPUS";
constexpr const char* v_reconnect = "TONY_AM_RECONNECT";
constexpr const char* v_restart_webhdfs = "TONY_AM_WEBHDFS";

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    auto end = text.find(sep, start);
    if (end == std::string::npos)
      end = text.size();
    if (end > start)
      out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// A whole decimal number in [lo, hi], or nothing.
std::optional<int64_t> number(const std::string& text, int64_t lo, int64_t hi) {
  if (text.empty() || text.size() > 18)
    return std::nullopt;
  int64_t x = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    x = x * 10 + (c - '0');
  }
  if (x < lo || x > hi)
    return std::nullopt;
  return x;
}

// Reads the contract's variables one by one; the first problem names its
// variable and is the answer.
struct contract_reader {
  const std::map<std::string, std::string>& env;
  std::string problem;

  const std::string* get(const char* name, bool required) {
    auto i = env.find(name);
    if (i != env.end())
      return &i->second;
    if (required && problem.empty())
      problem = std::string{"the container environment lacks "} + name;
    return nullptr;
  }

  template <class Int>
  void read(const char* name, Int& out, int64_t lo, int64_t hi, bool required) {
    auto text = get(name, required);
    if (text == nullptr)
      return;
    if (auto x = number(*text, lo, hi))
      out = static_cast<Int>(*x);
    else if (problem.empty())
      problem = std::string{name} + " is not a number from " + std::to_string(lo) +
                " to " + std::to_string(hi) + ": '" + *text + "'";
  }
};

} // namespace

std::map<std::string, std::string> executor_contract::to_env() const {
  std::map<std::string, std::string> env;
  env[v_app_id] = app_id;
  env[v_am_address] = am_host + ":" + std::to_string(am_port);
  if (!secret.empty()) // YARN hands it over in the container's tokens instead
    env[v_secret] = secret;
  env[v_task_type] = task.type;
  env[v_task_index] = std::to_string(task.index);
  env[v_attempt] = std::to_string(attempt);
  env[v_restart] = std::to_string(restart);
  env[v_framework] = framework;
  env[v_command] = command;
  env[v_stop_grace] = std::to_string(stop_grace_ms);
  if (spec_signal > 0)
    env[v_spec_signal] = std::to_string(spec_signal);
  if (elastic_max > 0)
    env[v_elastic] = std::to_string(elastic_min) + ":" + std::to_string(elastic_max) +
                     ":" + std::to_string(elastic_restarts);
  if (!python_binary_path.empty())
    env[v_python_binary_path] = python_binary_path;
  std::string shipped;
  for (auto& name : shipped_files)
    shipped += (shipped.empty() ? "" : "/") + name;
  if (!shipped.empty())
    env[v_shipped_files] = shipped;
  if (!horovod_rendezvous.empty())
    env[v_horovod] = horovod_rendezvous;
  if (tensorboard)
    env[v_tensorboard] = "reserve";
  for (auto& [k, v] : docker.to_env())
    env[k] = v;
  if (reconnect_ms > 0 && !restart_dir.empty()) {
    env[v_reconnect] = std::to_string(reconnect_ms) + " " + restart_dir;
    if (!restart_webhdfs.empty())
      env[v_restart_webhdfs] = restart_webhdfs;
  }
  return env;
}

namespace {

// The task's image, when it runs in one: [docker]'s part of the contract.
void read_docker(contract_reader& r, docker_contract& d) {
  auto image = r.get(v_docker_image, false);
  if (!image)
    return;
  d.image = *image;
  if (auto network = r.get(v_docker_network, false))
    d.network = *network;
  if (auto mounts = r.get(v_docker_mounts, false))
    d.mounts = split(*mounts, ',');
  if (auto options = r.get(v_docker_options, false))
    d.run_options = split(*options, '\n');
  if (auto gpus = r.get(v_docker_gpus, false))
    d.gpus = *gpus == "1";
}

} // namespace

expected<executor_contract>
executor_contract::from_env(const std::map<std::string, std::string>& env) {
  contract_reader r{env, {}};
  executor_contract c;
  auto fail = [](const std::string& what) {
    return make_error(errc::invalid_config,
                      what + "; tony-executor is started by tony-am, not by hand");
  };
  if (auto address = r.get(v_am_address, true)) {
    auto colon = address->rfind(':');
    auto port = colon == std::string::npos ? std::nullopt
                                           : number(address->substr(colon + 1), 1, 65535);
    if (!port)
      return fail(std::string{v_am_address} + " '" + *address + "' is not host:port");
    c.am_host = address->substr(0, colon);
    c.am_port = static_cast<int32_t>(*port);
  }
  // Optional: on YARN the secret is in the container's token file
  // (gate::job_secret_from_environment reads either).
  if (auto secret = r.get(v_secret, false))
    c.secret = *secret;
  if (auto type = r.get(v_task_type, true))
    c.task.type = *type;
  r.read(v_task_index, c.task.index, 0, INT32_MAX, true);
  r.read(v_attempt, c.attempt, 1, INT32_MAX, true);
  r.read(v_restart, c.restart, 0, INT32_MAX, false);
  if (auto command = r.get(v_command, true))
    c.command = *command;
  if (auto app = r.get(v_app_id, false))
    c.app_id = *app;
  if (auto fw = r.get(v_framework, false))
    c.framework = *fw;
  r.read(v_stop_grace, c.stop_grace_ms, 0, INT64_MAX / 2, false);
  r.read(v_spec_signal, c.spec_signal, 1, 64, false);
  if (auto elastic = r.get(v_elastic, false)) {
    auto a = elastic->find(':');
    auto b = a == std::string::npos ? a : elastic->find(':', a + 1);
    auto lo =
        a == std::string::npos ? std::nullopt : number(elastic->substr(0, a), 1, 10000);
    auto hi = b == std::string::npos
                  ? std::nullopt
                  : number(elastic->substr(a + 1, b - a - 1), 1, 10000);
    auto n = b == std::string::npos ? std::nullopt
                                    : number(elastic->substr(b + 1), 0, 1000000);
    if (!lo || !hi || !n || *lo > *hi)
      return fail(std::string{v_elastic} + " '" + *elastic + "' is not min:max:restarts");
    c.elastic_min = static_cast<int32_t>(*lo);
    c.elastic_max = static_cast<int32_t>(*hi);
    c.elastic_restarts = static_cast<int32_t>(*n);
  }
  if (auto path = r.get(v_python_binary_path, false))
    c.python_binary_path = *path;
  if (auto names = r.get(v_shipped_files, false))
    c.shipped_files = split_shipped_names(*names);
  if (auto hvd = r.get(v_horovod, false))
    c.horovod_rendezvous = *hvd;
  if (auto tb = r.get(v_tensorboard, false))
    c.tensorboard = *tb == "reserve";
  read_docker(r, c.docker);
  if (auto reconnect = r.get(v_reconnect, false)) {
    auto space = reconnect->find(' ');
    auto ms = space == std::string::npos
                  ? std::nullopt
                  : number(reconnect->substr(0, space), 1, INT64_MAX / 2);
    if (!ms || space + 1 >= reconnect->size())
      return fail(std::string{v_reconnect} + " '" + *reconnect +
                  "' is not '<milliseconds> <dir URI>'");
    c.reconnect_ms = *ms;
    c.restart_dir = reconnect->substr(space + 1);
    if (auto webhdfs = r.get(v_restart_webhdfs, false))
      c.restart_webhdfs = *webhdfs;
  }
  if (!r.problem.empty())
    return fail(r.problem);
  return c;
}

std::map<std::string, std::string> docker_contract::to_env() const {
  std::map<std::string, std::string> env;
  if (image.empty())
    return env;
  env[v_docker_image] = image;
  env[v_docker_network] = network;
  if (!mounts.empty())
    env[v_docker_mounts] = base::join(mounts, ",");
  if (!run_options.empty())
    env[v_docker_options] = base::join(run_options, "\n");
  if (gpus)
    env[v_docker_gpus] = "1";
  return env;
}

std::map<std::string, std::string> yarn_docker_env(const docker_contract& docker) {
  std::map<std::string, std::string> env;
  if (docker.image.empty())
    return env;
  env["YARN_CONTAINER_RUNTIME_TYPE"] = "docker";
  env["YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"] = docker.image;
  env["YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK"] = docker.network;
  if (!docker.mounts.empty())
    env["YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"] = base::join(docker.mounts, ",");
  return env;
}

docker_contract docker_of(const job_spec& job, const std::string& type,
                          const std::vector<std::string>& hadoop_mounts) {
  docker_contract d;
  auto t = job.find(type);
  d.image = t ? t->docker_image : job.docker_image;
  if (d.image.empty())
    return d;
  // YARN-DTF's list: the Hadoop and Java homes, and the input and output
  // paths when they are not on HDFS (a URI has a scheme; a path starts
  // with '/').
  for (auto& m : hadoop_mounts)
    d.mounts.push_back(m + ":" + m + ":ro");
  for (auto* p : {&job.input_path, &job.output_path})
    if (!p->empty() && (*p)[0] == '/')
      d.mounts.push_back(*p + ":" + *p + ":rw");
  d.mounts.insert(d.mounts.end(), job.docker_mounts.begin(), job.docker_mounts.end());
  d.network = job.docker_network;
  d.run_options = job.docker_run_options;
  return d;
}

bool executor_contract::is_private(const std::string& name) {
  return name == v_secret || name == v_am_address || name == v_command ||
         name == v_stop_grace || name == v_spec_signal || name == v_elastic ||
         name == v_python_binary_path || name == v_shipped_files || name == v_horovod ||
         name == v_tensorboard || name == v_docker_image || name == v_docker_mounts ||
         name == v_docker_network || name == v_docker_options || name == v_docker_gpus ||
         name == v_reconnect || name == v_restart_webhdfs;
}

std::map<std::string, std::string> executor_env(const job_spec& job, const task_id& task,
                                                int32_t attempt, int32_t restart,
                                                const am_endpoint& am) {
  std::map<std::string, std::string> env = job.env;
  auto type = job.find(task.type);
  if (type)
    for (auto& [k, v] : type->env)
      env[k] = v;
  if (!job.input_path.empty())
    env["DTF_INPUT_PATH"] = job.input_path;
  if (!job.output_path.empty())
    env["DTF_OUTPUT_PATH"] = job.output_path;
  executor_contract c;
  c.app_id = am.app_id;
  c.am_host = am.host;
  c.am_port = am.port;
  c.secret = am.secret;
  c.task = task;
  c.attempt = attempt;
  c.restart = restart;
  c.framework = job.framework;
  c.command = type ? type->command : job.command;
  c.stop_grace_ms = job.policy.stop_grace_ms;
  c.python_binary_path = job.python_binary_path;
  if (job.am.max_app_attempts >= 2 && !am.restart_dir.empty()) {
    c.reconnect_ms = job.am.reconnect_timeout_ms;
    c.restart_dir = am.restart_dir;
    c.restart_webhdfs = am.restart_webhdfs;
  }
  for (auto& f : shipped_files_of(job, task.type))
    c.shipped_files.push_back(f.name);
  if (job.framework == "horovod" && am.horovod_port > 0)
    c.horovod_rendezvous = am.host + ":" + std::to_string(am.horovod_port);
  if (job.tensorboard.on_chief()) {
    std::vector<std::string> types;
    for (auto& t : job.tasks)
      types.push_back(t.name);
    c.tensorboard = world_chief(types) == std::optional<task_id>{task};
  }
  if (type) {
    c.spec_signal = type->spec_signal;
    if (type->elastic()) {
      c.elastic_min = type->elastic_min;
      c.elastic_max = type->elastic_max;
      // Another node's loss fails this node's worker too (its collectives
      // break): the agent restarts its worker once per loss in the world.
      c.elastic_restarts = std::max(1, type->max_restarts * type->instances);
    }
  }
  for (auto& [k, v] : c.to_env())
    env[k] = v;
  return env;
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
