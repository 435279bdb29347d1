#include "config/task_env.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace tony;
using json = nlohmann::json;
using env_map = std::map<std::string, std::string>;

namespace {

task_env_input input(std::string framework, cluster_map cluster, std::string type,
                     int32_t index) {
  task_env_input in;
  in.framework = std::move(framework);
  in.app_id = "application_1700000000000_0001";
  in.task = task_id{std::move(type), index};
  in.attempt = 1;
  in.cluster = std::move(cluster);
  return in;
}

std::string get(const env_map& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? "<unset>" : it->second;
}

bool has(const env_map& env, const std::string& key) {
  return env.count(key) > 0;
}

const cluster_map ps_cluster = {
    {"chief", {"c0:2000"}},
    {"worker", {"w0:2001", "w1:2002"}},
    {"ps", {"p0:2003"}},
};

} // namespace

// -- TonY and YARN-DTF names: every framework ---------------------------------

TEST(task_env, worker_only_tony_and_dtf_names) {
  cluster_map cluster{{"worker", {"h1:1000", "h2:1001", "h3:1002"}}};
  auto env = render_task_env(input("standalone", cluster, "worker", 1));
  EXPECT_EQ(get(env, "JOB_NAME"), "worker");
  EXPECT_EQ(get(env, "TASK_INDEX"), "1");
  EXPECT_EQ(get(env, "TASK_NUM"), "3");
  EXPECT_EQ(get(env, "IS_CHIEF"), "false");
  EXPECT_EQ(json::parse(get(env, "CLUSTER_SPEC")),
            json({{"worker", {"h1:1000", "h2:1001", "h3:1002"}}}));
  EXPECT_EQ(get(env, "TONY_APP_ID"), "application_1700000000000_0001");
  EXPECT_EQ(get(env, "TONY_ATTEMPT"), "1");
  EXPECT_EQ(get(env, "TONY_TASK_ID"), "worker:1");
  EXPECT_EQ(get(env, "TONY_TASK_HOST"), "h2");
  EXPECT_EQ(get(env, "TONY_TASK_PORT"), "1001");
  EXPECT_EQ(get(env, "DTF_TASK_JOB_NAME"), "worker");
  EXPECT_EQ(get(env, "DTF_TASK_INDEX"), "1");
  EXPECT_EQ(get(env, "DTF_WORKER_HOSTS"), "h1:1000,h2:1001,h3:1002");
  EXPECT_FALSE(has(env, "DTF_INPUT_PATH"));
  EXPECT_FALSE(has(env, "TF_CONFIG")) << "standalone jobs get no TF_CONFIG";
  EXPECT_FALSE(has(env, "RANK"));
  EXPECT_FALSE(has(env, "HOROVOD_RANK"));
}

TEST(task_env, worker_zero_is_chief_without_a_chief_type) {
  cluster_map cluster{{"worker", {"h1:1", "h2:2"}}, {"ps", {"h3:3"}}};
  EXPECT_EQ(get(render_task_env(input("tensorflow", cluster, "worker", 0)), "IS_CHIEF"),
            "true");
  EXPECT_EQ(get(render_task_env(input("tensorflow", cluster, "worker", 1)), "IS_CHIEF"),
            "false");
  EXPECT_EQ(get(render_task_env(input("tensorflow", cluster, "ps", 0)), "IS_CHIEF"),
            "false");
}

TEST(task_env, the_chief_type_is_chief) {
  EXPECT_EQ(get(render_task_env(input("tensorflow", ps_cluster, "chief", 0)), "IS_CHIEF"),
            "true");
  EXPECT_EQ(
      get(render_task_env(input("tensorflow", ps_cluster, "worker", 0)), "IS_CHIEF"),
      "false");
}

TEST(task_env, dtf_hosts_for_every_type_and_data_paths) {
  auto in = input("tensorflow", ps_cluster, "ps", 0);
  in.input_path = "hdfs:///in";
  in.output_path = "hdfs:///out";
  auto env = render_task_env(in);
  EXPECT_EQ(get(env, "DTF_CHIEF_HOSTS"), "c0:2000");
  EXPECT_EQ(get(env, "DTF_WORKER_HOSTS"), "w0:2001,w1:2002");
  EXPECT_EQ(get(env, "DTF_PS_HOSTS"), "p0:2003");
  EXPECT_EQ(get(env, "DTF_INPUT_PATH"), "hdfs:///in");
  EXPECT_EQ(get(env, "DTF_OUTPUT_PATH"), "hdfs:///out");
}

TEST(task_env, names_with_dashes_become_underscores) {
  cluster_map cluster{{"worker", {"h:1"}}, {"data-loader", {"h:2", "h:3"}}};
  auto env = render_task_env(input("tensorflow", cluster, "data-loader", 1));
  EXPECT_EQ(get(env, "DTF_DATA_LOADER_HOSTS"), "h:2,h:3");
  EXPECT_EQ(get(env, "JOB_NAME"), "data-loader");
  EXPECT_EQ(get(env, "DTF_TASK_JOB_NAME"), "data-loader");
  auto tf = json::parse(get(env, "TF_CONFIG"));
  EXPECT_EQ(tf["task"]["type"], "data-loader");
  EXPECT_EQ(tf["cluster"]["data-loader"], json({"h:2", "h:3"}));
}

// -- TensorFlow ---------------------------------------------------------------

TEST(task_env, tf_config_for_chief_worker_ps) {
  auto env = render_task_env(input("tensorflow", ps_cluster, "worker", 1));
  auto tf = json::parse(get(env, "TF_CONFIG"));
  EXPECT_EQ(tf, json({{"cluster",
                       {{"chief", {"c0:2000"}},
                        {"worker", {"w0:2001", "w1:2002"}},
                        {"ps", {"p0:2003"}}}},
                      {"task", {{"type", "worker"}, {"index", 1}}}}));
  EXPECT_EQ(json::parse(get(env, "CLUSTER_SPEC")), json(ps_cluster));
}

TEST(task_env, tf_config_for_ps) {
  auto tf = json::parse(
      get(render_task_env(input("tensorflow", ps_cluster, "ps", 0)), "TF_CONFIG"));
  EXPECT_EQ(tf["task"], json({{"type", "ps"}, {"index", 0}}));
  EXPECT_EQ(tf["cluster"].size(), 3u);
}

TEST(task_env, evaluator_and_tensorboard_stay_out_of_the_tf_cluster) {
  auto cluster = ps_cluster;
  cluster["evaluator"] = {"e0:3000"};
  cluster["tensorboard"] = {"t0:3001"};
  auto worker = render_task_env(input("tensorflow", cluster, "worker", 0));
  auto tf = json::parse(get(worker, "TF_CONFIG"));
  EXPECT_FALSE(tf["cluster"].contains("evaluator"));
  EXPECT_FALSE(tf["cluster"].contains("tensorboard"));
  EXPECT_EQ(tf["cluster"].size(), 3u);
  // The evaluator learns the training cluster and its own role.
  auto evaluator = render_task_env(input("tensorflow", cluster, "evaluator", 0));
  auto etf = json::parse(get(evaluator, "TF_CONFIG"));
  EXPECT_EQ(etf["task"], json({{"type", "evaluator"}, {"index", 0}}));
  EXPECT_EQ(etf["cluster"], tf["cluster"]);
  EXPECT_EQ(get(evaluator, "IS_CHIEF"), "false");
  // TensorBoard gets no TF_CONFIG but the full CLUSTER_SPEC.
  auto tb = render_task_env(input("tensorflow", cluster, "tensorboard", 0));
  EXPECT_FALSE(has(tb, "TF_CONFIG"));
  EXPECT_EQ(json::parse(get(tb, "CLUSTER_SPEC")), json(cluster));
  EXPECT_EQ(get(tb, "TONY_TASK_PORT"), "3001");
}

TEST(task_env, tf_config_only_for_tensorflow) {
  for (auto fw : {"pytorch", "horovod", "standalone"})
    EXPECT_FALSE(has(render_task_env(input(fw, ps_cluster, "worker", 0)), "TF_CONFIG"))
        << fw;
}

// -- PyTorch ------------------------------------------------------------------

TEST(task_env, pytorch_with_a_chief_makes_it_rank_zero) {
  auto env = render_task_env(input("pytorch", ps_cluster, "worker", 1));
  EXPECT_EQ(get(env, "MASTER_ADDR"), "c0");
  EXPECT_EQ(get(env, "MASTER_PORT"), "2000");
  EXPECT_EQ(get(env, "INIT_METHOD"), "tcp://c0:2000");
  EXPECT_EQ(get(env, "RANK"), "2");
  EXPECT_EQ(get(env, "WORLD_SIZE"), "3");
  EXPECT_EQ(get(env, "WORLD"), "3");
  EXPECT_EQ(get(env, "LOCAL_RANK"), "0");
  EXPECT_EQ(get(env, "LOCAL_WORLD_SIZE"), "1");
  auto chief = render_task_env(input("pytorch", ps_cluster, "chief", 0));
  EXPECT_EQ(get(chief, "RANK"), "0");
  EXPECT_EQ(get(chief, "IS_CHIEF"), "true");
}

TEST(task_env, pytorch_without_a_chief_uses_worker_zero) {
  cluster_map cluster{{"worker", {"a:10", "b:11", "c:12"}}};
  auto env = render_task_env(input("pytorch", cluster, "worker", 2));
  EXPECT_EQ(get(env, "MASTER_ADDR"), "a");
  EXPECT_EQ(get(env, "MASTER_PORT"), "10");
  EXPECT_EQ(get(env, "RANK"), "2");
  EXPECT_EQ(get(env, "WORLD_SIZE"), "3");
}

TEST(task_env, pytorch_master_type_comes_before_workers) {
  cluster_map cluster{{"worker", {"a:10", "b:11"}}, {"master", {"m:9"}}};
  auto env = render_task_env(input("pytorch", cluster, "worker", 0));
  EXPECT_EQ(get(env, "MASTER_ADDR"), "m");
  EXPECT_EQ(get(env, "RANK"), "1");
  EXPECT_EQ(get(env, "WORLD_SIZE"), "3");
  EXPECT_EQ(get(render_task_env(input("pytorch", cluster, "master", 0)), "IS_CHIEF"),
            "true");
}

TEST(task_env, pytorch_tasks_outside_the_world_get_no_rank) {
  auto env = render_task_env(input("pytorch", ps_cluster, "ps", 0));
  EXPECT_FALSE(has(env, "RANK"));
  EXPECT_FALSE(has(env, "LOCAL_RANK"));
  EXPECT_EQ(get(env, "WORLD_SIZE"), "3");
  EXPECT_EQ(get(env, "MASTER_ADDR"), "c0");
}

TEST(task_env, pytorch_local_rank_counts_tasks_on_the_same_host) {
  cluster_map cluster{{"chief", {"h1:1"}},
                      {"worker", {"h1:2", "h2:3", "h1:4", "h2:5"}},
                      {"ps", {"h1:6"}}};
  auto rank_of = [&](std::string type, int32_t i) {
    auto env = render_task_env(input("pytorch", cluster, type, i));
    return get(env, "RANK") + "/" + get(env, "LOCAL_RANK") + "/" +
           get(env, "LOCAL_WORLD_SIZE");
  };
  EXPECT_EQ(rank_of("chief", 0), "0/0/3");
  EXPECT_EQ(rank_of("worker", 0), "1/1/3");
  EXPECT_EQ(rank_of("worker", 1), "2/0/2");
  EXPECT_EQ(rank_of("worker", 2), "3/2/3");
  EXPECT_EQ(rank_of("worker", 3), "4/1/2");
}

TEST(task_env, other_world_types_follow_by_name) {
  cluster_map cluster{{"worker", {"h:1"}},
                      {"zz", {"h:2"}},
                      {"aa", {"h:3"}},
                      {"evaluator", {"h:4"}},
                      {"tensorboard", {"h:5"}}};
  EXPECT_EQ(get(render_task_env(input("pytorch", cluster, "aa", 0)), "RANK"), "1");
  EXPECT_EQ(get(render_task_env(input("pytorch", cluster, "zz", 0)), "RANK"), "2");
  EXPECT_EQ(get(render_task_env(input("pytorch", cluster, "zz", 0)), "WORLD_SIZE"), "3");
  EXPECT_FALSE(has(render_task_env(input("pytorch", cluster, "evaluator", 0)), "RANK"));
}

TEST(task_env, ipv6_addresses_lose_their_brackets_where_a_host_is_expected) {
  cluster_map cluster{{"worker", {"[::1]:2000", "[::1]:2001"}}};
  auto env = render_task_env(input("pytorch", cluster, "worker", 1));
  EXPECT_EQ(get(env, "MASTER_ADDR"), "::1");
  EXPECT_EQ(get(env, "MASTER_PORT"), "2000");
  EXPECT_EQ(get(env, "INIT_METHOD"), "tcp://[::1]:2000");
  EXPECT_EQ(get(env, "TONY_TASK_HOST"), "::1");
  EXPECT_EQ(get(env, "TONY_TASK_PORT"), "2001");
  EXPECT_EQ(get(env, "LOCAL_RANK"), "1");
}

// -- Horovod ------------------------------------------------------------------

TEST(task_env, horovod_one_task_per_host) {
  cluster_map cluster{{"worker", {"a:1", "b:2", "c:3"}}};
  auto env = render_task_env(input("horovod", cluster, "worker", 1));
  EXPECT_EQ(get(env, "HOROVOD_CONTROLLER"), "gloo");
  EXPECT_EQ(get(env, "HOROVOD_CPU_OPERATIONS"), "gloo");
  EXPECT_EQ(get(env, "HOROVOD_GLOO_RENDEZVOUS_ADDR"), "a");
  EXPECT_EQ(get(env, "HOROVOD_GLOO_RENDEZVOUS_PORT"), "1");
  EXPECT_EQ(get(env, "HOROVOD_HOSTNAME"), "b");
  EXPECT_EQ(get(env, "HOROVOD_RANK"), "1");
  EXPECT_EQ(get(env, "HOROVOD_SIZE"), "3");
  EXPECT_EQ(get(env, "HOROVOD_LOCAL_RANK"), "0");
  EXPECT_EQ(get(env, "HOROVOD_LOCAL_SIZE"), "1");
  EXPECT_EQ(get(env, "HOROVOD_CROSS_RANK"), "1");
  EXPECT_EQ(get(env, "HOROVOD_CROSS_SIZE"), "3");
  EXPECT_FALSE(has(env, "RANK")) << "horovod jobs get horovod's names";
}

TEST(task_env, horovod_slots_match_horovods_host_assignment) {
  // Hosts a (2 tasks) and b (1 task), interleaved: horovod numbers ranks
  // host by host, so worker:2 on a is rank 1.
  cluster_map cluster{{"worker", {"a:1", "b:2", "a:3"}}};
  auto slot = [&](int32_t i) {
    auto env = render_task_env(input("horovod", cluster, "worker", i));
    return get(env, "HOROVOD_RANK") + " " + get(env, "HOROVOD_LOCAL_RANK") + "/" +
           get(env, "HOROVOD_LOCAL_SIZE") + " " + get(env, "HOROVOD_CROSS_RANK") + "/" +
           get(env, "HOROVOD_CROSS_SIZE");
  };
  EXPECT_EQ(slot(0), "0 0/2 0/2");
  EXPECT_EQ(slot(2), "1 1/2 0/1");
  EXPECT_EQ(slot(1), "2 0/1 1/2");
}

TEST(task_env, horovod_rendezvous_can_be_given) {
  cluster_map cluster{{"worker", {"a:1", "b:2"}}};
  auto in = input("horovod", cluster, "worker", 1);
  in.horovod_rendezvous = "am-host:7777";
  auto env = render_task_env(in);
  EXPECT_EQ(get(env, "HOROVOD_GLOO_RENDEZVOUS_ADDR"), "am-host");
  EXPECT_EQ(get(env, "HOROVOD_GLOO_RENDEZVOUS_PORT"), "7777");
}

TEST(task_env,
     horovod_rendezvous_token_rides_in_the_address_as_horovods_client_reads_it) {
  cluster_map cluster{{"worker", {"a:1", "b:2"}}};
  auto in = input("horovod", cluster, "worker", 1);
  in.horovod_rendezvous = "am-host:7777";
  in.horovod_token = "t0k3n";
  auto env = render_task_env(in);
  // Horovod builds "http://" + ADDR + ":" + PORT + "/" + scope + "/" + key
  // and cuts the host at the first '/': the token becomes the path's head.
  EXPECT_EQ(get(env, "HOROVOD_GLOO_RENDEZVOUS_ADDR"), "am-host:7777/t0k3n");
  EXPECT_EQ(get(env, "HOROVOD_GLOO_RENDEZVOUS_PORT"), "7777");
}

TEST(task_env, tb_port_only_for_the_task_that_starts_tensorboard) {
  auto in = input("tensorflow", ps_cluster, "chief", 0);
  EXPECT_FALSE(has(render_task_env(in), "TB_PORT"));
  in.tensorboard_port = 41234;
  EXPECT_EQ(get(render_task_env(in), "TB_PORT"), "41234");
}

TEST(task_env, the_tensorboard_token_comes_with_the_guard_program) {
  auto in = input("tensorflow", ps_cluster, "chief", 0);
  in.file_dir = "/work/c1";
  auto none = render_task_env_files(in);
  EXPECT_FALSE(has(none.vars, "TONY_TENSORBOARD_TOKEN"));
  EXPECT_FALSE(has(none.vars, "TONY_TENSORBOARD_GUARD"));
  EXPECT_EQ(none.files.count("/work/c1/tony_tensorboard.py"), 0u);
  in.tensorboard_token = "0123abcd";
  auto out = render_task_env_files(in);
  EXPECT_EQ(get(out.vars, "TONY_TENSORBOARD_TOKEN"), "0123abcd");
  EXPECT_EQ(get(out.vars, "TONY_TENSORBOARD_GUARD"), "/work/c1/tony_tensorboard.py");
  ASSERT_EQ(out.files.count("/work/c1/tony_tensorboard.py"), 1u);
  auto& program = out.files.at("/work/c1/tony_tensorboard.py");
  EXPECT_EQ(program, tensorboard_guard_program());
  // The header the AM sends, as WSGI names it.
  EXPECT_NE(program.find("HTTP_X_TONY_TENSORBOARD_TOKEN"), std::string::npos);
  EXPECT_EQ(std::string{tensorboard_token_header}, "X-Tony-TensorBoard-Token");
  // It is Python that compiles.
  auto path = std::filesystem::temp_directory_path() /
              ("tony-guard-" + std::to_string(::getpid()) + ".py");
  std::ofstream{path} << program;
  // compile() writes no .pyc, so nothing is left behind.
  auto compiled =
      std::system(("python3 -c 'import sys; compile(open(sys.argv[1]).read(), "
                   "sys.argv[1], \"exec\")' '" +
                   path.string() + "'")
                      .c_str());
  std::filesystem::remove(path);
  EXPECT_EQ(compiled, 0);
}

TEST(task_env, a_chief_that_starts_tensorboard_gets_the_guarded_command_first_on_path) {
  auto in = input("tensorflow", ps_cluster, "chief", 0);
  in.file_dir = "/work/c1";
  in.tensorboard_token = "0123abcd";
  auto sidecar = render_task_env_files(in); // no TB_PORT: the sidecar's way
  EXPECT_TRUE(sidecar.executables.empty());
  EXPECT_EQ(sidecar.path_prefix, "");
  in.tensorboard_port = 41234;
  auto chief = render_task_env_files(in);
  EXPECT_EQ(chief.path_prefix, "/work/c1/tony-bin");
  ASSERT_EQ(chief.executables.count("/work/c1/tony-bin/tensorboard"), 1u);
  EXPECT_EQ(chief.executables.at("/work/c1/tony-bin/tensorboard"),
            tensorboard_command_shim());
  EXPECT_EQ(get(chief.vars, "TONY_TENSORBOARD_GUARD"), "/work/c1/tony_tensorboard.py");
  // A TensorBoard the chief starts in its own Python: tony's sitecustomize.
  EXPECT_EQ(chief.python_path_prefix, "/work/c1/tony-py");
  ASSERT_EQ(chief.executables.count("/work/c1/tony-py/sitecustomize.py"), 1u);
  EXPECT_EQ(chief.executables.at("/work/c1/tony-py/sitecustomize.py"),
            tensorboard_site_hook());
  EXPECT_EQ(sidecar.python_path_prefix, "");
}

namespace {

// Runs the shell `command` in `dir`; its stdout and stderr, and exit status.
std::pair<std::string, int> run_in(const std::filesystem::path& dir,
                                   const std::string& command) {
  int status = std::system(
      ("cd '" + dir.string() + "' && " + command + " > out.txt 2>&1").c_str());
  std::ifstream in{dir / "out.txt"};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  return {text, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// Runs the shim in `dir` as `tensorboard --logdir L --port 5` with `path`
// (after the shim's own directory) as PATH.
std::pair<std::string, int> run_shim(const std::filesystem::path& dir,
                                     const std::string& path) {
  return run_in(dir, "PATH='" + (dir / "shim").string() + ":" + path +
                         "' TONY_TENSORBOARD_GUARD='" + (dir / "guard.py").string() +
                         "' tensorboard --logdir L --port 5");
}

void write_program(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream{path} << text;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

} // namespace

TEST(task_env, the_tensorboard_shim_runs_the_next_tensorboard_under_the_guard) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tony-shim-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  write_program(dir / "shim" / "tensorboard", tensorboard_command_shim());
  // The guard as a stand-in: says which Python ran it and with what.
  write_program(dir / "guard.py",
                "import sys\nprint('guard', sys.executable, sys.argv[1:])\n");
  auto python = std::string{"/usr/bin/python3"};
  // A console script as pip writes it, and a tensorboard of another kind.
  write_program(dir / "venv" / "tensorboard",
                "#!" + python + "\nimport sys\nprint('unguarded')\n");
  write_program(dir / "other" / "tensorboard", "#!/bin/sh\necho other \"$@\"\n");
  auto [guarded, code] = run_shim(dir, (dir / "venv").string() + ":/usr/bin:/bin");
  EXPECT_EQ(code, 0) << guarded;
  EXPECT_EQ(guarded, "guard " + python + " ['--logdir', 'L', '--port', '5']\n");
  auto [other, other_code] = run_shim(dir, (dir / "other").string() + ":/usr/bin:/bin");
  EXPECT_EQ(other_code, 0) << other;
  EXPECT_NE(other.find("is no Python console script; tony's guard covers its "
                       "TensorBoard only if it starts one in Python"),
            std::string::npos)
      << other;
  EXPECT_NE(other.find("other --logdir L --port 5"), std::string::npos) << other;
  auto [none, none_code] = run_shim(dir, "/nonexistent");
  EXPECT_EQ(none_code, 127) << none;
  EXPECT_NE(none.find("tony: no tensorboard command on PATH"), std::string::npos) << none;
  std::filesystem::remove_all(dir);
}

namespace {

// Runs `script` with python3 and the site hook in `dir`/hook first on
// PYTHONPATH, `dir`/lib (a stand-in tensorboard package, another
// sitecustomize) after it.
std::pair<std::string, int> run_with_site_hook(const std::filesystem::path& dir,
                                               const std::string& token,
                                               const std::string& script) {
  std::ofstream{dir / "script.py"} << script;
  return run_in(dir, "PYTHONDONTWRITEBYTECODE=1 PYTHONPATH='" + (dir / "hook").string() +
                         ":" + (dir / "lib").string() + "' TONY_TENSORBOARD_TOKEN='" +
                         token + "' python3 script.py");
}

} // namespace

TEST(task_env, a_tensorboard_made_in_the_chiefs_own_python_is_guarded) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tony-site-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  write_program(dir / "hook" / "sitecustomize.py", tensorboard_site_hook());
  // TensorBoard's shape: server_class(app, flags), defaulted in __init__.
  write_program(dir / "lib" / "tensorboard" / "__init__.py", "");
  write_program(dir / "lib" / "tensorboard" / "program.py",
                "def create_port_scanning_werkzeug_server(app, flags):\n"
                "    return app\n"
                "class TensorBoard:\n"
                "    def __init__(self, plugins=None, server_class=None):\n"
                "        self.server_class = server_class or "
                "create_port_scanning_werkzeug_server\n"
                "    def serve(self):\n"
                "        return self.server_class(lambda e, s: [b'board'], None)\n");
  // The sitecustomize the hook shadows still runs.
  write_program(dir / "lib" / "sitecustomize.py",
                "import builtins\nbuiltins.tony_next_ran = True\n");
  auto script = std::string{
      "import builtins\n"
      "print('next', getattr(builtins, 'tony_next_ran', False))\n"
      "from tensorboard import program\n"
      "def ask(token):\n"
      "    said = []\n"
      "    env = {'HTTP_X_TONY_TENSORBOARD_TOKEN': token} if token else {}\n"
      "    body = program.TensorBoard().serve()(env, lambda s, h: said.append(s))\n"
      "    print(said[0] if said else '200 OK', b''.join(body).decode().strip())\n"
      "ask(None)\n"
      "ask('wrong')\n"
      "ask('s3cret')\n"};
  auto [guarded, code] = run_with_site_hook(dir, "s3cret", script);
  EXPECT_EQ(code, 0) << guarded;
  EXPECT_EQ(guarded,
            "next True\n"
            "403 Forbidden tony: this TensorBoard answers only through tony's proxy: "
            "its job's tracking URL, or tony-history serve\n"
            "403 Forbidden tony: this TensorBoard answers only through tony's proxy: "
            "its job's tracking URL, or tony-history serve\n"
            "200 OK board\n");
  // Without a token (the guard program took it) the board is left as it is,
  // so the guard program's own guard is the only one.
  auto [open, open_code] = run_with_site_hook(dir, "", script);
  EXPECT_EQ(open_code, 0) << open;
  EXPECT_EQ(open, "next True\n200 OK board\n200 OK board\n200 OK board\n");
  std::filesystem::remove_all(dir);
}

TEST(task_env, tensorflows_roles_hold_their_port_and_bind_beside_it) {
  std::map<std::string, std::string> env;
  for (auto type : {"chief", "worker", "ps", "master"}) {
    auto hold = ports_to_hold("tensorflow", {type, 0}, "python3 train.py", env, false);
    EXPECT_EQ(hold.task_port, port_share::reuse_port) << type;
    EXPECT_EQ(hold.tensorboard_port, port_share::released) << type;
    EXPECT_EQ(get(hold.vars, "TF_GRPC_REUSE_PORT"), "true") << type;
  }
  // The evaluator serves nothing; Horovod's and a standalone job's servers
  // bind neither way.
  EXPECT_EQ(ports_to_hold("tensorflow", {"evaluator", 0}, "x", env, false).task_port,
            port_share::released);
  for (auto framework : {"horovod", "standalone"}) {
    auto hold = ports_to_hold(framework, {"worker", 0}, "x", env, false);
    EXPECT_EQ(hold.task_port, port_share::released) << framework;
    EXPECT_TRUE(hold.vars.empty()) << framework;
  }
  // The job says otherwise (TensorFlow's reading: "true" or "1", any case).
  for (auto [value, held] : std::vector<std::pair<std::string, bool>>{
           {"false", false}, {"0", false}, {"no", false}, {"TRUE", true}, {"1", true}}) {
    env["TF_GRPC_REUSE_PORT"] = value;
    auto hold = ports_to_hold("tensorflow", {"worker", 0}, "x", env, false);
    EXPECT_EQ(hold.task_port, held ? port_share::reuse_port : port_share::released)
        << value;
    EXPECT_TRUE(hold.vars.empty()) << value;
  }
  // A command in a container of its own binds in another namespace.
  EXPECT_EQ(ports_to_hold("tensorflow", {"worker", 0}, "x", {}, true).task_port,
            port_share::released);
}

TEST(task_env, pytorchs_world_and_rendezvous_hold_their_port_for_tcpstore) {
  // c10d's TCPStore (rank 0's MASTER_PORT, an elastic job's rendezvous)
  // binds with SO_REUSEADDR, so the executor holds those ports that way.
  for (auto type : {"chief", "master", "worker", "trainer", "rendezvous"}) {
    auto hold = ports_to_hold("pytorch", {type, 1}, "python3 train.py", {}, false);
    EXPECT_EQ(hold.task_port, port_share::reuse_addr) << type;
    EXPECT_TRUE(hold.vars.empty()) << type;
  }
  for (auto type : {"ps", "evaluator"})
    EXPECT_EQ(ports_to_hold("pytorch", {type, 0}, "x", {}, false).task_port,
              port_share::released)
        << type;
  EXPECT_EQ(ports_to_hold("pytorch", {"worker", 0}, "x", {}, true).task_port,
            port_share::released);
}

TEST(task_env, tensorboards_port_is_held_where_its_server_binds_beside_it) {
  std::map<std::string, std::string> env;
  auto sidecar =
      "python3 \"$TONY_TENSORBOARD_GUARD\" --logdir /l --port \"$TONY_TASK_PORT\"";
  EXPECT_EQ(
      ports_to_hold("tensorflow", {"tensorboard", 0}, sidecar, env, false).task_port,
      port_share::reuse_port);
  EXPECT_EQ(ports_to_hold("pytorch", {"tensorboard", 0}, sidecar, env, false).task_port,
            port_share::reuse_port);
  // The user's own TensorBoard, or one the chief starts: only when told.
  auto own = "tensorboard --logdir /l --port $TONY_TASK_PORT";
  EXPECT_EQ(ports_to_hold("tensorflow", {"tensorboard", 0}, own, env, false).task_port,
            port_share::released);
  EXPECT_EQ(ports_to_hold("tensorflow", {"chief", 0}, "x", env, false).tensorboard_port,
            port_share::released);
  env["TB_SERVER_REUSE_PORT"] = "true";
  EXPECT_EQ(ports_to_hold("tensorflow", {"tensorboard", 0}, own, env, false).task_port,
            port_share::reuse_port);
  EXPECT_EQ(ports_to_hold("tensorflow", {"chief", 0}, "x", env, false).tensorboard_port,
            port_share::reuse_port);
}

TEST(task_env, horovod_tasks_outside_the_world_get_no_horovod_names) {
  cluster_map cluster{{"worker", {"a:1"}}, {"tensorboard", {"a:2"}}};
  auto env = render_task_env(input("horovod", cluster, "tensorboard", 0));
  EXPECT_FALSE(has(env, "HOROVOD_RANK"));
  EXPECT_FALSE(has(env, "HOROVOD_GLOO_RENDEZVOUS_ADDR"));
  EXPECT_EQ(get(env, "JOB_NAME"), "tensorboard");
}

// -- size limits ----------------------------------------------------------------

TEST(task_env, huge_values_move_to_files) {
  cluster_map cluster;
  auto& workers = cluster["worker"];
  for (int i = 0; i < 10000; ++i)
    workers.push_back("node-" + std::to_string(i) +
                      ".example.com:" + std::to_string(20000 + i));
  auto in = input("tensorflow", cluster, "worker", 7);
  in.file_dir = "/work/container_1/tony";
  auto out = render_task_env_files(in);
  for (auto name : {"CLUSTER_SPEC", "TF_CONFIG", "DTF_WORKER_HOSTS"}) {
    std::string n{name};
    EXPECT_FALSE(has(out.vars, n)) << n;
    EXPECT_EQ(get(out.vars, n + "_FILE"), "/work/container_1/tony/" + n);
    ASSERT_EQ(out.files.count("/work/container_1/tony/" + n), 1u) << n;
  }
  auto spec = json::parse(out.files.at("/work/container_1/tony/CLUSTER_SPEC"));
  EXPECT_EQ(spec["worker"].size(), 10000u);
  auto tf = json::parse(out.files.at("/work/container_1/tony/TF_CONFIG"));
  EXPECT_EQ(tf["task"]["index"], 7);
  for (auto& [name, value] : out.vars)
    EXPECT_LE(value.size(), max_env_value_size) << name;
  // Small values stay in the environment.
  EXPECT_EQ(get(out.vars, "TASK_NUM"), "10000");
  EXPECT_EQ(get(out.vars, "TONY_TASK_PORT"), "20007");
}

TEST(task_env, the_limit_is_a_parameter) {
  cluster_map cluster{{"worker", {"a:1", "b:2"}}};
  auto out = render_task_env_files(input("standalone", cluster, "worker", 0), 10);
  EXPECT_EQ(get(out.vars, "CLUSTER_SPEC_FILE"), "CLUSTER_SPEC");
  EXPECT_EQ(out.files.at("CLUSTER_SPEC"), R"({"worker":["a:1","b:2"]})");
  EXPECT_EQ(get(out.vars, "DTF_WORKER_HOSTS"), "a:1,b:2");
  EXPECT_TRUE(out.files.count("DTF_WORKER_HOSTS") == 0);
}

TEST(task_env, small_jobs_need_no_files) {
  auto out = render_task_env_files(input("tensorflow", ps_cluster, "worker", 0));
  EXPECT_TRUE(out.files.empty());
  EXPECT_EQ(out.vars, render_task_env(input("tensorflow", ps_cluster, "worker", 0)));
}

// -- restarts, the spec file, elastic worlds ------------------------------------------

TEST(task_env, a_task_knows_its_restarts_and_its_spec_file) {
  auto in = input("tensorflow", ps_cluster, "worker", 1);
  in.restart = 2;
  in.spec_file = "/c/cluster_spec.json";
  auto env = render_task_env(in);
  EXPECT_EQ(get(env, "TONY_RESTART"), "2");
  EXPECT_EQ(get(env, "TONY_CLUSTER_SPEC_FILE"), "/c/cluster_spec.json");
  EXPECT_EQ(json::parse(cluster_spec_json(ps_cluster)),
            json::parse(get(env, "CLUSTER_SPEC")));
}

TEST(task_env, the_rendezvous_task_is_outside_the_world) {
  EXPECT_FALSE(is_world_type("rendezvous"));
  cluster_map cluster{{"worker", {"w0:1", "w1:2"}}, {"rendezvous", {"r0:3"}}};
  auto env = render_task_env(input("pytorch", cluster, "rendezvous", 0));
  EXPECT_FALSE(has(env, "RANK"));
  EXPECT_EQ(get(env, "WORLD_SIZE"), "2");
  EXPECT_EQ(world_chief({"rendezvous", "worker", "ps"}), (task_id{"worker", 0}));
  EXPECT_EQ(world_chief({"master", "worker"}), (task_id{"master", 0}));
  EXPECT_FALSE(world_chief({"ps", "evaluator"}));
}

TEST(task_env, an_elastic_task_gets_the_rendezvous_not_a_fixed_rank) {
  cluster_map cluster{{"worker", {"w0:1", "w1:2", "w2:3"}}, {"rendezvous", {"r0:9"}}};
  auto in = input("pytorch", cluster, "worker", 1);
  in.elastic_min = 2;
  in.elastic_max = 3;
  in.elastic_restarts = 6;
  auto env = render_task_env(in);
  EXPECT_FALSE(has(env, "RANK"));
  EXPECT_FALSE(has(env, "MASTER_ADDR"));
  EXPECT_EQ(get(env, "TONY_RDZV_ENDPOINT"), "r0:9");
  EXPECT_EQ(get(env, "TONY_ELASTIC_MIN_NODES"), "2");
  EXPECT_EQ(get(env, "TONY_ELASTIC_MAX_NODES"), "3");
  auto cmd = render_task_command(in, "python3 train.py --tag 'it''s'");
  EXPECT_EQ(cmd, "exec python3 -m torch.distributed.run --nnodes=2:3 --nproc_per_node=1 "
                 "--rdzv_backend=c10d --rdzv_endpoint=r0:9 "
                 "--rdzv_id=application_1700000000000_0001-1 "
                 "--rdzv_conf=is_host=0,last_call_timeout=5 --max_restarts=6 "
                 "--monitor_interval=1 --redirects=1:0 --tee=1:0 --no_python /bin/sh -c "
                 "'python3 train.py --tag '\\''it'\\'''\\''s'\\'''");
  in.elastic_max = 0;
  EXPECT_EQ(render_task_command(in, "python3 train.py"), "python3 train.py");
}

TEST(task_env, the_progress_file_is_exported_when_set) {
  task_env_input in;
  in.framework = "tensorflow";
  in.task = {"worker", 0};
  in.cluster = {{"worker", {"h0:1"}}};
  EXPECT_EQ(render_task_env(in).count("TONY_PROGRESS_FILE"), 0u);
  in.progress_file = "/c/tony_progress";
  EXPECT_EQ(render_task_env(in).at("TONY_PROGRESS_FILE"), "/c/tony_progress");
}

TEST(task_env, a_progress_file_holds_a_number_from_zero_to_one) {
  EXPECT_EQ(parse_progress("0.25"), 0.25f);
  EXPECT_EQ(parse_progress("  0.5\n"), 0.5f);
  EXPECT_EQ(parse_progress("1"), 1.0f);
  EXPECT_EQ(parse_progress("2.5e-1"), 0.25f);
  EXPECT_EQ(parse_progress("3"), 1.0f);  // above 1: done
  EXPECT_EQ(parse_progress("-1"), 0.0f); // below 0: nothing yet
  for (auto bad :
       {"", " \n", "0.", "1e", "1e-", "abc", "0.5 epochs", "nan", "inf", "0x1"})
    EXPECT_FALSE(parse_progress(bad).has_value()) << "'" << bad << "'";
}
