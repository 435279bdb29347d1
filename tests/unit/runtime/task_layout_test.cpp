// The task's working directory: source entries linked in, the venv's
// interpreter behind python and python3 (executor/task_layout.hpp).

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "executor/task_layout.hpp"
#include "messages/error.hpp"

using namespace tony;
namespace fs = std::filesystem;

namespace {

class task_layout_test : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tony-layout-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void file(const std::string& name, bool executable = false) {
    auto path = fs::path{dir_} / name;
    fs::create_directories(path.parent_path());
    std::ofstream{path} << "#!/bin/sh\n";
    ::chmod(path.c_str(), executable ? 0755 : 0644);
  }

  task_layout_input input() {
    task_layout_input in;
    in.container_dir = dir_;
    in.env = {{"PATH", "/usr/bin:/bin"}};
    return in;
  }

  task_layout ok(const task_layout_input& in) {
    auto r = prepare_task_layout(in);
    EXPECT_TRUE(r) << (r ? "" : describe(r.error()));
    return r ? *r : task_layout{};
  }

  std::string dir_;
};

} // namespace

TEST_F(task_layout_test, source_entries_appear_in_the_working_directory) {
  file("src/train.py");
  file("src/pkg/__init__.py");
  file("src/vocab.txt");
  file("vocab.txt"); // a shipped file of the same name wins
  auto in = input();
  in.shipped = {"vocab.txt"};
  auto layout = ok(in);
  EXPECT_EQ(layout.work_dir, dir_);
  EXPECT_EQ(fs::read_symlink(dir_ + "/train.py"), fs::path{"src/train.py"});
  EXPECT_TRUE(fs::is_directory(dir_ + "/pkg"));
  EXPECT_FALSE(fs::is_symlink(dir_ + "/vocab.txt"));
  EXPECT_EQ(layout.shadowed, (std::vector<std::string>{"vocab.txt"}));
  EXPECT_EQ(layout.env.at("PYTHONPATH"), dir_) << "shipped modules import from anywhere";
  EXPECT_EQ(layout.python, "");
  EXPECT_EQ(layout.env.count("PATH"), 0u);
}

TEST_F(task_layout_test, tonys_venv_layout_is_found) {
  file("venv/Python/bin/python", true);
  auto layout = ok(input());
  EXPECT_EQ(layout.python, dir_ + "/venv/Python/bin/python");
  EXPECT_EQ(layout.env.at("PATH"),
            dir_ + "/.tony-bin:" + dir_ + "/venv/Python/bin:/usr/bin:/bin");
  std::ifstream wrapper{dir_ + "/.tony-bin/python3"};
  std::string text{std::istreambuf_iterator<char>{wrapper}, {}};
  EXPECT_EQ(text, "#!/bin/sh\nexec '" + dir_ + "/venv/Python/bin/python' \"$@\"\n");
  EXPECT_EQ(::access((dir_ + "/.tony-bin/python").c_str(), X_OK), 0);
}

TEST_F(task_layout_test, a_plain_venv_archive_is_found) {
  file("venv/bin/python", true);
  file("venv/bin/python3", true);
  EXPECT_EQ(ok(input()).python, dir_ + "/venv/bin/python3");
}

TEST_F(task_layout_test, python_binary_path_is_relative_to_the_venv) {
  file("venv/Python/bin/python3.11", true);
  file("venv/Python/bin/python", true);
  auto in = input();
  in.python_binary_path = "Python/bin/python3.11";
  EXPECT_EQ(ok(in).python, dir_ + "/venv/Python/bin/python3.11");
  in.python_binary_path = "/bin/sh";
  EXPECT_EQ(ok(in).python, "/bin/sh");
}

TEST_F(task_layout_test, a_missing_python_binary_path_says_what_the_venv_holds) {
  file("venv/Python/bin/python", true);
  auto in = input();
  in.python_binary_path = "Python/bin/pyhton";
  auto r = prepare_task_layout(in);
  ASSERT_FALSE(r);
  EXPECT_EQ(describe(r.error()),
            "python_binary_path 'Python/bin/pyhton' does not exist in the unpacked "
            "python_venv (" +
                dir_ + "/venv/Python/bin/pyhton); the venv holds: Python/");
  file("venv/Python/bin/notexec", false);
  in.python_binary_path = "Python/bin/notexec";
  r = prepare_task_layout(in);
  ASSERT_FALSE(r);
  EXPECT_NE(describe(r.error()).find("is not an executable file"), std::string::npos);
}

TEST_F(task_layout_test, a_pex_is_the_interpreter) {
  file("venv.pex", true);
  auto layout = ok(input());
  EXPECT_EQ(layout.python, dir_ + "/venv.pex");
  EXPECT_EQ(layout.env.at("PATH"), dir_ + "/.tony-bin:/usr/bin:/bin");
  file("venv.pex", false);
  auto r = prepare_task_layout(input());
  ASSERT_FALSE(r);
  EXPECT_NE(describe(r.error()).find("is not executable"), std::string::npos);
}
