#pragma once

// The task environment: the contract between tony and user code (see
// doc/task-environment.md). Rendered by the executor once it has the cluster
// spec; a pure function so it is tested for every cluster shape.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony {

struct task_env_input {
  std::string framework; // tensorflow | pytorch | horovod | standalone
  std::string app_id;
  task_id task;
  int32_t attempt = 0;
  cluster_map cluster; // every task type -> "host:port" by index

  /// [data] input_path / output_path; exported as DTF_INPUT_PATH and
  /// DTF_OUTPUT_PATH when not empty.
  std::string input_path;
  std::string output_path;

  /// Horovod only: "host:port" of the gloo rendezvous server, the AM's
  /// (web/horovod_rendezvous.hpp). Empty (an AM that serves
  /// none): the address of world rank 0.
  std::string horovod_rendezvous;
  /// Horovod only: the path token of the AM's rendezvous for this attempt
  /// (web/horovod_rendezvous.hpp). When set,
  /// HOROVOD_GLOO_RENDEZVOUS_ADDR is "<host>:<port>/<token>": Horovod's
  /// client puts everything after the first '/' into the request path.
  std::string horovod_token;

  /// `[tensorboard] on = "chief"`: the port reserved for the TensorBoard
  /// this task starts, exported as TB_PORT (TonY's name); 0: none.
  int32_t tensorboard_port = 0;

  /// The token the AM's TensorBoard proxy sends (tensorboard_token_header),
  /// for the task that serves TensorBoard: exported as
  /// TONY_TENSORBOARD_TOKEN, with the guard program written beside the spec
  /// file and named by TONY_TENSORBOARD_GUARD; empty: neither.
  std::string tensorboard_token;

  /// Where the executor writes values too large for the environment (see
  /// render_task_env_files); an absolute directory in the container.
  std::string file_dir;

  /// The task's run within the attempt: 0, then 1 after its first restart.
  int32_t restart = 0;

  /// The file the executor keeps the cluster spec in (rewritten when a
  /// restarted task moves); exported as TONY_CLUSTER_SPEC_FILE when set.
  std::string spec_file;

  /// The file the task may write its progress into (a number 0..1, read by
  /// the executor with each heartbeat); exported as TONY_PROGRESS_FILE when
  /// set.
  std::string progress_file;

  /// Elastic PyTorch (max > 0): the task is a node of torchrun's c10d
  /// rendezvous with min..max nodes, served by the `rendezvous` task; its
  /// agent restarts the local worker up to `elastic_restarts` times.
  int32_t elastic_min = 0;
  int32_t elastic_max = 0;
  int32_t elastic_restarts = 0;
};

/// The task type that serves an elastic job's rendezvous (a c10d TCPStore).
constexpr const char* rendezvous_type = "rendezvous";

/// Largest value tony puts into one environment variable. Linux refuses to
/// exec with any single "NAME=value" string longer than MAX_ARG_STRLEN
/// (128 KiB); CLUSTER_SPEC or TF_CONFIG of a job with thousands of tasks can
/// get there.
constexpr size_t max_env_value_size = 100 * 1024;

/// The header that carries the TensorBoard token from the AM's proxy.
constexpr const char* tensorboard_token_header = "X-Tony-TensorBoard-Token";

/// TensorBoard behind the token (a Python program run as
/// `python3 "$TONY_TENSORBOARD_GUARD" <tensorboard's flags>`): every request
/// without the token in tensorboard_token_header gets 403, so its port on
/// the node answers nobody but the job's tracking URL.
const std::string& tensorboard_guard_program();

/// The `tensorboard` command tony puts first on the PATH of a chief that
/// starts the job's TensorBoard on TB_PORT (`[tensorboard] on = "chief"`):
/// a shell script that runs the next `tensorboard` on PATH, a Python console
/// script, with that script's own Python under the guard program. Another
/// kind of `tensorboard` runs as it is, saying so on stderr (the site hook
/// below guards it if it makes its TensorBoard in Python).
const std::string& tensorboard_command_shim();

/// The `sitecustomize` module tony puts first on the PYTHONPATH of that
/// chief: in any of its Python processes, a TensorBoard made with
/// `tensorboard.program.TensorBoard` (the console script, `python -m
/// tensorboard`, or one the training program starts in-process) serves
/// through the same guard as the program above. It runs the next
/// `sitecustomize` on the path, so a venv's or the distribution's still
/// applies.
const std::string& tensorboard_site_hook();

/// The environment of a task, split into what fits the environment and what
/// goes into files.
struct task_env {
  /// Variables to set. A value longer than max_env_value_size is not here;
  /// instead `<NAME>_FILE` holds the path of the file that carries it.
  std::map<std::string, std::string> vars;
  /// Files the executor writes before it starts the command: path -> content.
  /// Paths are `<file_dir>/<NAME>`.
  std::map<std::string, std::string> files;
  /// The same for programs and modules of tony's, each in a directory of
  /// its own (mode 0700): the chief's `tensorboard` command and
  /// `sitecustomize`.
  std::map<std::string, std::string> executables;
  /// A directory the executor puts first on the command's PATH; empty: none.
  std::string path_prefix;
  /// A directory the executor puts first on the command's PYTHONPATH;
  /// empty: none.
  std::string python_path_prefix;
};

/// How the executor holds one of a task's ports (doc/task-environment.md
/// "The task's port").
enum class port_share {
  /// Listening, closed just before the command starts.
  released,
  /// Bound with SO_REUSEPORT and not listening, until the command ends: a
  /// server that binds with SO_REUSEPORT as the same user binds beside it
  /// and gets every connection; nobody else can bind the port meanwhile.
  reuse_port,
  /// Bound with SO_REUSEADDR and not listening, until the command ends: a
  /// server that binds with SO_REUSEADDR binds beside it, listens, and gets
  /// every connection; no connect() gets the port as its own, and no bind
  /// without SO_REUSEADDR. (Linux lets SO_REUSEADDR sockets share a port
  /// while none of them listens.)
  reuse_addr,
};

/// Which of a task's ports its executor holds until the command ends
/// instead of releasing them just before it starts.
struct port_hold {
  port_share task_port = port_share::released;
  port_share tensorboard_port = port_share::released; // TB_PORT
  /// Variables the command gets (unless its environment has them) so that
  /// its server binds that way.
  std::map<std::string, std::string> vars;
};

/// The holds of `task` of a `framework` job running `command` with `env`
/// (the job's and the type's [env]): TensorFlow's roles, whose gRPC server
/// binds with SO_REUSEPORT when TF_GRPC_REUSE_PORT is true, which tony sets
/// unless `env` sets it; a TensorBoard sidecar whose command runs tony's
/// guard (which binds that way); TB_PORT, and a sidecar of the user's own,
/// when `env` has TB_SERVER_REUSE_PORT true (TonY's name; the user's
/// TensorBoard then runs with --reuse_port): SO_REUSEPORT. PyTorch's world
/// and an elastic job's rendezvous, whose c10d TCPStore binds with
/// SO_REUSEADDR: SO_REUSEADDR. Nothing for a command in a
/// container of its own (`in_container`): its server is in another network
/// namespace or runs as another user.
port_hold ports_to_hold(const std::string& framework, const task_id& task,
                        const std::string& command,
                        const std::map<std::string, std::string>& env, bool in_container);

/// True for task types that train together (the world): every type but
/// ps, tensorboard, evaluator and rendezvous.
bool is_world_type(const std::string& type);

/// The chief of a job with task types `types`: world rank 0 (the first task
/// of chief, master, worker, then the other world types by name). Nothing
/// when no type is in the world.
std::optional<task_id> world_chief(const std::vector<std::string>& types);

/// The variables and files tony provides for the task (TonY, YARN-DTF,
/// TF_CONFIG, PyTorch, Horovod names), on top of the container environment.
task_env render_task_env_files(const task_env_input& in,
                               size_t max_value_size = max_env_value_size);

/// The cluster spec file's content: CLUSTER_SPEC's JSON.
std::string cluster_spec_json(const cluster_map& cluster);

/// The name of a task's progress file in its working dir (TONY_PROGRESS_FILE).
constexpr const char* progress_file_name = "tony_progress";

/// The progress a task wrote into its progress file: a decimal number
/// (surrounding blanks allowed), 0..1; a number above 1 is taken as 1, below
/// 0 as 0. Nothing for an empty file or text that is no number, or one cut
/// short ("0.": a task halfway through writing it): the previous value
/// stays.
std::optional<float> parse_progress(const std::string& text);

/// The command line the executor runs for `command`: the command itself, or
/// for an elastic task the command as a node of torchrun's c10d rendezvous
/// (`python3 -m torch.distributed.run ... --no_python /bin/sh -c '<command>'`)
/// at the `rendezvous` task's address.
std::string render_task_command(const task_env_input& in, const std::string& command);

/// The variables tony sets for the task: render_task_env_files(in).vars. A
/// caller that uses this alone loses oversized values (their `<NAME>_FILE`
/// points at files nobody wrote); the executor uses render_task_env_files.
std::map<std::string, std::string> render_task_env(const task_env_input& in);

} // namespace tony
