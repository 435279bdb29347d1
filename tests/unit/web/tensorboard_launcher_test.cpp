// tony-history's TensorBoards write their output into a private directory
// of the launcher's (history/tensorboard_launcher.hpp), never to a name in
// /tmp that another user could pre-create as a link.

#include "history/tensorboard_launcher.hpp"

#include "config/task_env.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tony::history {
namespace {

TEST(tensorboard_launcher, output_goes_to_a_private_dir_nobody_could_predict) {
  tensorboard_launcher::options opts;
  opts.program = "/nonexistent/tensorboard";
  std::string first;
  {
    tensorboard_launcher a{opts};
    tensorboard_launcher b{opts};
    first = a.output_dir();
    ASSERT_FALSE(first.empty());
    EXPECT_NE(first, b.output_dir());
    EXPECT_NE(first.find("/tony-history-tensorboard-"), std::string::npos) << first;
    struct stat st {};
    ASSERT_EQ(::lstat(first.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(st.st_uid, ::geteuid());
    // A TensorBoard that cannot start says so; its output stays inside.
    auto s = a.get("application_1_0001", "/nonexistent/logs", "c");
    if (s.state == tensorboard_launcher::status::starting)
      s = a.get("application_1_0001", "/nonexistent/logs", "c");
    EXPECT_FALSE(
        std::filesystem::exists("/tmp/tony-history-tensorboard-application_1_0001.log"));
  }
  EXPECT_FALSE(std::filesystem::exists(first)) << "the launcher's dir outlived it";
}

TEST(tensorboard_launcher, without_a_private_dir_nothing_starts) {
  tensorboard_launcher::options opts;
  opts.program = "/nonexistent/tensorboard";
  opts.log_root = "/nonexistent/root";
  tensorboard_launcher a{opts};
  EXPECT_TRUE(a.output_dir().empty());
  auto s = a.get("application_1_0001", "/x", "c");
  EXPECT_EQ(s.state, tensorboard_launcher::status::failed);
  EXPECT_NE(s.why.find("no private directory"), std::string::npos) << s.why;
}

// A TensorBoard that starts and never answers: each get() of a new key is
// a start, and every one up stays "starting".
class churn : public ::testing::Test {
protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("tony-tb-churn-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    program = (dir / "tensorboard").string();
    std::ofstream(program) << "#!/bin/sh\nexec sleep 30\n";
    ::chmod(program.c_str(), 0755);
    opts.program = program;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::filesystem::path dir;
  std::string program;
  tensorboard_launcher::options opts;
};

using state = tensorboard_launcher::status;

TEST_F(churn, a_client_cannot_churn_tensorboards) {
  opts.starts_per_client = 2;
  tensorboard_launcher tb{opts};
  EXPECT_EQ(tb.get("application_1_0001", "/l", "10.0.0.1").state, state::starting);
  EXPECT_EQ(tb.get("application_1_0002", "/l", "10.0.0.1").state, state::starting);
  auto third = tb.get("application_1_0003", "/l", "10.0.0.1");
  EXPECT_EQ(third.state, state::too_many);
  EXPECT_GE(third.retry_after_s, 1);
  EXPECT_NE(third.why.find("2 TensorBoards were started for 10.0.0.1 in the last 60 s"),
            std::string::npos)
      << third.why;
  // One that is up is served again without a start.
  EXPECT_EQ(tb.get("application_1_0001", "/l", "10.0.0.1").state, state::starting);
  // Other clients start theirs until every one up was used of late; then
  // none is stopped for another.
  EXPECT_EQ(tb.get("application_1_0003", "/l", "10.0.0.2").state, state::starting);
  EXPECT_EQ(tb.get("application_1_0004", "/l", "10.0.0.2").state, state::starting);
  auto fifth = tb.get("application_1_0005", "/l", "10.0.0.3");
  EXPECT_EQ(fifth.state, state::busy);
  EXPECT_NE(
      fifth.why.find("all 4 TensorBoards this server runs were used in the last 60 s"),
      std::string::npos)
      << fifth.why;
  EXPECT_EQ(tb.running().size(), 4u);
}

TEST_F(churn, another_program_gets_tonys_sitecustomize_and_the_token) {
  // The program says what it was given, then waits as a TensorBoard would.
  auto seen = dir / "env.txt";
  std::ofstream(program) << "#!/bin/sh\necho \"$PYTHONPATH\" > '" << seen.string()
                         << "'\necho \"$TONY_TENSORBOARD_TOKEN\" >> '" << seen.string()
                         << "'\nexec sleep 30\n";
  opts.token = "t0k3n";
  tensorboard_launcher tb{opts};
  EXPECT_EQ(tb.token(), "t0k3n"); // the proxy sends it
  EXPECT_EQ(tb.get("application_1_0001", "/l", "a").state, state::starting);
  std::string site, token;
  for (int i = 0; i < 100 && token.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in{seen};
    std::getline(in, site);
    std::getline(in, token);
  }
  EXPECT_EQ(token, "t0k3n");
  auto hook = site.substr(0, site.find(':'));
  EXPECT_EQ(hook, tb.output_dir() + "/tony-py");
  std::ifstream in{hook + "/sitecustomize.py"};
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>{in}, {}), tensorboard_site_hook());
  // Without a token, the program runs as it is and nothing is sent.
  opts.token.clear();
  tensorboard_launcher open{opts};
  EXPECT_EQ(open.token(), "");
}

TEST_F(churn, room_and_starts_come_back_with_time) {
  opts.max_running = 1;
  opts.starts_per_client = 1;
  opts.keep_ms = 500;
  opts.start_window_ms = 1500;
  tensorboard_launcher tb{opts};
  EXPECT_EQ(tb.get("application_1_0001", "/l", "a").state, state::starting);
  EXPECT_EQ(tb.get("application_1_0002", "/l", "b").state, state::busy);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  // Unused for longer than keep_ms: stopped to make room.
  EXPECT_EQ(tb.get("application_1_0002", "/l", "b").state, state::starting);
  EXPECT_EQ(tb.running(), std::vector<std::string>{"application_1_0002"});
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(tb.get("application_1_0003", "/l", "b").state, state::too_many);
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  EXPECT_EQ(tb.get("application_1_0003", "/l", "b").state, state::starting);
}

} // namespace
} // namespace tony::history
