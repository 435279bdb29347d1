// TonY's command line and tony.xml translated into a job (compat/tony_cli.hpp).

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "compat/tony_cli.hpp"
#include "config/disk_probe.hpp"
#include "config/job_config.hpp"

using namespace tony;
namespace fs = std::filesystem;

namespace {

class tony_cli : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tony-compat-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ::unsetenv("TONY_CONF_DIR");
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void write(const std::string& name, const std::string& text = "x") {
    auto path = fs::path{dir_} / name;
    fs::create_directories(path.parent_path());
    std::ofstream{path} << text;
  }

  static std::string xml(const std::vector<std::pair<std::string, std::string>>& props) {
    std::string out = "<configuration>\n";
    for (auto& [k, v] : props)
      out += "  <property>\n    <name>" + k + "</name>\n    <value>" + v +
             "</value>\n  </property>\n";
    return out + "</configuration>\n";
  }

  job_draft draft(const tony_cli_args& args) { return translate_tony(args, dir_); }

  job_spec load(const tony_cli_args& args) {
    auto d = draft(args);
    EXPECT_TRUE(d.errors.empty()) << to_string(d.errors);
    auto r = load_job_text_from("", "TonY job", dir_, d.overrides, disk_probe{});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : to_string(r.error()));
    return r.ok() ? std::move(r).value() : job_spec{};
  }

  std::string errors(const tony_cli_args& args) { return to_string(draft(args).errors); }

  // TonY's README: tony.xml, the model code in src/, a zipped venv.
  tony_cli_args readme() {
    write("tony/tony.xml", xml({{"tony.worker.instances", "4"},
                                {"tony.worker.memory", "4g"},
                                {"tony.worker.gpus", "1"},
                                {"tony.ps.memory", "3g"}}));
    write("src/models/mnist_distributed.py");
    write("my-venv.zip");
    tony_cli_args a;
    a.conf_file = "tony/tony.xml";
    a.executes = "src/models/mnist_distributed.py";
    a.task_params = "--input_dir /path/to/hdfs/input --steps 2500";
    a.python_venv = "my-venv.zip";
    a.python_binary_path = "Python/bin/python";
    a.src_dir = "src";
    a.shell_env = {"LD_LIBRARY_PATH=/usr/java/latest/jre/lib/amd64/server"};
    return a;
  }

  std::string dir_;
};

bool has_note(const job_draft& d, const std::string& part) {
  for (auto& n : d.notes)
    if (n.find(part) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST_F(tony_cli, the_readme_example_becomes_a_job) {
  auto spec = load(readme());
  EXPECT_EQ(spec.name, "TonyApplication");
  EXPECT_EQ(spec.framework, "tensorflow");
  ASSERT_EQ(spec.tasks.size(), 1u)
      << "tony.ps.* without instances runs no ps, as in TonY";
  auto& w = spec.tasks[0];
  EXPECT_EQ(w.name, "worker");
  EXPECT_EQ(w.instances, 4);
  EXPECT_EQ(w.capability, (resource{4096, 1, 1}));
  EXPECT_EQ(
      spec.command,
      "python models/mnist_distributed.py --input_dir /path/to/hdfs/input --steps 2500");
  EXPECT_EQ(spec.src_dir, dir_ + "/src");
  EXPECT_EQ(spec.python_venv, dir_ + "/my-venv.zip");
  EXPECT_EQ(spec.python_binary_path, "Python/bin/python");
  EXPECT_EQ(spec.env.at("LD_LIBRARY_PATH"), "/usr/java/latest/jre/lib/amd64/server");
  auto d = draft(readme());
  EXPECT_TRUE(has_note(d, "tony.ps.* ignored: there is no tony.ps.instances"))
      << d.notes[0];
  EXPECT_TRUE(has_note(d, "fail-on-worker-failure-enabled=true"));
}

TEST_F(tony_cli, conf_items_beat_the_file) {
  auto a = readme();
  a.conf = {"tony.ps.instances=2", "tony.worker.instances=2"};
  auto spec = load(a);
  ASSERT_NE(spec.find("ps"), nullptr);
  EXPECT_EQ(spec.find("ps")->instances, 2);
  EXPECT_EQ(spec.find("ps")->capability, (resource{3072, 1, 0}));
  EXPECT_EQ(spec.find("worker")->instances, 2);
  EXPECT_EQ(spec.find("worker")->capability.memory_mb, 4096);
}

TEST_F(tony_cli, single_and_double_dashes_are_one) {
  auto args = normalize_tony_dashes({"-executes", "a.py", "--task_params", "-x",
                                     "-conf=tony.a=1", "-q", "-python_venv=v"});
  EXPECT_EQ(args, (std::vector<std::string>{"--executes", "a.py", "--task_params", "-x",
                                            "--conf=tony.a=1", "-q", "--python_venv=v"}));
}

TEST_F(tony_cli, keys_map_onto_the_job_model) {
  write("tony.xml", xml({{"tony.application.name", "mnist"},
                         {"tony.yarn.queue", "ml"},
                         {"tony.application.tags", "a, b"},
                         {"tony.application.timeout", "60000"},
                         {"tony.application.framework", "PyTorch"},
                         {"tony.application.node-label", "gpu"},
                         {"tony.am.memory", "1g"},
                         {"tony.am.retry-count", "1"},
                         {"tony.task.heartbeat-interval-ms", "2000"},
                         {"tony.task.max-missed-heartbeats", "5"},
                         {"tony.container.allocation.timeout", "-1"},
                         {"tony.containers.command", "python3 train.py"},
                         {"tony.execution.envs", "A=1,B=2"},
                         {"tony.worker.instances", "2"},
                         {"tony.worker.node-label", "big"},
                         {"tony.evaluator.instances", "1"},
                         {"tony.evaluator.command", "python3 eval.py"},
                         {"tony.application.untracked.jobtypes", "ps,evaluator"},
                         {"tony.application.fail-on-worker-failure-enabled", "true"}}));
  tony_cli_args a;
  a.src_dir = ".";
  a.conf = {"tony.history.location=/th"};
  auto spec = load(a);
  EXPECT_EQ(spec.name, "mnist");
  EXPECT_EQ(spec.queue, "ml");
  EXPECT_EQ(spec.tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(spec.timeout_ms, 60000);
  EXPECT_EQ(spec.framework, "pytorch");
  EXPECT_EQ(spec.node_label, "gpu");
  EXPECT_EQ(spec.am.capability.memory_mb, 1024);
  EXPECT_EQ(spec.am.max_app_attempts, 2);
  EXPECT_EQ(spec.policy.heartbeat_interval_ms, 2000);
  EXPECT_EQ(spec.policy.heartbeat_timeout_ms, 10000);
  EXPECT_EQ(spec.policy.allocation_timeout_ms, 0);
  EXPECT_EQ(spec.env, (std::map<std::string, std::string>{{"A", "1"}, {"B", "2"}}));
  EXPECT_EQ(spec.find("worker")->node_label, "big");
  EXPECT_TRUE(spec.find("worker")->tracked);
  EXPECT_FALSE(spec.find("evaluator")->tracked);
  EXPECT_EQ(spec.find("evaluator")->command, "python3 eval.py");
  auto d = draft(a);
  EXPECT_TRUE(has_note(d, "read ./tony.xml"));
  EXPECT_TRUE(has_note(d, "--conf tony.history.location=/th: ignored"));
  EXPECT_TRUE(has_note(d, "max_app_attempts = 2"));
}

TEST_F(tony_cli, an_unknown_key_names_its_place_and_the_closest_key) {
  write("tony.xml", xml({{"tony.worker.instances", "2"}, {"tony.worker.memroy", "4g"}}));
  tony_cli_args a;
  a.conf_file = "tony.xml";
  a.executes = "train.py";
  a.conf = {"tony.aplication.name=x"};
  write("train.py");
  EXPECT_EQ(
      errors(a),
      "--conf tony.aplication.name=x: unknown TonY key 'tony.aplication.name'; did "
      "you mean 'tony.application.name'?\n"
      "tony.xml:6:3: tony.worker.memroy=4g: unknown TonY key 'tony.worker.memroy'; did "
      "you mean 'tony.worker.memory'?\n");
}

TEST_F(tony_cli, malformed_xml_names_file_and_line) {
  write("bad.xml",
        "<configuration>\n  <property>\n    <name>tony.worker.instances</name>\n"
        "    <value>2</value>\n  </propery>\n</configuration>\n");
  tony_cli_args a;
  a.conf_file = "bad.xml";
  auto e = errors(a);
  EXPECT_EQ(e.rfind("bad.xml:5:", 0), 0u) << e;
  EXPECT_NE(e.find("malformed XML"), std::string::npos) << e;
}

TEST_F(tony_cli, values_are_checked_where_they_were_written) {
  tony_cli_args a;
  a.executes = "train.py";
  write("train.py");
  a.conf = {"tony.worker.instances=2", "tony.worker.vcores=many"};
  auto d = draft(a);
  ASSERT_TRUE(d.errors.empty()) << to_string(d.errors);
  auto r = load_job_text_from("", "TonY job", dir_, d.overrides, disk_probe{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(to_string(r.error()),
            "--conf tony.worker.vcores=many: 'vcores' must be an integer, got string\n");
}

TEST_F(tony_cli, executes_without_src_dir_is_shipped_alone) {
  write("job/train.py");
  tony_cli_args a;
  a.executes = "job/train.py";
  a.conf = {"tony.worker.instances=1"};
  auto spec = load(a);
  EXPECT_EQ(spec.src_dir, "");
  EXPECT_EQ(spec.command, "python3 train.py");
  EXPECT_EQ(spec.files,
            (std::vector<shipped_file>{{dir_ + "/job/train.py", "train.py", false}}));
  a.executes = "nowhere.py";
  EXPECT_NE(errors(a).find("--executes nowhere.py: does not exist"), std::string::npos);
}

TEST_F(tony_cli, resources_keys_ship_files_and_archives) {
  write("v.txt");
  write("d.zip");
  tony_cli_args a;
  a.executes = "v.txt";
  a.src_dir = ".";
  a.conf = {"tony.worker.instances=1",
            "tony.containers.resources=v.txt::vocab,hdfs:///m/model.tgz#archive",
            "tony.containers.resources=d.zip#archive",
            "tony.worker.resources=hdfs://nn:8020/w.cfg"};
  auto spec = load(a);
  EXPECT_EQ(spec.files,
            (std::vector<shipped_file>{{dir_ + "/v.txt", "vocab", false},
                                       {"hdfs:///m/model.tgz", "model.tgz", true},
                                       {dir_ + "/d.zip", "d.zip", true}}));
  EXPECT_EQ(spec.find("worker")->files,
            (std::vector<shipped_file>{{"hdfs://nn:8020/w.cfg", "w.cfg", false}}));
}

TEST_F(tony_cli, features_tony_lacks_are_refused_by_name) {
  tony_cli_args a;
  a.executes = "t.py";
  write("t.py");
  a.conf = {"tony.worker.instances=3", "tony.application.distributed-mode=FCFS",
            "tony.worker.depends-on=ps", "tony.application.framework=mxnet"};
  auto e = errors(a);
  EXPECT_NE(
      e.find("--conf tony.application.distributed-mode=FCFS: starting tasks as they "
             "come (FCFS) instead of as a gang is not supported yet"),
      std::string::npos)
      << e;
  EXPECT_NE(
      e.find("--conf tony.worker.depends-on=ps: starting a task type after another is "
             "not supported yet"),
      std::string::npos);
  EXPECT_NE(e.find("MXNet is not supported yet"), std::string::npos);
}

TEST_F(tony_cli, tolerated_failures_and_docker_reach_the_job) {
  tony_cli_args a;
  a.executes = "t.py";
  write("t.py");
  a.conf = {
      "tony.worker.instances=3", "tony.application.fail-on-worker-failure-enabled=false",
      "tony.docker.enabled=true", "tony.docker.containers.image=tensorflow/tensorflow",
      "tony.docker.containers.mount=/etc/passwd:/etc/passwd:ro,/data:/data:rw"};
  auto spec = load(a);
  EXPECT_EQ(spec.policy.tolerated_failures, 2);
  EXPECT_EQ(spec.docker_image, "tensorflow/tensorflow");
  EXPECT_EQ(spec.docker_mounts,
            (std::vector<std::string>{"/etc/passwd:/etc/passwd:ro", "/data:/data:rw"}));
  EXPECT_TRUE(unsupported_features(spec).empty()) << "both run (doc/docker.md)";
}

TEST_F(tony_cli, the_chief_gets_tb_port_unless_tonys_sidecar_is_asked_for) {
  tony_cli_args a;
  a.executes = "t.py";
  write("t.py");
  a.conf = {"tony.worker.instances=2"};
  auto spec = load(a);
  EXPECT_TRUE(spec.tensorboard.on_chief()) << "TonY's chief gets TB_PORT";
  EXPECT_EQ(spec.find("tensorboard"), nullptr);
  EXPECT_TRUE(has_note(draft(a), "gets TB_PORT"));
  a.sidecar_tensorboard_log_dir = "/logs";
  spec = load(a);
  EXPECT_FALSE(spec.tensorboard.on_chief());
  EXPECT_NE(spec.find("tensorboard"), nullptr) << "the sidecar";
}

TEST_F(tony_cli, an_invalid_docker_image_is_an_error_at_its_key) {
  tony_cli_args a;
  a.executes = "t.py";
  write("t.py");
  a.conf = {"tony.worker.instances=1", "tony.docker.enabled=true",
            "tony.docker.worker.image=Not Valid"};
  auto d = draft(a);
  auto r = load_job_text_from("", "TonY job", dir_, d.overrides, disk_probe{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      to_string(r.error()).rfind("--conf tony.docker.worker.image=Not Valid: "
                                 "'docker_image' \"Not Valid\" is not a Docker image",
                                 0),
      0u)
      << to_string(r.error());
}

TEST_F(tony_cli, a_job_needs_types_and_a_command) {
  tony_cli_args a;
  a.src_dir = ".";
  EXPECT_NE(errors(a).find("no task type: set the number of tasks"), std::string::npos);
  a.conf = {"tony.worker.instances=1"};
  EXPECT_NE(errors(a).find("no command for the worker tasks"), std::string::npos);
}

// -- TonY 0.4.8 to 0.5.x ---------------------------------------------------------------

TEST_F(tony_cli, the_timeouts_of_tony_0_5_map_onto_the_job) {
  write("tony.xml", xml({{"tony.worker.instances", "2"},
                         {"tony.ps.instances", "1"},
                         {"tony.container.registration.timeout", "300000"},
                         {"tony.task.executor.execution-timeout-ms", "2000"},
                         {"tony.task.executor.registry-timeout-sec", "0"},
                         {"tony.am.startup-timeout", "0"}}));
  tony_cli_args a;
  a.executes = "train.py";
  write("train.py");
  auto spec = load(a);
  EXPECT_EQ(spec.policy.registration_timeout_ms, 300000);
  EXPECT_EQ(spec.find("worker")->execution_timeout_ms, 2000);
  EXPECT_EQ(spec.find("ps")->execution_timeout_ms, 2000) << "TonY's executors all";
  // Negative: no limit, as in TonY.
  a.conf = {"tony.container.registration.timeout=-1",
            "tony.task.executor.execution-timeout-ms=-1"};
  spec = load(a);
  EXPECT_EQ(spec.policy.registration_timeout_ms, 0);
  EXPECT_EQ(spec.find("worker")->execution_timeout_ms, 0);
}

TEST_F(tony_cli, the_executors_registry_timeout_bounds_the_registration) {
  tony_cli_args a;
  a.executes = "train.py";
  write("train.py");
  a.conf = {"tony.worker.instances=1", "tony.task.executor.registry-timeout-sec=90"};
  EXPECT_EQ(load(a).policy.registration_timeout_ms, 90000);
  EXPECT_TRUE(has_note(draft(a), "[policy] registration_timeout = \"1m30s\""));
  // The shorter of the two applies.
  a.conf.push_back("tony.container.registration.timeout=60000");
  EXPECT_EQ(load(a).policy.registration_timeout_ms, 60000);
  EXPECT_TRUE(has_note(draft(a), "tony.task.executor.registry-timeout-sec=90: has no "
                                 "effect: tony.container.registration.timeout is "
                                 "shorter"));
  a.conf.back() = "tony.container.registration.timeout=600000";
  EXPECT_EQ(load(a).policy.registration_timeout_ms, 90000);
  a.conf.back() = "tony.task.executor.registry-timeout-sec=soon";
  EXPECT_EQ(errors(a), "--conf tony.task.executor.registry-timeout-sec=soon: must be a "
                       "number of seconds\n");
}

TEST_F(tony_cli, an_am_startup_timeout_is_refused_by_name) {
  tony_cli_args a;
  a.executes = "train.py";
  write("train.py");
  a.conf = {"tony.worker.instances=1", "tony.am.startup-timeout=10000"};
  EXPECT_EQ(errors(a),
            "--conf tony.am.startup-timeout=10000: tony-submit does not give up on an "
            "application whose ApplicationMaster has not started (YARN keeps it "
            "ACCEPTED while the queue is full); remove the key, and stop such a job "
            "with tony-submit --kill <application id>\n");
  a.conf.back() = "tony.am.startup-timeout=0"; // TonY's default: none
  EXPECT_EQ(errors(a), "");
  a.conf.back() = "tony.am.startup-timeout=10m";
  EXPECT_EQ(errors(a),
            "--conf tony.am.startup-timeout=10m: must be a number of milliseconds\n");
}

TEST_F(tony_cli, a_worker_timeout_is_refused_with_the_key_to_use) {
  tony_cli_args a;
  a.executes = "train.py";
  write("train.py");
  a.conf = {"tony.worker.instances=1", "tony.worker.timeout=5000"};
  auto e = errors(a);
  EXPECT_EQ(e.rfind("--conf tony.worker.timeout=5000: TonY applied this timeout to its "
                    "preprocessing job only",
                    0),
            0u)
      << e;
  EXPECT_NE(e.find("tony.task.executor.execution-timeout-ms"), std::string::npos) << e;
}

TEST_F(tony_cli, other_namenodes_are_security_file_systems) {
  tony_cli_args a;
  a.executes = "train.py";
  write("train.py");
  a.conf = {
      "tony.worker.instances=1",
      "tony.other.namenodes=hdfs://nn2:8020, hdfs://nn3:9000/user/a,hdfs://nn2:8020"};
  auto spec = load(a);
  EXPECT_EQ(spec.security.file_systems,
            (std::vector<std::string>{"hdfs://nn2:8020", "hdfs://nn3:9000"}));
  // What is no NameNode is the loader's error, at the key.
  a.conf.back() = "tony.other.namenodes=webhdfs://nn2:9870";
  auto d = draft(a);
  auto r = load_job_text_from("", "TonY job", dir_, d.overrides, disk_probe{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      to_string(r.error()).rfind("--conf tony.other.namenodes=webhdfs://nn2:9870: "
                                 "'file_systems' entry \"webhdfs://nn2:9870\" must be "
                                 "an hdfs://host:port URI of a NameNode",
                                 0),
      0u)
      << to_string(r.error());
}

// TonY 0.5's placement-spec, for a type's anti-affinity with itself, is
// max_per_node; anything else is refused at the key.
TEST_F(tony_cli, a_placement_spec_of_anti_affinity_is_max_per_node) {
  write("train.py");
  tony_cli_args a;
  a.executes = "train.py";
  a.conf = {"tony.worker.instances=3", "tony.worker.placement-spec=NOTIN,NODE,worker",
            "tony.ps.instances=2", "tony.ps.allocation-tags=param",
            "tony.ps.placement-spec=cardinality, node, param, 0, 1"};
  auto spec = load(a);
  auto* worker = spec.find("worker");
  auto* ps = spec.find("ps");
  ASSERT_TRUE(worker && ps);
  EXPECT_EQ(worker->max_per_node, 1);
  EXPECT_EQ(ps->max_per_node, 2);
  a.conf = {"tony.worker.instances=3", "tony.worker.placement-spec=IN,NODE,ps"};
  auto e = errors(a);
  EXPECT_EQ(e.rfind("--conf tony.worker.placement-spec=IN,NODE,ps: tony maps only a task "
                    "type's anti-affinity with itself onto max_per_node",
                    0),
            0u)
      << e;
  EXPECT_NE(e.find("allocation tags (worker)"), std::string::npos) << e;
}
