// ytf-submit's command line translated into a job (compat/ytf_cli.hpp).

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "compat/ytf_cli.hpp"
#include "config/disk_probe.hpp"
#include "config/job_config.hpp"

using namespace tony;
namespace fs = std::filesystem;

namespace {

class ytf_cli : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tony-ytf-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::ofstream{dir_ + "/mnist.py"} << "print('hi')\n";
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  ytf_args args(const std::string& r) {
    ytf_args a;
    a.cluster_requirement = r;
    a.task_command = "python ${DTF_TASK_SCRIPT} --job_name ${DTF_TASK_JOB_NAME}";
    return a;
  }

  load_result load(const ytf_args& a) {
    auto job = translate_ytf(a, dir_);
    EXPECT_TRUE(job.draft.errors.empty()) << to_string(job.draft.errors);
    return load_job_text_from("", "ytf-submit", dir_, job.draft.overrides, disk_probe{});
  }

  job_spec ok(const ytf_args& a) {
    auto r = load(a);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : to_string(r.error()));
    return r.ok() ? std::move(r).value() : job_spec{};
  }

  std::string errors(const ytf_args& a) {
    return to_string(translate_ytf(a, dir_).draft.errors);
  }

  std::string dir_;
};

} // namespace

TEST_F(ytf_cli, the_design_examples_become_jobs) {
  auto a = args("ps:1,worker:2");
  a.tensorboard = true;
  a.input = "hdfs://users/user1/mnist/data";
  a.output = "hdfs://users/user1/mnist/train10";
  a.script = "mnist.py";
  auto spec = ok(a);
  EXPECT_EQ(spec.name, "TensorFlow");
  EXPECT_EQ(spec.queue, "default");
  EXPECT_EQ(spec.framework, "tensorflow");
  EXPECT_EQ(spec.src_dir, "");
  EXPECT_EQ(spec.command, a.task_command) << "${DTF_*} are left to the task's shell";
  EXPECT_EQ(spec.find("ps")->instances, 1);
  EXPECT_FALSE(spec.find("ps")->tracked);
  EXPECT_EQ(spec.find("worker")->instances, 2);
  EXPECT_EQ(spec.find("worker")->capability, (resource{8192, 1, 0}));
  EXPECT_EQ(spec.input_path, a.input);
  EXPECT_EQ(spec.output_path, a.output);
  EXPECT_TRUE(spec.tensorboard.enabled);
  ASSERT_NE(spec.find("tensorboard"), nullptr) << "-t adds the TensorBoard sidecar";
  EXPECT_TRUE(spec.find("tensorboard")->sidecar);
  EXPECT_EQ(spec.files,
            (std::vector<shipped_file>{{dir_ + "/mnist.py", "mnist.py", false}}));
  EXPECT_EQ(spec.env.at("DTF_TASK_SCRIPT"), "mnist.py");
}

TEST_F(ytf_cli, resources_in_general_job_and_task_forms) {
  auto a = args("ps:2,worker:3");
  a.task_memory = {"worker[1]:16384", "2048", "worker:4g"};
  a.task_vcores = {"ps:2,worker[0]:8", "3"};
  auto spec = ok(a);
  auto& ps = *spec.find("ps");
  auto& w = *spec.find("worker");
  EXPECT_EQ(ps.capability, (resource{2048, 2, 0}));
  EXPECT_EQ(w.capability, (resource{4096, 3, 0}));
  EXPECT_EQ(w.capability_of(0), (resource{4096, 8, 0}));
  EXPECT_EQ(w.capability_of(1), (resource{16384, 3, 0}));
  EXPECT_EQ(w.capability_of(2), (resource{4096, 3, 0}));
}

TEST_F(ytf_cli, name_queue_and_docker) {
  auto a = args("worker:1");
  a.name = "mnist";
  a.queue = "ml";
  a.docker_image = "tensorflow/tensorflow:1.15.5";
  auto spec = ok(a);
  EXPECT_EQ(spec.name, "mnist");
  EXPECT_EQ(spec.queue, "ml");
  EXPECT_EQ(spec.docker_image, "tensorflow/tensorflow:1.15.5");
  EXPECT_TRUE(unsupported_features(spec).empty()) << "Docker runs (doc/docker.md)";
  a.docker_image = "TensorFlow";
  auto r = load(a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      to_string(r.error()).rfind("--docker_image TensorFlow: 'image' \"TensorFlow\" is "
                                 "not a Docker image name",
                                 0),
      0u)
      << to_string(r.error());
}

TEST_F(ytf_cli, bad_cluster_requirements) {
  EXPECT_EQ(errors(args("ps:x")),
            "-r ps:x: the number of ps tasks must be a positive integer, got 'x'\n");
  EXPECT_EQ(
      errors(args("worker:0")),
      "-r worker:0: the number of worker tasks must be a positive integer, got '0'\n");
  EXPECT_EQ(errors(args("")),
            "-r : needs job_name:num_tasks pairs, e.g. -r \"ps:2,worker:4\"\n");
  EXPECT_EQ(errors(args("worker")), "-r worker: 'worker' is not job_name:num_tasks, e.g. "
                                    "worker:4\n");
  EXPECT_EQ(errors(args("worker:1,worker:2")),
            "-r worker:1,worker:2: job 'worker' is listed twice\n");
  auto r = load(args("Worker:2"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(to_string(r.error()).rfind("-r Worker:2: invalid task type name 'Worker'", 0),
            0u)
      << to_string(r.error());
}

TEST_F(ytf_cli, bad_resource_forms) {
  auto a = args("ps:1,worker:2");
  a.task_vcores = {"chief:2"};
  EXPECT_EQ(errors(a), "-c chief:2: job 'chief' is not in -r ps:1,worker:2\n");
  a.task_vcores = {"worker[2]:2"};
  EXPECT_EQ(errors(a),
            "-c worker[2]:2: worker has 2 tasks (indexes 0 to 1), got index 2\n");
  a.task_vcores = {"worker[x]:2"};
  EXPECT_EQ(errors(a),
            "-c worker[x]:2: 'worker[x]:2' is not -c job_name[task_index]:value\n");
  a.task_vcores = {"0"};
  EXPECT_EQ(errors(a), "-c 0: '0': vcores must be a positive integer\n");
  a.task_vcores = {};
  a.task_memory = {"worker:lots"};
  auto r = load(a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      to_string(r.error()).rfind("-m worker:lots: 'memory' = \"lots\" is not a size", 0),
      0u)
      << to_string(r.error());
}

TEST_F(ytf_cli, tensorboard_needs_an_output) {
  auto a = args("worker:1");
  a.tensorboard = true;
  EXPECT_EQ(errors(a),
            "-t/--tensorboard: needs -o/--output: TensorBoard shows the output "
            "path, e.g. -t -o hdfs:///user/me/mnist/train\n");
}

TEST_F(ytf_cli, a_missing_script_names_the_flag) {
  auto a = args("worker:1");
  a.script = "nowhere.py";
  auto r = load(a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(to_string(r.error()).rfind("-s nowhere.py: files[0] in [code] \"" + dir_ +
                                           "/nowhere.py\" does not exist",
                                       0),
            0u)
      << to_string(r.error());
}

TEST_F(ytf_cli, client_mode_keeps_the_command_for_here) {
  auto a = args("worker:1");
  a.client = true;
  a.script = "mnist.py";
  auto job = translate_ytf(a, dir_);
  EXPECT_TRUE(job.client);
  EXPECT_EQ(job.client_command, a.task_command);
  EXPECT_EQ(job.client_env.at("DTF_TASK_SCRIPT"), dir_ + "/mnist.py");
}
