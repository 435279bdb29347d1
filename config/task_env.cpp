#include "config/task_env.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/text.hpp"

namespace tony {

namespace {

using json = nlohmann::json;

// Types that are not part of the training world: they get no rank and no
// place in a TF cluster's training roles (evaluator) or in TF_CONFIG at all
// (tensorboard).
bool in_world(const std::string& type) {
  return is_world_type(type);
}

int world_order(const std::string& type) {
  if (type == "chief")
    return 0;
  if (type == "master")
    return 1;
  if (type == "worker")
    return 2;
  return 3;
}

/// The world: chief, master, worker, then the other world types by name;
/// tasks of a type in index order. The position is the rank.
std::vector<task_id> world_of(const cluster_map& cluster) {
  std::vector<std::string> types;
  for (auto& [type, addrs] : cluster)
    if (in_world(type))
      types.push_back(type);
  std::stable_sort(types.begin(), types.end(),
                   [](auto& x, auto& y) { return world_order(x) < world_order(y); });
  std::vector<task_id> out;
  for (auto& type : types) {
    auto n = static_cast<int32_t>(cluster.at(type).size());
    for (int32_t i = 0; i < n; ++i)
      out.push_back(task_id{type, i});
  }
  return out;
}

const std::string& address_of(const cluster_map& cluster, const task_id& t) {
  static const std::string none;
  auto it = cluster.find(t.type);
  if (it == cluster.end() || t.index < 0 ||
      static_cast<size_t>(t.index) >= it->second.size())
    return none;
  return it->second[static_cast<size_t>(t.index)];
}

struct host_port {
  std::string host; // without IPv6 brackets
  std::string port;
};

host_port split_address(const std::string& addr) {
  if (addr.empty())
    return {};
  auto pos = addr.rfind(':');
  // "[::1]:80" has its port after "]"; a bare "::1" has no port.
  if (pos == std::string::npos ||
      (addr.find(']') != std::string::npos && pos < addr.find(']')) ||
      (addr.front() != '[' && addr.find(':') != pos))
    return {addr, ""};
  host_port out{addr.substr(0, pos), addr.substr(pos + 1)};
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  return out;
}

/// "ps-1" -> "PS_1", for DTF_<TYPE>_HOSTS.
std::string env_name_of(const std::string& type) {
  std::string out = type;
  for (auto& c : out) {
    if (c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
    else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      c = '_';
  }
  return out;
}

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Horovod's slot assignment (horovod.runner.common.util.hosts
// .get_host_assignments): hosts in order of first appearance in the world,
// ranks consecutive per host, local rank = position on the host, cross rank
// = the host's position among hosts that have that local rank.
struct horovod_slot {
  int rank = 0;
  int size = 0;
  int local_rank = 0;
  int local_size = 0;
  int cross_rank = 0;
  int cross_size = 0;
  std::string hostname;
};

std::vector<horovod_slot> horovod_slots(const std::vector<std::string>& world_hosts) {
  std::vector<std::string> hosts;
  std::map<std::string, std::vector<size_t>> members; // host -> world positions
  for (size_t i = 0; i < world_hosts.size(); ++i) {
    auto& h = world_hosts[i];
    if (members.count(h) == 0)
      hosts.push_back(h);
    members[h].push_back(i);
  }
  std::map<int, std::map<std::string, int>> cross; // local rank -> host -> cross rank
  for (auto& h : hosts)
    for (size_t l = 0; l < members[h].size(); ++l) {
      auto& at_l = cross[static_cast<int>(l)];
      at_l.emplace(h, static_cast<int>(at_l.size()));
    }
  std::vector<horovod_slot> out(world_hosts.size());
  int rank = 0;
  for (auto& h : hosts) {
    auto& ms = members[h];
    for (size_t l = 0; l < ms.size(); ++l) {
      auto& s = out[ms[l]];
      auto& at_l = cross[static_cast<int>(l)];
      s.rank = rank++;
      s.size = static_cast<int>(world_hosts.size());
      s.local_rank = static_cast<int>(l);
      s.local_size = static_cast<int>(ms.size());
      s.cross_rank = at_l.at(h);
      s.cross_size = static_cast<int>(at_l.size());
      s.hostname = h;
    }
  }
  return out;
}

} // namespace

bool is_world_type(const std::string& type) {
  return type != "ps" && type != "tensorboard" && type != "evaluator" &&
         type != rendezvous_type;
}

std::optional<task_id> world_chief(const std::vector<std::string>& types) {
  std::optional<std::string> best;
  for (auto& type : types) {
    if (!in_world(type))
      continue;
    if (!best || world_order(type) < world_order(*best) ||
        (world_order(type) == world_order(*best) && type < *best))
      best = type;
  }
  if (!best)
    return std::nullopt;
  return task_id{*best, 0};
}

namespace {

using env_vars = std::map<std::string, std::string>;

// What render_task_env_files computes once for the task it renders.
struct task_place {
  size_t num = 0;      // tasks of its type
  std::string address; // its host:port, or empty
  std::vector<task_id> world;
  int rank = -1; // in the world, or -1
};

void tony_vars(env_vars& v, const task_env_input& in, const task_place& at) {
  const auto& cluster = in.cluster;
  const auto& self = in.task;
  auto num = at.num;
  auto rank = at.rank;
  const auto& self_addr = at.address;
  // TonY names. IS_CHIEF follows TonY's rule for its shapes (the chief, or
  // worker:0 without one), generalized: the world's rank 0.
  v["JOB_NAME"] = self.type;
  v["TASK_INDEX"] = std::to_string(self.index);
  v["TASK_NUM"] = std::to_string(num);
  v["IS_CHIEF"] = rank == 0 ? "true" : "false";
  v["CLUSTER_SPEC"] = dump(json(cluster));
  v["TONY_APP_ID"] = in.app_id;
  v["TONY_ATTEMPT"] = std::to_string(in.attempt);
  v["TONY_RESTART"] = std::to_string(in.restart);
  if (!in.spec_file.empty())
    v["TONY_CLUSTER_SPEC_FILE"] = in.spec_file;
  if (!in.progress_file.empty())
    v["TONY_PROGRESS_FILE"] = in.progress_file;
  v["TONY_TASK_ID"] = self.type + ":" + std::to_string(self.index);
  if (!self_addr.empty()) {
    auto hp = split_address(self_addr);
    v["TONY_TASK_HOST"] = hp.host;
    v["TONY_TASK_PORT"] = hp.port;
  }

  if (in.tensorboard_port > 0)
    v["TB_PORT"] = std::to_string(in.tensorboard_port);
  if (!in.tensorboard_token.empty())
    v["TONY_TENSORBOARD_TOKEN"] = in.tensorboard_token;
}

void dtf_vars(env_vars& v, const task_env_input& in) {
  const auto& cluster = in.cluster;
  const auto& self = in.task;
  // YARN-DTF names.
  v["DTF_TASK_JOB_NAME"] = self.type;
  v["DTF_TASK_INDEX"] = std::to_string(self.index);
  for (auto& [type, addrs] : cluster)
    v["DTF_" + env_name_of(type) + "_HOSTS"] = base::join(addrs, ",");
  if (!in.input_path.empty())
    v["DTF_INPUT_PATH"] = in.input_path;
  if (!in.output_path.empty())
    v["DTF_OUTPUT_PATH"] = in.output_path;
}

void horovod_vars(env_vars& v, const task_env_input& in,
                  const std::vector<std::string>& world_hosts, const std::string& master,
                  int rank) {
  auto slot = horovod_slots(world_hosts)[static_cast<size_t>(rank)];
  auto rendezvous =
      split_address(in.horovod_rendezvous.empty() ? master : in.horovod_rendezvous);
  v["HOROVOD_CONTROLLER"] = "gloo";
  v["HOROVOD_CPU_OPERATIONS"] = "gloo";
  v["HOROVOD_GLOO_RENDEZVOUS_ADDR"] =
      in.horovod_token.empty()
          ? rendezvous.host
          : rendezvous.host + ":" + rendezvous.port + "/" + in.horovod_token;
  v["HOROVOD_GLOO_RENDEZVOUS_PORT"] = rendezvous.port;
  v["HOROVOD_HOSTNAME"] = slot.hostname;
  v["HOROVOD_RANK"] = std::to_string(slot.rank);
  v["HOROVOD_SIZE"] = std::to_string(slot.size);
  v["HOROVOD_LOCAL_RANK"] = std::to_string(slot.local_rank);
  v["HOROVOD_LOCAL_SIZE"] = std::to_string(slot.local_size);
  v["HOROVOD_CROSS_RANK"] = std::to_string(slot.cross_rank);
  v["HOROVOD_CROSS_SIZE"] = std::to_string(slot.cross_size);
}

void framework_vars(env_vars& v, const task_env_input& in, const task_place& at) {
  const auto& cluster = in.cluster;
  const auto& self = in.task;
  const auto& world = at.world;
  auto rank = at.rank;
  if (in.framework == "tensorflow" && self.type != "tensorboard") {
    // TensorFlow's cluster holds the training roles; an evaluator runs
    // beside it and is told its own role only.
    json tf_cluster = json::object();
    for (auto& [type, addrs] : cluster)
      if (type != "tensorboard" && type != "evaluator")
        tf_cluster[type] = addrs;
    json tf_config = {{"cluster", tf_cluster},
                      {"task", {{"type", self.type}, {"index", self.index}}}};
    v["TF_CONFIG"] = dump(tf_config);
  }

  if (in.elastic_max > 0) {
    // torchrun's agent gives each worker its rank and world; tony says only
    // where the rendezvous is and how large the world may be.
    v["TONY_ELASTIC_MIN_NODES"] = std::to_string(in.elastic_min);
    v["TONY_ELASTIC_MAX_NODES"] = std::to_string(in.elastic_max);
    v["TONY_RDZV_ENDPOINT"] = address_of(cluster, task_id{rendezvous_type, 0});
  } else if ((in.framework == "pytorch" || in.framework == "horovod") && !world.empty()) {
    std::vector<std::string> world_hosts;
    for (auto& t : world)
      world_hosts.push_back(split_address(address_of(cluster, t)).host);
    const auto& master = address_of(cluster, world.front());
    auto master_hp = split_address(master);
    if (in.framework == "pytorch") {
      v["MASTER_ADDR"] = master_hp.host;
      v["MASTER_PORT"] = master_hp.port;
      v["INIT_METHOD"] = "tcp://" + master;
      v["WORLD_SIZE"] = std::to_string(world.size());
      if (rank >= 0) {
        auto& my_host = world_hosts[static_cast<size_t>(rank)];
        auto local_rank =
            std::count(world_hosts.begin(), world_hosts.begin() + rank, my_host);
        auto local_size = std::count(world_hosts.begin(), world_hosts.end(), my_host);
        v["RANK"] = std::to_string(rank);
        v["WORLD"] = std::to_string(world.size());
        v["LOCAL_RANK"] = std::to_string(local_rank);
        v["LOCAL_WORLD_SIZE"] = std::to_string(local_size);
      }
    } else if (rank >= 0) {
      horovod_vars(v, in, world_hosts, master, rank);
    }
  }
}

} // namespace

task_env render_task_env_files(const task_env_input& in, size_t max_value_size) {
  env_vars v;
  const auto& cluster = in.cluster;
  const auto& self = in.task;
  task_place at;
  auto self_it = cluster.find(self.type);
  at.num = self_it == cluster.end() ? size_t{0} : self_it->second.size();
  at.address = address_of(cluster, self);
  at.world = world_of(cluster);
  auto rank_it = std::find(at.world.begin(), at.world.end(), self);
  at.rank = rank_it == at.world.end() ? -1 : static_cast<int>(rank_it - at.world.begin());
  tony_vars(v, in, at);
  dtf_vars(v, in);
  framework_vars(v, in, at);

  task_env out;
  for (auto& [name, value] : v) {
    if (value.size() <= max_value_size) {
      out.vars[name] = std::move(value);
    } else {
      auto path = in.file_dir.empty() ? name : in.file_dir + "/" + name;
      out.vars[name + "_FILE"] = path;
      out.files[path] = std::move(value);
    }
  }
  if (!in.tensorboard_token.empty()) {
    auto guard = in.file_dir.empty() ? std::string{"tony_tensorboard.py"}
                                     : in.file_dir + "/tony_tensorboard.py";
    out.vars["TONY_TENSORBOARD_GUARD"] = guard;
    out.files[guard] = tensorboard_guard_program();
    if (in.tensorboard_port > 0) {
      // The chief starts TensorBoard itself: its `tensorboard` command is
      // the guard's, first on PATH.
      out.path_prefix =
          in.file_dir.empty() ? std::string{"tony-bin"} : in.file_dir + "/tony-bin";
      out.executables[out.path_prefix + "/tensorboard"] = tensorboard_command_shim();
      // ... and a TensorBoard it starts in its own Python is guarded too.
      out.python_path_prefix =
          in.file_dir.empty() ? std::string{"tony-py"} : in.file_dir + "/tony-py";
      out.executables[out.python_path_prefix + "/sitecustomize.py"] =
          tensorboard_site_hook();
    }
  }
  return out;
}

namespace {

// TensorFlow's reading of a boolean variable (ReadBoolFromEnvVar): "true"
// or "1", in any case; anything else is not true.
bool env_true(const std::map<std::string, std::string>& env, const char* name) {
  auto i = env.find(name);
  if (i == env.end())
    return false;
  auto v = base::lower(i->second);
  return v == "true" || v == "1";
}

} // namespace

port_hold ports_to_hold(const std::string& framework, const task_id& task,
                        const std::string& command,
                        const std::map<std::string, std::string>& env,
                        bool in_container) {
  port_hold hold;
  if (in_container)
    return hold;
  auto share = [](bool held) {
    return held ? port_share::reuse_port : port_share::released;
  };
  bool tb_reuses = env_true(env, "TB_SERVER_REUSE_PORT");
  if (task.type == "tensorboard") {
    hold.task_port =
        share(tb_reuses || command.find("TONY_TENSORBOARD_GUARD") != std::string::npos);
  } else if (framework == "tensorflow" && task.type != "evaluator") {
    bool unset = env.count("TF_GRPC_REUSE_PORT") == 0;
    if (unset)
      hold.vars["TF_GRPC_REUSE_PORT"] = "true";
    hold.task_port = share(unset || env_true(env, "TF_GRPC_REUSE_PORT"));
  } else if (framework == "pytorch" &&
             (is_world_type(task.type) || task.type == rendezvous_type)) {
    // Rank 0's MASTER_PORT and the rendezvous task's port are where c10d's
    // TCPStore listens; it binds with SO_REUSEADDR.
    hold.task_port = port_share::reuse_addr;
  }
  hold.tensorboard_port = share(tb_reuses);
  return hold;
}

namespace {

// The token check of the guard program and of the site hook: TensorBoard's
// WSGI app behind the header the AM's proxy sends (as WSGI names it: HTTP_
// and upper case, '-' as '_').
constexpr const char* guard_check_text = R"(
def _tony_guarded(app, token):
    import hmac

    def checked(environ, start_response):
        sent = environ.get("HTTP_X_TONY_TENSORBOARD_TOKEN", "").encode()
        if token and hmac.compare_digest(sent, token):
            return app(environ, start_response)
        start_response("403 Forbidden",
                       [("Content-Type", "text/plain; charset=utf-8")])
        return [b"tony: this TensorBoard answers only through tony's proxy: "
                b"its job's tracking URL, or tony-history serve\n"]
    return checked

)";

} // namespace

const std::string& tensorboard_guard_program() {
  static const std::string program =
      R"(# tony's TensorBoard guard (doc/tracking.md "TensorBoard"): TensorBoard
# answers only requests that carry the token the job's AM sends.
import os
import socket
import socketserver
import sys

try:
    from tensorboard import program
except ImportError as e:
    sys.exit("tony: python3 cannot import tensorboard (%s): install the "
             "tensorboard package for the python3 on the task's PATH, or "
             "declare [tasks.tensorboard] command in job.toml" % e)

TOKEN = os.environ.pop("TONY_TENSORBOARD_TOKEN", "").encode()

# tony's executor may hold this port (bound with SO_REUSEPORT, not listening)
# until the command ends, so that nobody else takes it before TensorBoard
# binds it; TensorBoard binds beside it with SO_REUSEPORT too.
_server_bind = socketserver.TCPServer.server_bind


def _server_bind_beside_tony(self):
    if hasattr(socket, "SO_REUSEPORT"):
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    _server_bind(self)


socketserver.TCPServer.server_bind = _server_bind_beside_tony

)" + std::string{guard_check_text} +
      R"(
def server(app, flags):
    return program.create_port_scanning_werkzeug_server(_tony_guarded(app, TOKEN), flags)


tensorboard = program.TensorBoard(server_class=server)
tensorboard.configure(argv=["tensorboard"] + sys.argv[1:])
sys.exit(tensorboard.main())
)";
  return program;
}

const std::string& tensorboard_command_shim() {
  static const std::string shim = R"(#!/bin/sh
# tony's tensorboard command for a chief that starts TensorBoard on TB_PORT
# (doc/tracking.md "TensorBoard"): the tensorboard found next on PATH, run by
# its own Python behind tony's guard, so TB_PORT answers only the job's proxy.
here=$(cd "${0%/*}" && pwd)
real=
IFS=:
for dir in $PATH; do
  [ "$dir" = "$here" ] && continue
  if [ -f "$dir/tensorboard" ] && [ -x "$dir/tensorboard" ]; then
    real=$dir/tensorboard
    break
  fi
done
unset IFS
if [ -z "$real" ]; then
  echo "tony: no tensorboard command on PATH (besides tony's guard): install the tensorboard package for the task" >&2
  exit 127
fi
read -r first < "$real"
case $first in
  '#!'*python*)
    exec ${first#??} "$TONY_TENSORBOARD_GUARD" "$@" ;;
esac
echo "tony: $real is no Python console script; tony's guard covers its TensorBoard only if it starts one in Python, through tony's sitecustomize" >&2
exec "$real" "$@"
)";
  return shim;
}

namespace {

// The module's text (tensorboard_site_hook), around the token check.
constexpr const char* site_hook_head =
    R"(# tony's hook for a chief that starts the job's TensorBoard on TB_PORT
# (doc/tracking.md "TensorBoard"): a TensorBoard made in any Python process of
# the task, in-process too, answers only requests that carry the token the
# job's AM sends.
import os as _os
import sys as _sys


def _tony_next_sitecustomize():
    # The sitecustomize this one shadows (a venv's, the distribution's).
    import importlib.machinery
    import importlib.util
    here = _os.path.dirname(_os.path.abspath(__file__))
    rest = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


)";

// After the token check.
constexpr const char* site_hook_tail = R"(
def _tony_guard_program(program):
    made = program.TensorBoard.__init__

    def __init__(self, *args, **kwargs):
        made(self, *args, **kwargs)
        token = _os.environ.get("TONY_TENSORBOARD_TOKEN", "").encode()
        server_class = self.server_class
        if not token or getattr(server_class, "_tony_guarded", False):
            return

        def guarded_server(app, flags):
            return server_class(_tony_guarded(app, token), flags)
        guarded_server._tony_guarded = True
        self.server_class = guarded_server
    program.TensorBoard.__init__ = __init__


class _TonyTensorBoardFinder:
    def find_spec(self, name, path=None, target=None):
        if name != "tensorboard.program":
            return None
        for finder in _sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = getattr(spec.loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module):
            run(module)
            _tony_guard_program(module)
        spec.loader.exec_module = exec_module
        return spec


if "tensorboard.program" in _sys.modules:
    _tony_guard_program(_sys.modules["tensorboard.program"])
else:
    _sys.meta_path.insert(0, _TonyTensorBoardFinder())
try:
    _tony_next_sitecustomize()
except Exception as e:  # what Python's site does with a failing one
    _sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                      "%s: %s\n" % (type(e).__name__, e))
)";

} // namespace

const std::string& tensorboard_site_hook() {
  static const std::string hook =
      std::string{site_hook_head} + guard_check_text + site_hook_tail;
  return hook;
}

std::string cluster_spec_json(const cluster_map& cluster) {
  return dump(json(cluster));
}

std::optional<float> parse_progress(const std::string& text) {
  auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos)
    return std::nullopt;
  auto end = text.find_last_not_of(" \t\r\n") + 1;
  auto number = text.substr(begin, end - begin);
  // A trailing '.' or exponent sign is a number cut short by a read while
  // the task writes it.
  if (number.size() > 32 ||
      number.find_first_not_of("0123456789.eE+-") != std::string::npos ||
      std::string{".eE+-"}.find(number.back()) != std::string::npos)
    return std::nullopt;
  char* stop = nullptr;
  double x = std::strtod(number.c_str(), &stop);
  if (stop != number.c_str() + number.size() || !std::isfinite(x))
    return std::nullopt;
  return static_cast<float>(std::clamp(x, 0.0, 1.0));
}

std::string render_task_command(const task_env_input& in, const std::string& command) {
  if (in.elastic_max <= 0)
    return command;
  std::string quoted = "'";
  for (char c : command)
    quoted += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  quoted += "'";
  auto endpoint = address_of(in.cluster, task_id{rendezvous_type, 0});
  return "exec python3 -m torch.distributed.run --nnodes=" +
         std::to_string(in.elastic_min) + ":" + std::to_string(in.elastic_max) +
         " --nproc_per_node=1 --rdzv_backend=c10d --rdzv_endpoint=" + endpoint +
         " --rdzv_id=" + in.app_id + "-" + std::to_string(in.attempt) +
         " --rdzv_conf=is_host=0,last_call_timeout=5" +
         " --max_restarts=" + std::to_string(in.elastic_restarts) +
         " --monitor_interval=1" +
         // Output stays the task's (one local process). The default "0"
         // does not parse under Python 3.11 with torch 1.13 (Std.from_str
         // answers None), so name a local rank that does not exist.
         " --redirects=1:0 --tee=1:0 --no_python /bin/sh -c " + quoted;
}

std::map<std::string, std::string> render_task_env(const task_env_input& in) {
  return render_task_env_files(in).vars;
}

} // namespace tony
