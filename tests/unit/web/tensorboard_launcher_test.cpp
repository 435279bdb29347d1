// tony-history's TensorBoards write their output into a private directory
// of the launcher's (history/tensorboard_launcher.hpp), never to a name in
// /tmp that another user could pre-create as a link.

#include "history/tensorboard_launcher.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

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
    auto s = a.get("application_1_0001", "/nonexistent/logs");
    if (s.state == tensorboard_launcher::status::starting)
      s = a.get("application_1_0001", "/nonexistent/logs");
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
  auto s = a.get("application_1_0001", "/x");
  EXPECT_EQ(s.state, tensorboard_launcher::status::failed);
  EXPECT_NE(s.why.find("no private directory"), std::string::npos) << s.why;
}

} // namespace
} // namespace tony::history
