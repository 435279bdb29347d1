// The sweep of ended jobs' staging dirs (submit/staging_sweep.hpp) on a
// file:// staging root, with the RM's answers scripted.

#include <algorithm>
#include "submit/staging_sweep.hpp"

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

using namespace tony;
namespace fs = std::filesystem;

namespace {

constexpr int64_t now = 1'800'000'000'000;
constexpr int64_t rm_start = 1'700'000'000'000;

yarn::application_id app(int64_t ts, int32_t n) {
  return {ts, n};
}

rm_verdict said(rm_verdict::kind_t k) {
  return rm_verdict{k};
}

} // namespace

TEST(staging_sweep, only_ended_or_forgotten_applications_lose_their_dir) {
  auto current = app(rm_start, 7);
  auto earlier = app(rm_start - 1000, 7);
  auto fresh = now - 1000;                   // just written
  auto old = now - unknown_app_grace_ms - 1; // untouched for over the grace
  EXPECT_TRUE(removable(current, said(rm_verdict::ended), rm_start, fresh, now));
  EXPECT_FALSE(removable(current, said(rm_verdict::live), rm_start, old, now));
  EXPECT_FALSE(removable(current, said(rm_verdict::no_answer), rm_start, old, now));
  // Unknown to the RM: gone when the RM issued it and it cannot be a
  // submission in flight; another RM's (another cluster sharing the root,
  // or before a restart) stays, old or not.
  EXPECT_FALSE(removable(earlier, said(rm_verdict::unknown), rm_start, fresh, now));
  EXPECT_FALSE(removable(earlier, said(rm_verdict::unknown), rm_start, old, now));
  EXPECT_FALSE(removable(current, said(rm_verdict::unknown), rm_start, fresh, now));
  EXPECT_TRUE(removable(current, said(rm_verdict::unknown), rm_start, old, now));
}

TEST(staging_sweep, a_sweep_removes_ended_jobs_dirs_and_keeps_the_rest) {
  auto root = fs::temp_directory_path() / ("tony-sweep-" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto make = [&](const std::string& name) {
    fs::create_directories(root / name);
    std::ofstream(root / name / "job.json") << "{}";
  };
  for (auto name : {"application_1700000000000_0001", "application_1700000000000_0002",
                    "application_1700000000000_0003", "application_1700000000000_0004",
                    "application_1600000000000_0009", "bin", "envs", "application_x"})
    make(name);
  std::map<std::string, rm_verdict::kind_t> rm{
      {"application_1700000000000_0001", rm_verdict::ended},
      {"application_1700000000000_0002", rm_verdict::live},
      {"application_1700000000000_0003", rm_verdict::no_answer},
      {"application_1700000000000_0004", rm_verdict::ended},
      {"application_1600000000000_0009", rm_verdict::unknown}};
  std::vector<std::string> asked;
  sweep_options opts;
  opts.except = "application_1700000000000_0004"; // the submit's own
  auto result = sweep_staging(
      "file://" + root.string(), {},
      [&](const yarn::application_id& id) {
        asked.push_back(yarn::to_string(id));
        return rm_verdict{rm.at(yarn::to_string(id))};
      },
      rm_start, now, opts);
  EXPECT_TRUE(result.problems.empty());
  EXPECT_EQ(result.removed, (std::vector<std::string>{"application_1700000000000_0001"}));
  auto kept_ids = result.kept;
  std::sort(kept_ids.begin(), kept_ids.end());
  EXPECT_EQ(kept_ids, (std::vector<std::string>{"application_1600000000000_0009",
                                                "application_1700000000000_0002",
                                                "application_1700000000000_0003"}));
  EXPECT_EQ(asked.size(), 4u);
  for (auto gone : {"application_1700000000000_0001"})
    EXPECT_FALSE(fs::exists(root / gone)) << gone;
  for (auto kept : {"application_1700000000000_0002", "application_1700000000000_0003",
                    "application_1700000000000_0004", "application_1600000000000_0009", "bin",
                    "envs", "application_x"})
    EXPECT_TRUE(fs::exists(root / kept / "job.json")) << kept;
  fs::remove_all(root);
}

TEST(staging_sweep, a_missing_root_is_nothing_to_sweep_and_the_checks_are_bounded) {
  auto none = sweep_staging(
      "file:///nonexistent/tony-sweep", {},
      [](const yarn::application_id&) { return rm_verdict{}; }, rm_start, now);
  EXPECT_TRUE(none.removed.empty());
  EXPECT_TRUE(none.problems.empty());
  auto root =
      fs::temp_directory_path() / ("tony-sweep-max-" + std::to_string(::getpid()));
  for (int i = 1; i <= 5; ++i)
    fs::create_directories(root / ("application_1700000000000_000" + std::to_string(i)));
  sweep_options opts;
  opts.max_checks = 2;
  int asked = 0;
  auto result = sweep_staging(
      "file://" + root.string(), {},
      [&](const yarn::application_id&) {
        ++asked;
        return rm_verdict{rm_verdict::ended};
      },
      rm_start, now, opts);
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(result.removed, (std::vector<std::string>{"application_1700000000000_0001",
                                                      "application_1700000000000_0002"}));
  fs::remove_all(root);
}
