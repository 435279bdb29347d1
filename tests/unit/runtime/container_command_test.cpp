// The local backend's container for a task's command
// (runtime/container_command.hpp): the exact `run` arguments, the shell line
// the executor starts, and what it says when no runtime can run containers.

#include "runtime/container_command.hpp"

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
  auto args =
      container_run_args(d, "tony-container_1", "/jobs/app/c1", env, "python3 train.py");
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
