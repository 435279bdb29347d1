// The local backend's cluster (runtime/local/local_cluster.hpp) as the AM's
// node manager sees it: start() answers at once and the launch happens on the
// cluster's launcher thread, a launch that fails completes the container, and
// a container stopped while its launch waits never runs. A launch is held
// back with a `tar` on the containers' PATH that waits for a gate file.

#include "runtime/local/local_cluster.hpp"

#include "messages/error.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>

using namespace tony;
using tony::local::exit_killed_by_am;
using tony::local::local_cluster;
using tony::local::local_cluster_config;
namespace fs = std::filesystem;

namespace {

class local_cluster_test : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tony-local-cluster-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ / "bin");
    // tar waits (up to 20 s) for the gate file, then does the real work.
    auto shim = root_ / "bin" / "tar";
    std::ofstream{shim} << "#!/bin/sh\n"
                        << "i=0\n"
                        << "while [ ! -e '" << gate().string()
                        << "' ] && [ $i -lt 200 ]; do\n"
                        << "  sleep 0.1; i=$((i+1))\n"
                        << "done\n"
                        << "exec /bin/tar \"$@\"\n";
    fs::permissions(shim, fs::perms::owner_all);
    // An archive to unpack: one file.
    fs::create_directories(root_ / "content");
    std::ofstream{root_ / "content" / "hello.txt"} << "hello\n";
    ASSERT_EQ(std::system(("/bin/tar -cf " + (root_ / "content.tar").string() + " -C " +
                           (root_ / "content").string() + " .")
                              .c_str()),
              0);
    local_cluster_config cfg;
    cfg.app_id = "application_1_0001";
    cfg.job_dir = (root_ / "job").string();
    cfg.capacity = {4096, 8, 0};
    cfg.base_env = {{"PATH", (root_ / "bin").string() + ":/usr/bin:/bin"}};
    cfg.stop_grace_ms = 500;
    cfg.memory_check_ms = 0;
    cluster_ = std::make_unique<local_cluster>(cfg);
  }

  void TearDown() override {
    open_gate();
    cluster_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  fs::path gate() const { return root_ / "gate"; }
  void open_gate() { std::ofstream{gate()} << "open\n"; }

  std::vector<container> grant(int n) {
    allocate_request req;
    container_ask ask;
    ask.priority = 1;
    ask.task_type = "worker";
    ask.capability = {256, 1, 0};
    ask.count = n;
    req.asks.push_back(ask);
    return cluster_->allocate(req).allocated;
  }

  launch_spec spec_for(const container& c, bool with_archive) {
    launch_spec spec;
    spec.target = c;
    spec.command = {"echo", "ran"};
    if (with_archive) {
      local_resource res;
      res.name = "content";
      res.url = "file://" + (root_ / "content.tar").string();
      res.archive = true;
      spec.resources.push_back(res);
    }
    return spec;
  }

  /// `id`'s completion (each is reported once: those of others are kept),
  /// waiting at most 20 s.
  container_completion completion_of(const std::string& id) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      allocate_request req;
      for (auto& c : cluster_->allocate(req).completed)
        completed_[c.container_id] = c;
      if (auto i = completed_.find(id); i != completed_.end())
        return i->second;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << id << " never completed";
    return {};
  }

  fs::path out_of(const container& c) const {
    return fs::path(cluster_->container_dir(c.id)) / "container.out";
  }

  fs::path root_;
  std::unique_ptr<local_cluster> cluster_;
  std::map<std::string, container_completion> completed_;
};

} // namespace

TEST_F(local_cluster_test,
       a_start_answers_before_its_launch_and_the_launches_keep_order) {
  // The first container's archive is held at the gate: start() must answer
  // for both while nothing has been launched yet.
  auto granted = grant(2);
  ASSERT_EQ(granted.size(), 2u);
  auto first = cluster_->start(spec_for(granted[0], true));
  ASSERT_TRUE(first) << describe(first.error());
  auto second = cluster_->start(spec_for(granted[1], false));
  ASSERT_TRUE(second) << describe(second.error());
  EXPECT_EQ(*first, granted[0].id);
  EXPECT_FALSE(fs::exists(out_of(granted[0])));
  EXPECT_FALSE(fs::exists(out_of(granted[1]))); // queued behind the first
  open_gate();
  EXPECT_EQ(completion_of(granted[0].id).exit_status, 0);
  EXPECT_EQ(completion_of(granted[1].id).exit_status, 0);
  std::ifstream in{out_of(granted[0])};
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "ran");
  EXPECT_TRUE(fs::exists(fs::path(cluster_->container_dir(granted[0].id)) / "content" /
                         "hello.txt"));
}

TEST_F(local_cluster_test, a_start_of_an_unknown_or_started_container_fails_at_once) {
  container stranger;
  stranger.id = "container_1_0001_01_000099";
  auto unknown = cluster_->start(spec_for(stranger, false));
  ASSERT_FALSE(unknown);
  EXPECT_NE(describe(unknown.error()).find("was not allocated"), std::string::npos);
  auto granted = grant(1);
  ASSERT_TRUE(cluster_->start(spec_for(granted[0], false)));
  auto again = cluster_->start(spec_for(granted[0], false));
  ASSERT_FALSE(again);
  EXPECT_NE(describe(again.error()).find("already started"), std::string::npos);
}

TEST_F(local_cluster_test, a_launch_that_fails_completes_the_container_with_its_reason) {
  open_gate();
  auto granted = grant(1);
  auto spec = spec_for(granted[0], false);
  local_resource missing;
  missing.name = "data";
  missing.url = "file://" + (root_ / "no-such-file").string();
  spec.resources.push_back(missing);
  ASSERT_TRUE(cluster_->start(spec)); // accepted, as YARN accepts it
  auto done = completion_of(granted[0].id);
  EXPECT_EQ(done.exit_status, -1);
  EXPECT_NE(done.diagnostics.find("Container launch failed"), std::string::npos)
      << done.diagnostics;
  EXPECT_NE(done.diagnostics.find("resource 'data' not found"), std::string::npos)
      << done.diagnostics;
}

TEST_F(local_cluster_test, a_container_stopped_while_its_launch_waits_never_runs) {
  auto granted = grant(2);
  ASSERT_TRUE(cluster_->start(spec_for(granted[0], true)));  // held at the gate
  ASSERT_TRUE(cluster_->start(spec_for(granted[1], false))); // queued behind it
  // The stop waits for the launcher; the gate opens while it waits.
  std::thread stopper{[&] { cluster_->stop(granted[1].id); }};
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  open_gate();
  stopper.join();
  auto stopped = completion_of(granted[1].id);
  EXPECT_EQ(stopped.exit_status, exit_killed_by_am);
  EXPECT_FALSE(fs::exists(out_of(granted[1])));
  EXPECT_EQ(completion_of(granted[0].id).exit_status, 0);
}
