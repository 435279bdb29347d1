// The local backend's container for a task's command
// (runtime/container_command.hpp): the exact `run` arguments, the shell line
// the executor starts, and what it says when no runtime can run containers.

#include "runtime/container_command.hpp"

#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include "messages/error.hpp"

using namespace tony;

namespace {

TEST(container_command, run_arguments_carry_the_work_dir_mounts_and_variable_names) {
  docker_contract d;
  d.image = "team/train:1";
  d.network = "host";
  d.mounts = {"/jobs/app:/jobs/app:rw", "/etc/hadoop:/etc/hadoop:ro"};
  d.run_options = {"--shm-size=1g"};
  std::map<std::string, std::string> env{
      {"PATH", "/usr/bin"}, {"HOME", "/root"}, {"TF_CONFIG", "{}"}, {"RANK", "0"}};
  auto args = container_run_args("docker", d, "tony-container_1", "/jobs/app/c1", env,
                                 "python3 train.py");
  std::vector<std::string> expected{"run",
                                    "--rm",
                                    "--init",
                                    "--name",
                                    "tony-container_1",
                                    "--network=host",
                                    "-v",
                                    "/jobs/app/c1:/jobs/app/c1",
                                    "-w",
                                    "/jobs/app/c1",
                                    "-v",
                                    "/jobs/app:/jobs/app:rw",
                                    "-v",
                                    "/etc/hadoop:/etc/hadoop:ro",
                                    "-e",
                                    "RANK",
                                    "-e",
                                    "TF_CONFIG",
                                    "--shm-size=1g",
                                    "team/train:1",
                                    "/bin/sh",
                                    "-c",
                                    "python3 train.py"};
  EXPECT_EQ(args, expected) << "values stay out of the command line; PATH and HOME are "
                               "the image's";
}

// The part of `args` from the image's mounts to the image: the GPU flags
// and the variables.
std::vector<std::string> between_mounts_and_image(const std::vector<std::string>& args,
                                                  const std::string& image) {
  auto from = std::find(args.begin(), args.end(), "/jobs/app/c1") + 1; // after -w
  auto to = std::find(args.begin(), args.end(), image);
  return {from, to};
}

TEST(container_command,
     the_tasks_gpus_go_in_numbered_from_zero_where_the_machine_has_gpus) {
  docker_contract d;
  d.image = "team/train:1";
  d.gpus = true;
  std::map<std::string, std::string> env{{"CUDA_VISIBLE_DEVICES", "2,3"},
                                         {"NVIDIA_VISIBLE_DEVICES", "2,3"},
                                         {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                         {"DOCKER_HOST", "unix:///run/d.sock"}};
  auto docker = container_run_args("/usr/bin/docker", d, "tony-c2", "/jobs/app/c1", env,
                                   "python3 train.py");
  EXPECT_EQ(between_mounts_and_image(docker, d.image),
            (std::vector<std::string>{
                "--gpus", "\"device=2,3\"", "-e", "CUDA_VISIBLE_DEVICES=0,1", "-e",
                "CUDA_DEVICE_ORDER", "-e", "NVIDIA_VISIBLE_DEVICES"}))
      << "docker reads --gpus as CSV: the quotes keep both devices in one field; "
         "DOCKER_HOST stays the client's";
  auto podman =
      container_run_args("podman", d, "tony-c2", "/jobs/app/c1", env, "python3 train.py");
  EXPECT_EQ(between_mounts_and_image(podman, d.image),
            (std::vector<std::string>{
                "--device", "nvidia.com/gpu=2", "--device", "nvidia.com/gpu=3", "-e",
                "CUDA_VISIBLE_DEVICES=0,1", "-e", "CUDA_DEVICE_ORDER", "-e",
                "NVIDIA_VISIBLE_DEVICES"}));
}

TEST(container_command, no_gpu_flags_for_a_task_without_gpus_or_a_machine_without_any) {
  docker_contract d;
  d.image = "team/train:1";
  d.gpus = true;
  std::map<std::string, std::string> none{{"CUDA_VISIBLE_DEVICES", ""},
                                          {"NVIDIA_VISIBLE_DEVICES", "void"}};
  EXPECT_EQ(
      between_mounts_and_image(
          container_run_args("docker", d, "tony-c2", "/jobs/app/c1", none, "x"), d.image),
      (std::vector<std::string>{"-e", "CUDA_VISIBLE_DEVICES", "-e",
                                "NVIDIA_VISIBLE_DEVICES"}));
  // [cluster.local] gpus on a machine without GPUs: the pool's numbers are
  // no devices the runtime could pass.
  d.gpus = false;
  std::map<std::string, std::string> pool{{"CUDA_VISIBLE_DEVICES", "0"},
                                          {"NVIDIA_VISIBLE_DEVICES", "0"}};
  EXPECT_EQ(
      between_mounts_and_image(
          container_run_args("docker", d, "tony-c2", "/jobs/app/c1", pool, "x"), d.image),
      (std::vector<std::string>{"-e", "CUDA_VISIBLE_DEVICES", "-e",
                                "NVIDIA_VISIBLE_DEVICES"}));
}

TEST(container_command, the_shell_line_quotes_every_argument) {
  EXPECT_EQ(shell_command("podman", {"run", "it's", "a b"}),
            "exec 'podman' 'run' 'it'\\''s' 'a b'");
}

TEST(container_command, no_runtime_names_the_image_the_task_and_what_to_do) {
  ::setenv("TONY_CONTAINER_RUNTIME", "/nonexistent/docker", 1);
  auto found = find_container_runtime("team/train:1", "worker:0");
  ::unsetenv("TONY_CONTAINER_RUNTIME");
  ASSERT_FALSE(found);
  auto msg = describe(found.error());
  EXPECT_NE(msg.find("worker:0 runs in the Docker image team/train:1"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("`/nonexistent/docker info` found no such program"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("run the job on YARN"), std::string::npos) << msg;
}

} // namespace
