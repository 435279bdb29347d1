// Where a job goes when its command line does not say (submit/backend_choice.hpp):
// the decision table, every input given.

#include "submit/backend_choice.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

using namespace tony;
namespace fs = std::filesystem;

namespace {

backend_inputs of(front_end front) {
  backend_inputs in;
  in.front = front;
  return in;
}

} // namespace

TEST(backend_choice, tony_and_ytf_go_to_yarn_when_a_configuration_is_found) {
  for (auto front : {front_end::tony, front_end::ytf}) {
    auto in = of(front);
    in.hadoop_conf_dir = "/etc/hadoop/conf";
    auto c = choose_backend(in);
    EXPECT_EQ(c.backend, "yarn");
    EXPECT_EQ(c.conf_dir, "/etc/hadoop/conf");
    EXPECT_EQ(backend_line(in, c, "yarn"),
              "backend yarn: a Hadoop configuration is found "
              "(HADOOP_CONF_DIR=/etc/hadoop/conf); --backend local runs the job on this "
              "machine");
  }
}

TEST(backend_choice, the_configuration_is_looked_for_in_order) {
  auto in = of(front_end::ytf);
  in.hadoop_command_conf = "/opt/hadoop/etc/hadoop";
  EXPECT_EQ(choose_backend(in).conf_dir, "/opt/hadoop/etc/hadoop");
  EXPECT_EQ(choose_backend(in).backend, "yarn");
  in.yarn_conf_dir = "/y";
  EXPECT_EQ(choose_backend(in).conf_dir, "/y");
  EXPECT_EQ(choose_backend(in).reason,
            "a Hadoop configuration is found (YARN_CONF_DIR=/y)");
  in.hadoop_conf_dir = "/h";
  EXPECT_EQ(choose_backend(in).conf_dir, "/h");
  in.hadoop_conf_flag = "/f";
  EXPECT_EQ(choose_backend(in).conf_dir, "/f");
  EXPECT_EQ(choose_backend(in).reason,
            "a Hadoop configuration is found (--hadoop-conf /f)");
}

TEST(backend_choice, tony_and_ytf_run_here_without_a_configuration_and_say_why) {
  for (auto front : {front_end::tony, front_end::ytf}) {
    auto in = of(front);
    auto c = choose_backend(in);
    EXPECT_EQ(c.backend, "local");
    EXPECT_EQ(c.conf_dir, "");
    EXPECT_EQ(backend_line(in, c, "local"),
              "backend local: no Hadoop configuration is found (no --hadoop-conf, "
              "HADOOP_CONF_DIR, YARN_CONF_DIR or hadoop command); --backend yarn with "
              "--hadoop-conf DIR (or HADOOP_CONF_DIR) submits to YARN");
  }
}

TEST(backend_choice, the_flag_wins_then_tony_backend) {
  auto in = of(front_end::tony);
  in.hadoop_conf_dir = "/h";
  in.env = "local";
  auto c = choose_backend(in);
  EXPECT_EQ(c.backend, "local");
  EXPECT_EQ(backend_line(in, c, "local"), "backend local: TONY_BACKEND=local");
  in.flag = "local";
  in.env = "yarn";
  c = choose_backend(in);
  EXPECT_EQ(c.backend, "local");
  EXPECT_EQ(backend_line(in, c, "local"), "backend local: --backend local");
  in.flag = "yarn";
  EXPECT_EQ(choose_backend(in).backend, "yarn");
}

TEST(backend_choice, set_cluster_backend_is_named_when_it_overrides_the_choice) {
  auto in = of(front_end::ytf);
  in.hadoop_conf_dir = "/h";
  auto c = choose_backend(in);
  EXPECT_EQ(backend_line(in, c, "local"), "backend local: --set cluster.backend");
}

TEST(backend_choice, a_job_toml_goes_where_its_cluster_backend_says) {
  auto in = of(front_end::job_toml);
  in.hadoop_conf_dir = "/h";
  auto c = choose_backend(in);
  EXPECT_EQ(c.backend, ""); // the job.toml decides
  EXPECT_EQ(backend_line(in, c, "yarn"), "");
  EXPECT_EQ(
      backend_line(in, c, "local"),
      "backend local: the job.toml's [cluster] backend (local unless it says yarn); "
      "a Hadoop configuration is found (HADOOP_CONF_DIR=/h): --backend yarn or "
      "TONY_BACKEND=yarn submits to YARN");
  // Nothing to say on a machine without Hadoop (the README's example).
  in.hadoop_conf_dir.clear();
  EXPECT_EQ(backend_line(in, choose_backend(in), "local"), "");
  // TONY_BACKEND, like spark.master, over the file; --backend says itself.
  in.env = "yarn";
  c = choose_backend(in);
  EXPECT_EQ(c.backend, "yarn");
  EXPECT_EQ(backend_line(in, c, "yarn"), "backend yarn: TONY_BACKEND=yarn");
  in.flag = "local";
  c = choose_backend(in);
  EXPECT_EQ(c.backend, "local");
  EXPECT_EQ(backend_line(in, c, "local"), "");
}

TEST(backend_choice, a_bad_tony_backend_is_refused_by_name) {
  auto in = of(front_end::job_toml);
  in.env = "yran";
  auto c = choose_backend(in);
  EXPECT_EQ(c.error, "TONY_BACKEND=yran: the backend is local or yarn; set "
                     "TONY_BACKEND=yarn, TONY_BACKEND=local, or unset it");
  in.flag = "yarn"; // --backend wins: the variable is not read
  EXPECT_EQ(choose_backend(in).error, "");
}

TEST(backend_choice, the_hadoop_commands_configuration) {
  auto root =
      fs::temp_directory_path() / ("tony-backend-choice-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "hadoop-3.4.2" / "bin");
  fs::create_directories(root / "hadoop-3.4.2" / "etc" / "hadoop");
  fs::create_directories(root / "bin");
  auto tool = root / "hadoop-3.4.2" / "bin" / "hadoop";
  std::ofstream(tool) << "#!/bin/sh\n";
  fs::permissions(tool, fs::perms::owner_all);
  fs::create_symlink(tool, root / "bin" / "hadoop");
  std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  std::string old_home = std::getenv("HADOOP_HOME") ? std::getenv("HADOOP_HOME") : "";
  ::unsetenv("HADOOP_HOME");
  ::setenv("PATH", (root / "bin").c_str(), 1);
  EXPECT_EQ(hadoop_command_conf_dir(),
            fs::canonical(root / "hadoop-3.4.2" / "etc" / "hadoop").string());
  ::setenv("HADOOP_HOME", (root / "hadoop-3.4.2").c_str(), 1);
  EXPECT_EQ(hadoop_command_conf_dir(),
            (root / "hadoop-3.4.2" / "etc" / "hadoop").string());
  ::unsetenv("HADOOP_HOME");
  ::setenv("PATH", (root / "nothing").c_str(), 1);
  EXPECT_EQ(hadoop_command_conf_dir(), "");
  ::setenv("PATH", old_path.c_str(), 1);
  if (!old_home.empty())
    ::setenv("HADOOP_HOME", old_home.c_str(), 1);
  fs::remove_all(root);
}
