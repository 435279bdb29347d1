#include "config/job_config.hpp"

#include <cerrno>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "config/disk_probe.hpp"

using namespace tony;
namespace fs = std::filesystem;

namespace {

// Every test gets a fresh directory holding the job's files; the job text is
// loaded as "job.toml" in that directory so messages read as users see them.
class job_config : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tony-config-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& name, const std::string& text) {
    auto path = fs::path{dir_} / name;
    fs::create_directories(path.parent_path());
    std::ofstream out{path, std::ios::binary};
    out << text;
    return path.string();
  }

  void mkdir(const std::string& name) { fs::create_directories(fs::path{dir_} / name); }

  load_result load(std::string_view text, std::vector<std::string> overrides = {}) {
    return load_job_text(text, "job.toml", dir_, overrides, disk_probe{});
  }

  job_spec ok(std::string_view text, std::vector<std::string> overrides = {}) {
    auto r = load(text, std::move(overrides));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : to_string(r.error()));
    return r.ok() ? std::move(r).value() : job_spec{};
  }

  // The rendered errors, one string each.
  std::vector<std::string> errors(std::string_view text,
                                  std::vector<std::string> overrides = {}) {
    auto r = load(text, std::move(overrides));
    EXPECT_FALSE(r.ok()) << "the job loaded";
    std::vector<std::string> out;
    if (!r.ok())
      for (auto& e : r.error())
        out.push_back(e.to_string());
    return out;
  }

  // The single error of `text`.
  std::string error(std::string_view text, std::vector<std::string> overrides = {}) {
    auto es = errors(text, std::move(overrides));
    EXPECT_EQ(es.size(), 1u) << ::testing::PrintToString(es);
    return es.empty() ? "" : es.front();
  }

  std::string dir_;
};

constexpr std::string_view minimal = R"(
[code]
command = "python3 train.py"

[tasks.worker]
)";

// The task type `name` of `spec`; a missing one fails the test.
const task_type_spec& task(const job_spec& spec, const std::string& name) {
  static const task_type_spec missing;
  if (auto* t = spec.find(name))
    return *t;
  ADD_FAILURE() << "no task type " << name;
  return missing;
}

// A valid job whose tail a test appends to; line 6 is the first appended line.
std::string base(std::string_view tail) {
  return std::string{"[code]\ncommand = \"python3 train.py\"\n[tasks.worker]\n"
                     "instances = 2\n#\n"} +
         std::string{tail};
}

} // namespace

// -- valid forms --------------------------------------------------------------

TEST_F(job_config, minimal_job_gets_every_default) {
  auto spec = ok(minimal);
  EXPECT_EQ(spec.name, "job");
  EXPECT_EQ(spec.framework, "tensorflow");
  EXPECT_EQ(spec.queue, "default");
  EXPECT_EQ(spec.timeout_ms, 0);
  EXPECT_TRUE(spec.tags.empty());
  EXPECT_EQ(spec.src_dir, fs::path{dir_}.lexically_normal().string());
  EXPECT_EQ(spec.job_file, (fs::path{dir_} / "job.toml").lexically_normal().string());
  EXPECT_EQ(spec.command, "python3 train.py");
  ASSERT_EQ(spec.tasks.size(), 1u);
  auto& w = spec.tasks[0];
  EXPECT_EQ(w.name, "worker");
  EXPECT_EQ(w.instances, 1);
  EXPECT_EQ(w.capability, (resource{2048, 1, 0}));
  EXPECT_EQ(w.command, "python3 train.py");
  EXPECT_TRUE(w.tracked);
  EXPECT_FALSE(w.sidecar);
  EXPECT_EQ(w.priority, 1);
  EXPECT_EQ(spec.am.capability, (resource{512, 1, 0}));
  EXPECT_EQ(spec.am.max_app_attempts, 1);
  EXPECT_EQ(spec.policy.max_attempts, 1);
  EXPECT_EQ(spec.policy.allocation_timeout_ms, 0); // waits, as TonY does
  EXPECT_EQ(spec.policy.registration_timeout_ms, 120000);
  EXPECT_EQ(spec.policy.heartbeat_interval_ms, 1000);
  EXPECT_EQ(spec.policy.heartbeat_timeout_ms, 10000);
  EXPECT_EQ(spec.policy.stop_grace_ms, 3000);
  EXPECT_EQ(spec.cluster.backend, "local");
  EXPECT_FALSE(spec.tensorboard.enabled);
}

TEST_F(job_config, full_job_reads_every_key) {
  mkdir("src");
  write("venv.zip", "PK");
  mkdir("hadoop");
  auto spec = ok(R"(
name = "mnist"
framework = "pytorch"
queue = "ml"
timeout = "1h30m"
tags = ["a", "b"]

[code]
src_dir = "src"
command = "python3 train.py"
python_venv = "venv.zip"

[env]
OMP_NUM_THREADS = "1"
BATCH = 64
DEBUG = true
LR = 0.001

[data]
input_path = "hdfs:///in"
output_path = "hdfs:///out"

[tasks.worker]
instances = 4
memory = "4g"
vcores = 2
gpus = 1
command = "python3 train.py --worker"
node_label = "gpu"
env = { ROLE = "w" }

[tasks.ps]
instances = 2
memory = 1024

[tasks.chief]

[tensorboard]
enabled = false
log_dir = "hdfs:///logs"

[am]
memory = "1g"
vcores = 2
max_app_attempts = 2
reconnect_timeout = "90s"

[policy]
max_attempts = 3
allocation_timeout = "5m"
registration_timeout = 90
heartbeat_interval = "500ms"
heartbeat_timeout = "30s"
stop_grace = "10s"

[cluster]
backend = "yarn"
hadoop_conf = "hadoop"
install_dir = "/opt/tony"
staging_dir = "hdfs:///tmp/tony"
jobs_dir = "jobs"

[cluster.local]
memory = "16g"
vcores = 8
gpus = 2
)");
  EXPECT_EQ(spec.name, "mnist");
  EXPECT_EQ(spec.framework, "pytorch");
  EXPECT_EQ(spec.queue, "ml");
  EXPECT_EQ(spec.timeout_ms, 5400000);
  EXPECT_EQ(spec.tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(spec.src_dir, dir_ + "/src");
  EXPECT_EQ(spec.python_venv, dir_ + "/venv.zip");
  EXPECT_EQ(spec.env, (std::map<std::string, std::string>{{"OMP_NUM_THREADS", "1"},
                                                          {"BATCH", "64"},
                                                          {"DEBUG", "true"},
                                                          {"LR", "0.001"}}));
  EXPECT_EQ(spec.input_path, "hdfs:///in");
  EXPECT_EQ(spec.output_path, "hdfs:///out");
  ASSERT_EQ(spec.tasks.size(), 3u);
  EXPECT_EQ(spec.tasks[0].name, "chief");
  EXPECT_EQ(spec.tasks[1].name, "worker");
  EXPECT_EQ(spec.tasks[2].name, "ps");
  auto& w = task(spec, "worker");
  EXPECT_EQ(w.instances, 4);
  EXPECT_EQ(w.capability, (resource{4096, 2, 1}));
  EXPECT_EQ(w.command, "python3 train.py --worker");
  EXPECT_EQ(w.node_label, "gpu");
  EXPECT_EQ(w.env, (std::map<std::string, std::string>{{"ROLE", "w"}}));
  auto& ps = task(spec, "ps");
  EXPECT_EQ(ps.capability.memory_mb, 1024);
  EXPECT_EQ(ps.command, "python3 train.py");
  EXPECT_FALSE(ps.tracked);
  EXPECT_EQ(spec.tensorboard.log_dir, "hdfs:///logs");
  EXPECT_EQ(spec.am.capability, (resource{1024, 2, 0}));
  EXPECT_EQ(spec.am.max_app_attempts, 2);
  EXPECT_EQ(spec.am.reconnect_timeout_ms, 90000);
  EXPECT_EQ(spec.policy.max_attempts, 3);
  EXPECT_EQ(spec.policy.allocation_timeout_ms, 300000);
  EXPECT_EQ(spec.policy.registration_timeout_ms, 90000);
  EXPECT_EQ(spec.policy.heartbeat_interval_ms, 500);
  EXPECT_EQ(spec.policy.heartbeat_timeout_ms, 30000);
  EXPECT_EQ(spec.policy.stop_grace_ms, 10000);
  EXPECT_EQ(spec.cluster.backend, "yarn");
  EXPECT_EQ(spec.cluster.hadoop_conf, dir_ + "/hadoop");
  EXPECT_EQ(spec.cluster.install_dir, "/opt/tony");
  EXPECT_EQ(spec.cluster.staging_dir, "hdfs:///tmp/tony");
  EXPECT_EQ(spec.cluster.jobs_dir, dir_ + "/jobs");
  EXPECT_EQ(spec.cluster.local.memory_mb, 16384);
  EXPECT_EQ(spec.cluster.local.vcores, 8);
  EXPECT_EQ(spec.cluster.local.gpus, 2);
}

TEST_F(job_config, task_order_is_chief_master_worker_then_by_name) {
  auto spec = ok(R"(
[code]
command = "x"
[tasks.zeta]
[tasks.worker]
[tasks.alpha]
[tasks.master]
[tasks.chief]
[tasks.ps]
)");
  std::vector<std::string> names;
  std::vector<int32_t> priorities;
  for (auto& t : spec.tasks) {
    names.push_back(t.name);
    priorities.push_back(t.priority);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"chief", "master", "worker", "alpha", "ps",
                                             "zeta"}));
  EXPECT_EQ(priorities, (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST_F(job_config, tracked_and_sidecar_defaults_follow_the_type_name) {
  auto spec = ok(R"(
[code]
command = "x"
[tasks.worker]
[tasks.ps]
[tasks.tensorboard]
[tasks.evaluator]
)");
  EXPECT_TRUE(task(spec, "worker").tracked);
  EXPECT_FALSE(task(spec, "worker").sidecar);
  EXPECT_FALSE(task(spec, "ps").tracked);
  EXPECT_FALSE(task(spec, "ps").sidecar);
  EXPECT_FALSE(task(spec, "tensorboard").tracked);
  EXPECT_TRUE(task(spec, "tensorboard").sidecar);
  EXPECT_TRUE(task(spec, "evaluator").tracked);
  EXPECT_TRUE(spec.tensorboard.enabled);
}

TEST_F(job_config, explicit_tracked_and_sidecar_beat_the_defaults) {
  auto spec = ok(R"(
[code]
command = "x"
[tasks.worker]
[tasks.ps]
tracked = true
[tasks.tensorboard]
tracked = true
[tasks.monitor]
sidecar = true
)");
  EXPECT_TRUE(task(spec, "ps").tracked);
  EXPECT_TRUE(task(spec, "tensorboard").tracked);
  EXPECT_FALSE(task(spec, "tensorboard").sidecar);
  EXPECT_TRUE(task(spec, "monitor").sidecar);
  EXPECT_FALSE(task(spec, "monitor").tracked);
}

TEST_F(job_config, per_type_command_needs_no_default) {
  auto spec = ok(R"(
[tasks.worker]
command = "python3 w.py"
[tasks.ps]
command = "python3 ps.py"
)");
  EXPECT_EQ(spec.command, "");
  EXPECT_EQ(task(spec, "worker").command, "python3 w.py");
  EXPECT_EQ(task(spec, "ps").command, "python3 ps.py");
}

TEST_F(job_config, per_type_env_is_kept_apart_from_the_job_env) {
  auto spec = ok(R"(
[code]
command = "x"
[env]
A = "job"
[tasks.worker.env]
A = "worker"
B = "2"
)");
  EXPECT_EQ(spec.env, (std::map<std::string, std::string>{{"A", "job"}}));
  EXPECT_EQ(task(spec, "worker").env,
            (std::map<std::string, std::string>{{"A", "worker"}, {"B", "2"}}));
}

TEST_F(job_config, memory_accepts_every_unit_form) {
  auto spec = ok(R"(
[code]
command = "x"
[tasks.a]
memory = 3000
[tasks.b]
memory = "512m"
[tasks.c]
memory = "2G"
[tasks.d]
memory = "1048576k"
[tasks.e]
memory = "1t"
[tasks.f]
memory = "1536"
)");
  EXPECT_EQ(task(spec, "a").capability.memory_mb, 3000);
  EXPECT_EQ(task(spec, "b").capability.memory_mb, 512);
  EXPECT_EQ(task(spec, "c").capability.memory_mb, 2048);
  EXPECT_EQ(task(spec, "d").capability.memory_mb, 1024);
  EXPECT_EQ(task(spec, "e").capability.memory_mb, 1048576);
  EXPECT_EQ(task(spec, "f").capability.memory_mb, 1536);
}

TEST_F(job_config, durations_accept_every_form) {
  auto spec = ok(base(R"(
[policy]
allocation_timeout = "500ms"
registration_timeout = "90s"
heartbeat_interval = "2s"
heartbeat_timeout = "1m30s"
stop_grace = 0
)"));
  EXPECT_EQ(spec.policy.allocation_timeout_ms, 500);
  EXPECT_EQ(spec.policy.registration_timeout_ms, 90000);
  EXPECT_EQ(spec.policy.heartbeat_interval_ms, 2000);
  EXPECT_EQ(spec.policy.heartbeat_timeout_ms, 90000);
  EXPECT_EQ(spec.policy.stop_grace_ms, 0);
}

TEST_F(job_config, whole_job_timeout_forms) {
  EXPECT_EQ(ok(std::string{"timeout = \"2h\"\n"} + std::string{minimal}).timeout_ms,
            7200000);
  EXPECT_EQ(ok(std::string{"timeout = 90\n"} + std::string{minimal}).timeout_ms, 90000);
  EXPECT_EQ(ok(std::string{"timeout = \"1h30m\"\n"} + std::string{minimal}).timeout_ms,
            5400000);
}

TEST_F(job_config, tensorboard_enabled_adds_a_sidecar_task) {
  auto spec = ok(R"(
[code]
command = "x"
[tasks.worker]
[tensorboard]
enabled = true
log_dir = "/logs/it's"
)");
  auto* tb = spec.find("tensorboard");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(tb->instances, 1);
  EXPECT_TRUE(tb->sidecar);
  EXPECT_FALSE(tb->tracked);
  // TensorBoard behind the AM's token: the executor writes the guard.
  EXPECT_EQ(tb->command, "python3 \"$TONY_TENSORBOARD_GUARD\" --logdir '/logs/it'\\''s' "
                         "--host 0.0.0.0 --port \"$TONY_TASK_PORT\"");
  EXPECT_EQ(tb->priority, 2);
}

TEST_F(job_config, tensorboard_log_dir_defaults_to_the_output_path) {
  auto spec = ok(base("[data]\noutput_path = \"hdfs:///out\"\n[tensorboard]\nenabled = "
                      "true\n"));
  EXPECT_EQ(spec.tensorboard.log_dir, "hdfs:///out");
  ASSERT_NE(spec.find("tensorboard"), nullptr);
}

TEST_F(job_config, tensorboard_on_the_chief_adds_no_task) {
  auto spec =
      ok(base("[data]\noutput_path = \"/runs/a\"\n[tensorboard]\non = \"chief\"\n"));
  EXPECT_TRUE(spec.tensorboard.enabled) << "naming a place asks for TensorBoard";
  EXPECT_TRUE(spec.tensorboard.on_chief());
  EXPECT_EQ(spec.tensorboard.log_dir, "/runs/a");
  EXPECT_EQ(spec.find("tensorboard"), nullptr) << "the chief starts it";
  auto sidecar = ok(base("[tensorboard]\non = \"sidecar\"\nlog_dir = \"/l\"\n"));
  EXPECT_NE(sidecar.find("tensorboard"), nullptr);
  auto off = ok(base("[tensorboard]\non = \"chief\"\nenabled = false\n"));
  EXPECT_FALSE(off.tensorboard.on_chief());
}

TEST_F(job_config, tensorboard_on_must_be_a_known_place) {
  auto es = errors(base("[tensorboard]\non = \"chef\"\n"));
  ASSERT_EQ(es.size(), 1u);
  EXPECT_NE(
      es[0].find("'on' in [tensorboard] is \"chef\"; use \"sidecar\" (a task of its "
                 "own) or \"chief\" (the chief starts it on TB_PORT); did you mean "
                 "'chief'?"),
      std::string::npos)
      << es[0];
  es = errors(
      base("[tensorboard]\non = \"chief\"\n[tasks.tensorboard]\ncommand = \"x\"\n"));
  ASSERT_EQ(es.size(), 1u);
  EXPECT_NE(es[0].find("both ask for TensorBoard; keep one"), std::string::npos) << es[0];
}

TEST_F(job_config, load_job_reads_a_file_relative_to_its_directory) {
  mkdir("proj/src");
  auto path = write("proj/job.toml", "[code]\nsrc_dir = \"src\"\ncommand = \"x\"\n"
                                     "[tasks.worker]\n");
  auto r = load_job(path, {});
  ASSERT_TRUE(r.ok()) << to_string(r.error());
  EXPECT_EQ(r->src_dir, dir_ + "/proj/src");
  EXPECT_EQ(r->job_file, dir_ + "/proj/job.toml");
  EXPECT_EQ(r->name, "job");
}

TEST_F(job_config, src_dir_may_be_absolute) {
  mkdir("elsewhere");
  auto spec = ok("[code]\nsrc_dir = \"" + dir_ +
                 "/elsewhere\"\ncommand = \"x\"\n"
                 "[tasks.worker]\n");
  EXPECT_EQ(spec.src_dir, dir_ + "/elsewhere");
}

// -- invalid forms: one message each, with its place ----------------------------

TEST_F(job_config, empty_file) {
  EXPECT_EQ(error(""), "job.toml: the file is empty; a job needs at least [code] "
                       "command and one [tasks.<type>] table");
  EXPECT_EQ(error("# only a comment\n\n"),
            "job.toml: the file is empty; a job needs at least [code] command and one "
            "[tasks.<type>] table");
}

TEST_F(job_config, toml_syntax_error_has_its_position) {
  EXPECT_EQ(error("[code]\ncommand = \"x\n"),
            "job.toml:2:13: TOML syntax error: Error while parsing string: unescaped "
            "control characters other than TAB (U+0009) are explicitly prohibited");
  EXPECT_EQ(error("a = 1\na = 2\n"),
            "job.toml:2:5: TOML syntax error: Error while parsing key-value pair: cannot "
            "redefine existing integer 'a'");
}

TEST_F(job_config, nul_bytes_are_refused_with_a_clear_message) {
  std::string text = "[code]\ncommand = \"x\"\n";
  text += std::string("ab\0\x01\x02", 5);
  EXPECT_EQ(error(text), "job.toml:3:3: the file contains a NUL byte; is it a binary "
                         "file? A job file is UTF-8 TOML text");
}

TEST_F(job_config, invalid_utf8_is_refused_with_a_clear_message) {
  EXPECT_EQ(error("name = \"caf\xe9\"\n"),
            "job.toml:1:12: the file is not valid UTF-8 (byte 0xe9); a job file is "
            "UTF-8 TOML text");
  EXPECT_EQ(error("\xc0\xaf"), "job.toml:1:1: the file is not valid UTF-8 (byte 0xc0); "
                               "a job file is UTF-8 TOML text");
}

TEST_F(job_config, random_binary_does_not_crash) {
  std::string junk;
  uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245 + 12345;
    junk += static_cast<char>((x >> 16) & 0xff);
  }
  auto r = load(junk);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().size(), 1u);
}

TEST_F(job_config, printable_junk_gives_a_syntax_error) {
  auto msg = error("this is not toml at all\n");
  EXPECT_EQ(msg.rfind("job.toml:1:", 0), 0u) << msg;
  EXPECT_NE(msg.find("TOML syntax error"), std::string::npos) << msg;
}

TEST_F(job_config, oversized_file_is_refused) {
  std::string text(max_job_file_size + 1, '#');
  EXPECT_EQ(error(text), "job.toml: the file is larger than 1 MiB; a job file is a few "
                         "KiB of TOML text. Is this the right file?");
}

TEST_F(job_config, unknown_key_suggests_the_closest) {
  EXPECT_EQ(error(base("[tasks.ps]\ninstaces = 1\n")),
            "job.toml:7:1: unknown key 'instaces' in [tasks.ps]; did you mean "
            "'instances'?");
  EXPECT_EQ(error(std::string{"nmae = \"x\"\n"} + std::string{minimal}),
            "job.toml:1:1: unknown key 'nmae' at the top level; did you mean 'name'?");
  EXPECT_EQ(error(base("[task.ps]\n")),
            "job.toml:6:2: unknown key 'task' at the top level; did you mean 'tasks'?");
  EXPECT_EQ(error(base("[policy]\nheartbeat_intervall = \"2s\"\n")),
            "job.toml:7:1: unknown key 'heartbeat_intervall' in [policy]; did you mean "
            "'heartbeat_interval'?");
}

TEST_F(job_config, task_table_outside_tasks_gets_a_hint) {
  EXPECT_EQ(error(base("[evaluator]\ninstances = 1\n")),
            "job.toml:6:2: unknown key 'evaluator' at the top level; task types go in "
            "[tasks.evaluator]");
}

TEST_F(job_config, unknown_key_without_a_close_match_lists_the_known_ones) {
  EXPECT_EQ(error(base("[am]\ncolour = 1\n")),
            "job.toml:7:1: unknown key 'colour' in [am]; known keys: memory, vcores, "
            "max_app_attempts, reconnect_timeout");
}

TEST_F(job_config, wrong_types) {
  EXPECT_EQ(error(base("[tasks.ps]\ninstances = \"2\"\n")),
            "job.toml:7:13: 'instances' must be an integer, got string");
  EXPECT_EQ(error(base("[tasks.ps]\ntracked = \"no\"\n")),
            "job.toml:7:11: 'tracked' must be a boolean (true or false), got string");
  EXPECT_EQ(error(std::string{"name = 3\n"} + std::string{minimal}),
            "job.toml:1:8: 'name' must be a string, got integer");
  EXPECT_EQ(error(std::string{"tags = \"a\"\n"} + std::string{minimal}),
            "job.toml:1:8: 'tags' must be an array of strings, got string");
  EXPECT_EQ(error(std::string{"tags = [\"a\", 2]\n"} + std::string{minimal}),
            "job.toml:1:14: 'tags[1]' must be a string, got integer");
  EXPECT_EQ(
      error(base("[tasks.ps]\nmemory = 1.5\n")),
      "job.toml:7:10: 'memory' must be an integer (MiB) or a string like \"2g\", got "
      "float");
  EXPECT_EQ(error(base("[policy]\nstop_grace = 1.5\n")),
            "job.toml:7:14: 'stop_grace' must be an integer of seconds or a string like "
            "\"30m\", got float");
  EXPECT_EQ(error(std::string{"code = \"python3 x.py\"\n[tasks.worker]\n"}),
            "job.toml:1:8: 'code' must be a table, got string");
  EXPECT_EQ(
      error(base("[tasks]\nps = 1\n")),
      "job.toml:7:6: 'tasks.ps' must be a table, got integer; write [tasks.ps] with "
      "instances = ...");
  EXPECT_EQ(
      error(base("[env]\nLIST = [1]\n")),
      "job.toml:7:8: 'LIST' in [env] must be a string, number or boolean, got array");
}

TEST_F(job_config, instances_out_of_range) {
  EXPECT_EQ(error(base("[tasks.ps]\ninstances = 0\n")),
            "job.toml:7:13: 'instances' must be between 1 and 10000, got 0");
  EXPECT_EQ(error(base("[tasks.ps]\ninstances = -3\n")),
            "job.toml:7:13: 'instances' must be between 1 and 10000, got -3");
  EXPECT_EQ(error(base("[tasks.ps]\ninstances = 99999999999\n")),
            "job.toml:7:13: 'instances' must be between 1 and 10000, got 99999999999");
}

TEST_F(job_config, vcores_and_gpus_out_of_range) {
  EXPECT_EQ(error(base("[tasks.ps]\nvcores = 0\n")),
            "job.toml:7:10: 'vcores' must be between 1 and 1024, got 0");
  EXPECT_EQ(error(base("[tasks.ps]\ngpus = 65\n")),
            "job.toml:7:8: 'gpus' must be between 0 and 64, got 65");
}

TEST_F(job_config, unknown_framework_lists_the_valid_ones) {
  EXPECT_EQ(error(std::string{"framework = \"pytroch\"\n"} + std::string{minimal}),
            "job.toml:1:13: unknown framework 'pytroch'; use one of tensorflow, pytorch, "
            "horovod, standalone; did you mean 'pytorch'?");
  EXPECT_EQ(error(std::string{"framework = \"mxnet\"\n"} + std::string{minimal}),
            "job.toml:1:13: unknown framework 'mxnet'; use one of tensorflow, pytorch, "
            "horovod, standalone");
}

TEST_F(job_config, bad_memory_units) {
  EXPECT_EQ(
      error(base("[tasks.ps]\nmemory = \"2x\"\n")),
      "job.toml:7:10: 'memory' = \"2x\" is not a size; write MiB as an integer or a "
      "number with a k, m, g or t suffix, e.g. \"2g\"");
  EXPECT_EQ(error(base("[tasks.ps]\nmemory = \"1000k\"\n")),
            "job.toml:7:10: 'memory' = \"1000k\" is not a whole number of MiB");
  EXPECT_EQ(error(base("[tasks.ps]\nmemory = \"2t\"\n")),
            "job.toml:7:10: 'memory' must be at most 1t (1048576 MiB), got \"2t\"");
}

TEST_F(job_config, negative_and_zero_sizes) {
  EXPECT_EQ(error(base("[tasks.ps]\nmemory = -1\n")),
            "job.toml:7:10: 'memory' must be positive, got -1");
  EXPECT_EQ(error(base("[tasks.ps]\nmemory = \"-2g\"\n")),
            "job.toml:7:10: 'memory' must be positive, got \"-2g\"");
  EXPECT_EQ(error(base("[am]\nmemory = 0\n")),
            "job.toml:7:10: 'memory' must be positive, got 0");
}

TEST_F(job_config, bad_durations) {
  EXPECT_EQ(error(std::string{"timeout = \"5x\"\n"} + std::string{minimal}),
            "job.toml:1:11: 'timeout' = \"5x\" is not a duration; write e.g. \"90s\", "
            "\"30m\", \"2h\", \"1h30m\", \"500ms\" or an integer of seconds");
  EXPECT_EQ(error(std::string{"timeout = -5\n"} + std::string{minimal}),
            "job.toml:1:11: 'timeout' must not be negative, got -5");
  EXPECT_EQ(error(base("[policy]\nheartbeat_interval = \"0s\"\n")),
            "job.toml:7:22: 'heartbeat_interval' must be positive, got \"0s\"");
  EXPECT_EQ(error(std::string{"timeout = \"500d\"\n"} + std::string{minimal}),
            "job.toml:1:11: 'timeout' must be at most 400d, got \"500d\"");
}

TEST_F(job_config, heartbeat_timeout_must_exceed_the_interval) {
  EXPECT_EQ(error(base("[policy]\nheartbeat_interval = \"20s\"\n")),
            "job.toml:7:22: 'heartbeat_timeout' (10s) must be longer than "
            "'heartbeat_interval' (20s)");
}

TEST_F(job_config, missing_command) {
  EXPECT_EQ(error("[tasks.worker]\ninstances = 2\n"),
            "job.toml:1:1: [tasks.worker] has no command; set 'command' there or a "
            "default 'command' in [code]");
  EXPECT_EQ(error("[code]\ncommand = \"  \"\n[tasks.worker]\n"),
            "job.toml:2:11: 'command' in [code] must not be empty");
}

TEST_F(job_config, missing_command_is_reported_per_task_type) {
  auto es = errors("[tasks.worker]\n[tasks.ps]\ncommand = \"x\"\n[tasks.chief]\n");
  EXPECT_EQ(es,
            (std::vector<std::string>{
                "job.toml:1:1: [tasks.worker] has no command; set 'command' there or a "
                "default 'command' in [code]",
                "job.toml:4:1: [tasks.chief] has no command; set 'command' there or a "
                "default 'command' in [code]"}));
}

TEST_F(job_config, bad_task_type_names) {
  EXPECT_EQ(
      error(base("[tasks.Worker2]\n")),
      "job.toml:6:8: invalid task type name 'Worker2' in [tasks.Worker2]; use "
      "lower-case letters, digits, '_' and '-', starting with a letter (at most 64)");
  EXPECT_EQ(
      error(base("[tasks.\"9lives\"]\n")),
      "job.toml:6:8: invalid task type name '9lives' in [tasks.9lives]; use "
      "lower-case letters, digits, '_' and '-', starting with a letter (at most 64)");
}

TEST_F(job_config, task_type_names_that_collide_in_the_environment) {
  EXPECT_EQ(error(base("[tasks.a-b]\n[tasks.a_b]\n")),
            "job.toml:7:1: task types 'a-b' and 'a_b' would both export DTF_A_B_HOSTS; "
            "rename one");
}

TEST_F(job_config, no_task_types) {
  EXPECT_EQ(
      error("[code]\ncommand = \"x\"\n"),
      "job.toml: no task types; add a [tasks.<type>] table, e.g. [tasks.worker] with "
      "instances = 1");
  EXPECT_EQ(
      error("[code]\ncommand = \"x\"\n[tasks]\n"),
      "job.toml:3:1: no task types; add a [tasks.<type>] table, e.g. [tasks.worker] "
      "with instances = 1");
}

TEST_F(job_config, missing_src_dir) {
  EXPECT_EQ(error("[code]\nsrc_dir = \"nowhere\"\ncommand = \"x\"\n[tasks.worker]\n"),
            "job.toml:2:11: 'src_dir' \"nowhere\" does not exist (resolved to " + dir_ +
                "/nowhere)");
  write("file.txt", "");
  EXPECT_EQ(error("[code]\nsrc_dir = \"file.txt\"\ncommand = \"x\"\n[tasks.worker]\n"),
            "job.toml:2:11: 'src_dir' \"file.txt\" is not a directory (resolved to " +
                dir_ + "/file.txt)");
}

TEST_F(job_config, python_venv_must_be_an_existing_archive) {
  EXPECT_EQ(
      error("[code]\npython_venv = \"venv.zip\"\ncommand = \"x\"\n[tasks.worker]\n"),
      "job.toml:2:15: 'python_venv' \"venv.zip\" does not exist (resolved to " + dir_ +
          "/venv.zip)");
  write("venv.rar", "");
  EXPECT_EQ(
      error("[code]\npython_venv = \"venv.rar\"\ncommand = \"x\"\n[tasks.worker]\n"),
      "job.toml:2:15: 'python_venv' \"venv.rar\" must be a .zip, .tar.gz or .tgz "
      "archive");
}

TEST_F(job_config, security_reads_principal_keytab_and_file_systems) {
  write("keys/alice.keytab", "x");
  auto spec =
      ok(base("[security]\nprincipal = \"alice@EXAMPLE.COM\"\n"
              "keytab = \"keys/alice.keytab\"\n"
              "file_systems = [\"hdfs://nn2.example.com:8020\", \"hdfs://nn3/\"]\n"));
  EXPECT_EQ(spec.security.principal, "alice@EXAMPLE.COM");
  EXPECT_EQ(spec.security.keytab, dir_ + "/keys/alice.keytab");
  ASSERT_EQ(spec.security.file_systems.size(), 2u);
  EXPECT_EQ(spec.security.file_systems[0], "hdfs://nn2.example.com:8020");
  auto none = ok(base(""));
  EXPECT_TRUE(none.security.principal.empty());
  EXPECT_TRUE(none.security.keytab.empty());
  EXPECT_TRUE(none.security.file_systems.empty());
}

TEST_F(job_config, security_principal_must_be_a_kerberos_principal) {
  for (auto bad : {"alice@", "@EXAMPLE.COM", "a/b/c@R", "alice bob@R", "a@b@c", "/h@R"})
    EXPECT_NE(error(base(std::string{"[security]\nprincipal = \""} + bad + "\"\n"))
                  .find("'principal' must be a Kerberos principal"),
              std::string::npos)
        << bad;
  EXPECT_EQ(
      ok(base("[security]\nprincipal = \"rm/host.example.com@R\"\n")).security.principal,
      "rm/host.example.com@R");
  EXPECT_EQ(ok(base("[security]\nprincipal = \"alice\"\n")).security.principal, "alice");
}

TEST_F(job_config, security_keytab_must_be_a_readable_file_with_a_principal) {
  EXPECT_EQ(error(base("[security]\nprincipal = \"a@R\"\nkeytab = \"none.keytab\"\n")),
            "job.toml:8:10: 'keytab' \"none.keytab\" is not a file (resolved to " + dir_ +
                "/none.keytab)");
  write("a.keytab", "x");
  EXPECT_EQ(
      error(base("[security]\nkeytab = \"a.keytab\"\n")),
      "job.toml:7:10: 'keytab' needs 'principal' in [security]: the principal whose "
      "keys the keytab holds (klist -kt " +
          dir_ + "/a.keytab lists them)");
  EXPECT_NE(error(base("[security]\nprincipal = \"a@R\"\nkeytab = \"\"\n"))
                .find("'keytab' must not be empty"),
            std::string::npos);
}

TEST_F(job_config, security_ca_file_is_a_readable_file_resolved_against_job_toml) {
  write("tls/ca.pem", "x");
  EXPECT_EQ(ok(base("[security]\nca_file = \"tls/ca.pem\"\n")).security.ca_file,
            dir_ + "/tls/ca.pem");
  EXPECT_TRUE(ok(base("")).security.ca_file.empty());
  EXPECT_EQ(error(base("[security]\nca_file = \"none.pem\"\n")),
            "job.toml:7:11: 'ca_file' \"none.pem\" is not a file (resolved to " + dir_ +
                "/none.pem)");
  EXPECT_NE(
      error(base("[security]\nca_file = \"\"\n")).find("'ca_file' must not be empty"),
      std::string::npos);
}

TEST_F(job_config, security_view_and_modify_acls_are_hadoop_acls) {
  auto spec =
      ok(base("[security]\nview_acl = \"alice,bob ml\"\nmodify_acl = \" ops\"\n"));
  EXPECT_EQ(spec.security.view_acl, "alice,bob ml");
  EXPECT_EQ(spec.security.modify_acl, " ops");
  EXPECT_TRUE(ok(base("")).security.view_acl.empty());
  EXPECT_EQ(error(base("[security]\nview_acl = \"alice;x\"\n")),
            "job.toml:7:12: 'view_acl' is not a Hadoop ACL: 'alice;x' is not a user or "
            "group name (letters, digits and . _ - @ $ only)");
  EXPECT_NE(
      error(base("[security]\nmodify_acl = \"alice,*\"\n")).find("'*' stands alone"),
      std::string::npos);
}

TEST_F(job_config, security_file_systems_must_be_namenode_uris) {
  auto fs_error = [&](const std::string& uri) {
    return error(base("[security]\nfile_systems = [\"" + uri + "\"]\n"));
  };
  EXPECT_NE(fs_error("s3a://bucket").find("must be an hdfs://host:port URI"),
            std::string::npos);
  EXPECT_NE(fs_error("hdfs://nn:8020/user/x").find("must name a NameNode only"),
            std::string::npos);
  EXPECT_NE(fs_error("hdfs://:8020").find("has no host"), std::string::npos);
  EXPECT_NE(fs_error("hdfs://nn:99999").find("invalid port"), std::string::npos);
  EXPECT_NE(fs_error("hdfs://nn:").find("invalid port"), std::string::npos);
  EXPECT_NE(error(base("[security]\nfile_systems = [\"hdfs://nn:1\", \"hdfs://nn:1\"]\n"))
                .find("lists \"hdfs://nn:1\" twice"),
            std::string::npos);
  EXPECT_NE(error(base("[security]\nkeytabs = 1\n")).find("keytabs"), std::string::npos);
}

TEST_F(job_config, unknown_backend) {
  EXPECT_EQ(error(base("[cluster]\nbackend = \"yran\"\n")),
            "job.toml:7:11: unknown backend 'yran' in [cluster]; use one of local, yarn; "
            "did you mean 'yarn'?");
}

TEST_F(job_config, install_dir_must_be_absolute) {
  EXPECT_EQ(error(base("[cluster]\ninstall_dir = \"bin\"\n")),
            "job.toml:7:15: 'install_dir' must be an absolute path on the nodes, got "
            "\"bin\"");
}

TEST_F(job_config, bad_names_and_env_names) {
  EXPECT_EQ(error(std::string{"name = \"\"\n"} + std::string{minimal}),
            "job.toml:1:8: 'name' must not be empty");
  EXPECT_EQ(error(std::string{"name = \"a\\nb\"\n"} + std::string{minimal}),
            "job.toml:1:8: 'name' must be printable text, got \"a\\nb\"");
  EXPECT_EQ(
      error(base("[env]\n\"A-B\" = \"1\"\n")),
      "job.toml:7:1: invalid environment variable name 'A-B' in [env]; use letters, "
      "digits and '_', not starting with a digit");
  EXPECT_EQ(error(base("[env]\nA = \"x\\u0000y\"\n")),
            "job.toml:7:5: 'A' in [env] contains a NUL character");
}

TEST_F(job_config, sidecar_cannot_be_tracked) {
  EXPECT_EQ(
      error(base("[tasks.mon]\nsidecar = true\ntracked = true\n")),
      "job.toml:7:11: [tasks.mon] cannot be both a sidecar and tracked: the job would "
      "wait for a task whose failure it ignores; remove one of them");
}

TEST_F(job_config, a_job_needs_a_tracked_task) {
  EXPECT_EQ(error("[code]\ncommand = \"x\"\n[tasks.ps]\n"),
            "job.toml: no task type is tracked, so the job would succeed at once; set "
            "'tracked = true' on at least one [tasks.<type>]");
}

TEST_F(job_config, tensorflow_allows_one_chief) {
  EXPECT_EQ(
      error(base("[tasks.chief]\ninstances = 2\n")),
      "job.toml:7:13: TensorFlow allows one chief; 'instances' in [tasks.chief] must "
      "be 1, got 2");
  // Other frameworks have no such rule.
  ok(std::string{"framework = \"standalone\"\n"} +
     base("[tasks.chief]\ninstances = 2\n"));
  // Without 'instances', an elastic range's max says how many; that is
  // refused as elastic (a fuzzer found that the chief's check then pointed
  // at no key at all).
  auto es = errors(base("[tasks.chief]\nelastic = { min = 2, max = 4 }\n"));
  ASSERT_EQ(es.size(), 2u);
  EXPECT_NE(es[1].find("job.toml:7:11: 'elastic' in [tasks.chief] needs framework = "
                       "\"pytorch\""),
            std::string::npos)
      << es[1];
}

TEST_F(job_config, pytorch_needs_a_training_task_type) {
  EXPECT_EQ(
      error("framework = \"pytorch\"\n[code]\ncommand = \"x\"\n[tasks.ps]\ntracked = "
            "true\n"),
      "job.toml: framework 'pytorch' needs a task type that trains: chief, master, "
      "worker, or any type other than ps, tensorboard and evaluator");
}

TEST_F(job_config, tensorboard_needs_a_log_dir) {
  EXPECT_EQ(
      error(base("[tensorboard]\nenabled = true\n")),
      "job.toml:6:1: [tensorboard] enabled needs 'log_dir' (or [data] output_path) to "
      "know what to show");
}

TEST_F(job_config, too_many_tags) {
  EXPECT_EQ(
      error(std::string{"tags = [\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\","
                        "\"10\",\"11\"]\n"} +
            std::string{minimal}),
      "job.toml:1:8: 'tags' has 11 tags; YARN accepts at most 10");
}

TEST_F(job_config, every_error_is_reported_in_file_order) {
  auto es = errors(R"(framework = "tf"
[code]
command = "x"
[tasks.worker]
instances = 0
memory = "lots"
[tasks.ps]
gpu = 1
)");
  EXPECT_EQ(
      es, (std::vector<std::string>{
              "job.toml:1:13: unknown framework 'tf'; use one of tensorflow, pytorch, "
              "horovod, standalone",
              "job.toml:5:13: 'instances' must be between 1 and 10000, got 0",
              "job.toml:6:10: 'memory' = \"lots\" is not a size; write MiB as an integer "
              "or a number with a k, m, g or t suffix, e.g. \"2g\"",
              "job.toml:8:1: unknown key 'gpu' in [tasks.ps]; did you mean 'gpus'?"}));
}

TEST_F(job_config, error_list_is_capped) {
  std::string text{minimal};
  text += "[tasks.ps]\n";
  for (int i = 0; i < 30; ++i)
    text += "bad" + std::to_string(i) + " = 1\n";
  auto es = errors(text);
  ASSERT_EQ(es.size(), max_reported_errors + 1);
  EXPECT_EQ(es.back(), "... and 10 more errors");
}

TEST_F(job_config, load_job_names_the_file_as_given) {
  auto path = write("bad.toml", "[tasks.worker]\ninstances = \"x\"\n[code]\ncommand = "
                                "\"x\"\n");
  auto r = load_job(path, {});
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.error().size(), 1u);
  EXPECT_EQ(r.error()[0].to_string(),
            path + ":2:13: 'instances' must be an integer, got string");
}

TEST_F(job_config, load_job_reports_unreadable_files) {
  auto missing = dir_ + "/missing.toml";
  auto r = load_job(missing, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()[0].to_string(),
            missing + ": cannot read the file: No such file or directory");
  auto r2 = load_job(dir_, {});
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error()[0].to_string(),
            dir_ + ": is a directory; give the path of a job file (job.toml)");
}

// -- overrides ------------------------------------------------------------------

TEST_F(job_config, overrides_beat_the_file) {
  auto spec = ok(base("[cluster]\nbackend = \"local\"\n"),
                 {"tasks.worker.instances=4", "cluster.backend=yarn", "env.FOO=bar",
                  "tasks.worker.env.X=1", "name=\"quoted\"", "timeout=30m",
                  "tasks.worker.memory=4g", "tags=[\"x\", \"y\"]",
                  "code.command=python3 train.py --lr 0.1"});
  EXPECT_EQ(task(spec, "worker").instances, 4);
  EXPECT_EQ(spec.cluster.backend, "yarn");
  EXPECT_EQ(spec.env.at("FOO"), "bar");
  EXPECT_EQ(task(spec, "worker").env.at("X"), "1");
  EXPECT_EQ(spec.name, "quoted");
  EXPECT_EQ(spec.timeout_ms, 1800000);
  EXPECT_EQ(task(spec, "worker").capability.memory_mb, 4096);
  EXPECT_EQ(spec.tags, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(spec.command, "python3 train.py --lr 0.1");
  EXPECT_EQ(task(spec, "worker").command, "python3 train.py --lr 0.1");
}

TEST_F(job_config, overrides_parse_toml_values) {
  auto spec = ok(minimal, {"tasks.worker.tracked=true", "tasks.ps.tracked=false",
                           "policy.heartbeat_timeout=30", "env.S=\"4\""});
  EXPECT_TRUE(task(spec, "worker").tracked);
  EXPECT_FALSE(task(spec, "ps").tracked);
  EXPECT_EQ(spec.policy.heartbeat_timeout_ms, 30000);
  EXPECT_EQ(spec.env.at("S"), "4");
}

TEST_F(job_config, overrides_create_tables) {
  auto spec = ok(minimal, {"tasks.evaluator.instances=1", "cluster.local.vcores=4"});
  ASSERT_NE(spec.find("evaluator"), nullptr);
  EXPECT_EQ(task(spec, "evaluator").instances, 1);
  EXPECT_EQ(task(spec, "evaluator").command, "python3 train.py");
  EXPECT_EQ(spec.cluster.local.vcores, 4);
}

TEST_F(job_config, overrides_apply_in_order) {
  auto spec = ok(minimal, {"tasks.worker.instances=2", "tasks.worker.instances=3"});
  EXPECT_EQ(task(spec, "worker").instances, 3);
}

TEST_F(job_config, overrides_alone_can_make_a_job) {
  auto spec = ok("", {"code.command=run", "tasks.worker.instances=2"});
  EXPECT_EQ(task(spec, "worker").instances, 2);
}

TEST_F(job_config, override_with_wrong_type_names_the_override) {
  EXPECT_EQ(error(minimal, {"tasks.worker.instances=x"}),
            "--set tasks.worker.instances=x: 'instances' must be an integer, got string");
  EXPECT_EQ(error(minimal, {"name=true"}),
            "--set name=true: 'name' must be a string, got boolean");
}

TEST_F(job_config, override_with_unknown_key_names_the_override) {
  EXPECT_EQ(
      error(minimal, {"tasks.worker.instaces=4"}),
      "--set tasks.worker.instaces=4: unknown key 'instaces' in [tasks.worker]; did "
      "you mean 'instances'?");
}

TEST_F(job_config, override_without_equals_sign) {
  EXPECT_EQ(error(minimal, {"tasks.worker.instances"}),
            "--set tasks.worker.instances: expected KEY=VALUE, e.g. --set "
            "tasks.worker.instances=4");
  EXPECT_EQ(error(minimal, {"=4"}),
            "--set =4: expected KEY=VALUE, e.g. --set tasks.worker.instances=4");
}

TEST_F(job_config, override_with_a_bad_key_path) {
  EXPECT_EQ(error(minimal, {"tasks..worker=1"}),
            "--set tasks..worker=1: 'tasks..worker' is not a key path; use dotted names "
            "like tasks.worker.instances or env.MY_VAR");
}

TEST_F(job_config, override_through_a_value) {
  EXPECT_EQ(
      error(std::string{"name = \"n\"\n"} + std::string{minimal}, {"name.x=1"}),
      "--set name.x=1: cannot set a key inside 'name': it is a string, not a table");
}

TEST_F(job_config, override_through_an_array) {
  EXPECT_EQ(
      error(std::string{"tags = [\"a\"]\n"} + std::string{minimal}, {"tags.x=1"}),
      "--set tags.x=1: cannot set a key inside 'tags': it is an array, not a table");
}

TEST_F(job_config, override_cannot_smuggle_more_keys) {
  // A newline in VALUE would make a second key; the whole value is a string.
  auto spec = ok(minimal, {"env.A=1\nname = \"evil\""});
  EXPECT_EQ(spec.env.at("A"), "1\nname = \"evil\"");
  EXPECT_EQ(spec.name, "job");
}

TEST_F(job_config, file_errors_come_before_override_errors) {
  auto es = errors(base("[tasks.ps]\ninstances = 0\n"), {"tasks.worker.vcores=0"});
  EXPECT_EQ(es,
            (std::vector<std::string>{
                "job.toml:7:13: 'instances' must be between 1 and 10000, got 0",
                "--set tasks.worker.vcores=0: 'vcores' must be between 1 and 1024, got "
                "0"}));
}

TEST_F(job_config, override_errors_follow_the_command_line_order) {
  auto es = errors(minimal, {"tasks.worker.instances=x", "name=3"});
  EXPECT_EQ(es, (std::vector<std::string>{
                    "--set tasks.worker.instances=x: 'instances' must be an integer, got "
                    "string",
                    "--set name=3: 'name' must be a string, got integer"}));
}

TEST_F(job_config, config_error_renders_without_a_position) {
  EXPECT_EQ((config_error{"job.toml", 3, 0, "m"}.to_string()), "job.toml:3: m");
  EXPECT_EQ((config_error{"", 0, 0, "m"}.to_string()), "m");
  EXPECT_EQ(to_string(std::vector<config_error>{{"a", 1, 2, "x"}, {"b", 0, 0, "y"}}),
            "a:1:2: x\nb: y\n");
}

// -- robustness -------------------------------------------------------------------

TEST_F(job_config, mutated_files_never_crash_and_always_explain) {
  mkdir("src");
  const std::string valid = R"(name = "m"
framework = "pytorch"
timeout = "1h30m"
tags = ["a"]
[code]
src_dir = "src"
command = "python3 train.py"
[env]
A = "1"
[tasks.worker]
instances = 2
memory = "2g"
env = { B = 2 }
[tasks.ps]
tracked = false
[policy]
heartbeat_interval = "1s"
[cluster.local]
vcores = 4
)";
  ASSERT_TRUE(load(valid).ok());
  // Includes NUL and bytes that break UTF-8; the literal's size keeps the NUL.
  static constexpr char chars[] = "[]{}=\"'.,#\n 0123456789abcxyz-_\\\x00\xff\xc3";
  const std::string alphabet{chars, sizeof(chars) - 1};
  uint32_t x = 42;
  auto next = [&] {
    x = x * 1664525 + 1013904223;
    return x >> 8;
  };
  int failures = 0;
  for (int round = 0; round < 3000; ++round) {
    auto text = valid;
    for (int edits = 1 + next() % 4; edits > 0; --edits) {
      auto pos = next() % text.size();
      auto c = alphabet[next() % alphabet.size()];
      switch (next() % 3) {
      case 0:
        text[pos] = c;
        break;
      case 1:
        text.insert(text.begin() + pos, c);
        break;
      default:
        text.erase(pos, 1 + next() % 8);
      }
      if (text.empty())
        text = "x";
    }
    auto r = load(text, {"tasks.worker.instances=3"});
    if (!r.ok()) {
      ++failures;
      ASSERT_FALSE(r.error().empty());
      for (auto& e : r.error())
        ASSERT_FALSE(e.message.empty()) << text;
    }
  }
  // Most mutations break something; the test is that each one was explained.
  EXPECT_GT(failures, 1000);
}

// -- lifecycle policy (doc/lifecycle.md) ----------------------------------------------

TEST_F(job_config, restart_and_tolerance_default_to_none) {
  auto spec = ok(minimal);
  auto& w = task(spec, "worker");
  EXPECT_EQ(w.restart, restart_policy::never);
  EXPECT_EQ(w.max_restarts, 0);
  EXPECT_EQ(w.tolerated_failures, -1);
  EXPECT_FALSE(w.elastic());
  EXPECT_EQ(spec.policy.tolerated_failures, 0);
}

TEST_F(job_config, restart_on_failure_defaults_to_three_restarts) {
  auto spec = ok(R"(
[code]
command = "x"
[tasks.worker]
instances = 2
restart = "on-failure"
restart_backoff = "10s"
spec_signal = "SIGUSR1"
tolerated_failures = 1
[policy]
tolerated_failures = 2
)");
  auto& w = task(spec, "worker");
  EXPECT_EQ(w.restart, restart_policy::on_failure);
  EXPECT_EQ(w.max_restarts, 3);
  EXPECT_EQ(w.restart_backoff_ms, 10000);
  EXPECT_EQ(w.spec_signal, SIGUSR1);
  EXPECT_EQ(w.tolerated_failures, 1);
  EXPECT_EQ(spec.policy.tolerated_failures, 2);
}

TEST_F(job_config, restart_values_are_checked) {
  EXPECT_EQ(error("[code]\ncommand = \"x\"\n[tasks.worker]\nrestart = \"always\"\n"),
            "job.toml:4:11: 'restart' in [tasks.worker] must be \"never\" or "
            "\"on-failure\", got \"always\"");
  EXPECT_EQ(error("[code]\ncommand = \"x\"\n[tasks.worker]\nmax_restarts = 2\n"),
            "job.toml:4:16: 'max_restarts' in [tasks.worker] needs restart = "
            "\"on-failure\"");
  EXPECT_EQ(error("[code]\ncommand = \"x\"\n[tasks.worker]\nspec_signal = \"KILL\"\n"),
            "job.toml:4:15: 'spec_signal' in [tasks.worker] must be one of HUP, USR1, "
            "USR2, got \"KILL\"");
}

TEST_F(job_config, placement_and_max_per_node_are_read_and_checked) {
  auto spec = ok(R"([code]
command = "x"
[tasks.worker]
instances = 4
placement = "pack"
max_per_node = 2
[tasks.ps]
)");
  EXPECT_TRUE(task(spec, "worker").pack);
  EXPECT_EQ(task(spec, "worker").max_per_node, 2);
  EXPECT_FALSE(task(spec, "ps").pack); // spread by default
  EXPECT_EQ(task(spec, "ps").max_per_node, 0);
  EXPECT_EQ(
      error("[code]\ncommand = \"x\"\n[tasks.worker]\nplacement = \"packed\"\n"),
      "job.toml:4:13: 'placement' in [tasks.worker] must be \"spread\" (each node "
      "its share, the default) or \"pack\", got \"packed\"; did you mean \"pack\"?");
  EXPECT_EQ(error("[code]\ncommand = \"x\"\n[tasks.worker]\nmax_per_node = 0\n"),
            "job.toml:4:16: 'max_per_node' must be between 1 and 10000, got 0");
}

TEST_F(job_config, execution_timeout_limits_a_task_types_command) {
  auto spec = ok(R"(
[code]
command = "x"
[tasks.worker]
execution_timeout = "90m"
[tasks.ps]
)");
  EXPECT_EQ(task(spec, "worker").execution_timeout_ms, 90 * 60 * 1000);
  EXPECT_EQ(task(spec, "ps").execution_timeout_ms, 0); // no limit by default
  EXPECT_EQ(
      error("[code]\ncommand = \"x\"\n[tasks.worker]\nexecution_timeout = \"5 min\"\n"),
      "job.toml:4:21: 'execution_timeout' = \"5 min\" is not a duration; write e.g. "
      "\"90s\", \"30m\", \"2h\", \"1h30m\", \"500ms\" or an integer of seconds");
  EXPECT_EQ(error("[code]\ncommand = \"x\"\n[tasks.worker]\nexecution_timeout = -1\n"),
            "job.toml:4:21: 'execution_timeout' must not be negative, got -1");
}

TEST_F(job_config, a_fixed_pytorch_world_cannot_restart_one_rank) {
  auto e = error(R"(framework = "pytorch"
[code]
command = "x"
[tasks.worker]
instances = 2
restart = "on-failure"
)");
  EXPECT_NE(e.find("job.toml:6:11: [tasks.worker] cannot restart one task of a fixed "
                   "pytorch world"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("[policy] max_attempts"), std::string::npos) << e;
}

TEST_F(job_config, the_chief_is_never_restarted) {
  auto e = error(R"([code]
command = "x"
[tasks.chief]
restart = "on-failure"
[tasks.worker]
)");
  EXPECT_NE(e.find("[tasks.chief] is the job's chief, which is never restarted"),
            std::string::npos)
      << e;
}

TEST_F(job_config, an_elastic_type_gets_instances_restarts_and_a_rendezvous) {
  auto spec = ok(R"(framework = "pytorch"
[code]
command = "python3 train.py"
[tasks.worker]
elastic = { min = 2, max = 4 }
)");
  auto& w = task(spec, "worker");
  EXPECT_TRUE(w.elastic());
  EXPECT_EQ(w.elastic_min, 2);
  EXPECT_EQ(w.elastic_max, 4);
  EXPECT_EQ(w.instances, 4);
  EXPECT_EQ(w.restart, restart_policy::on_failure);
  EXPECT_EQ(w.max_restarts, 3);
  auto& r = task(spec, "rendezvous");
  EXPECT_EQ(r.instances, 1);
  EXPECT_FALSE(r.tracked);
  EXPECT_FALSE(r.sidecar);
  EXPECT_NE(r.command.find("TCPStore"), std::string::npos);
}

TEST_F(job_config, elastic_needs_pytorch_and_a_sane_range) {
  EXPECT_NE(error("[code]\ncommand = \"x\"\n[tasks.worker]\nelastic = { min = 1, max = 2 "
                  "}\n")
                .find("'elastic' in [tasks.worker] needs framework = \"pytorch\""),
            std::string::npos);
  EXPECT_NE(error("framework = \"pytorch\"\n[code]\ncommand = \"x\"\n[tasks.worker]\n"
                  "elastic = { min = 3, max = 2 }\n")
                .find("'min' (3) is larger than 'max' (2)"),
            std::string::npos);
  EXPECT_NE(error("framework = \"pytorch\"\n[code]\ncommand = \"x\"\n[tasks.worker]\n"
                  "instances = 5\nelastic = { min = 2, max = 4 }\n")
                .find("must be within its elastic min and max (2 to 4), got 5"),
            std::string::npos);
  EXPECT_NE(error("framework = \"pytorch\"\n[code]\ncommand = \"x\"\n[tasks.worker]\n"
                  "elastic = { min = 2 }\n")
                .find("needs both 'min' and 'max'"),
            std::string::npos);
}

TEST_F(job_config, an_elastic_world_is_one_type) {
  auto e = error(R"(framework = "pytorch"
[code]
command = "x"
[tasks.master]
[tasks.worker]
elastic = { min = 1, max = 2 }
)");
  EXPECT_NE(e.find("[tasks.master] would train beside the elastic world of "
                   "[tasks.worker]"),
            std::string::npos)
      << e;
}
