// tony-history serve with authentication and the cluster's ACLs
// (history/history_server): an authenticated visitor is shown the jobs
// whose owner, view ACL (as the event log recorded it) or the admins admit
// them, in the list and on every route of a job; with the ACLs off every
// visitor sees every job; a request the authenticator refuses reaches no
// route.

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>

#include "history/history_server.hpp"
#include "runtime/history/event_log.hpp"

namespace tony::history {
namespace {

namespace fs = std::filesystem;

// An ostream whose text another thread may read while it is written.
class shared_text : public std::streambuf {
public:
  std::string text() {
    std::lock_guard<std::mutex> guard{mutex_};
    return text_;
  }

protected:
  int overflow(int c) override {
    if (c != EOF) {
      std::lock_guard<std::mutex> guard{mutex_};
      text_.push_back(static_cast<char>(c));
    }
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard<std::mutex> guard{mutex_};
    text_.append(s, static_cast<size_t>(n));
    return n;
  }

private:
  std::mutex mutex_;
  std::string text_;
};

void write_job(const fs::path& jobs, const std::string& app_id, const std::string& owner,
               const std::optional<std::string>& view_acl) {
  fs::create_directories(jobs / app_id);
  auto w = event_log_writer::open((jobs / app_id / "events.jsonl").string());
  ASSERT_TRUE(w);
  job_event e;
  e.kind = "job_submitted";
  e.time_ms = 1000;
  e.job.app_id = app_id;
  e.job.name = "job-of-" + owner;
  e.info["user"] = owner;
  if (view_acl)
    e.info["view_acl"] = *view_acl;
  e.task_counts["worker"] = 1;
  (*w)->write(e);
}

class history_acl : public ::testing::Test {
protected:
  void SetUp() override {
    jobs_ =
        fs::temp_directory_path() / ("tony-history-acl-" + std::to_string(::getpid()));
    fs::remove_all(jobs_);
    write_job(jobs_, "application_1_0001", "alice", std::nullopt);
    write_job(jobs_, "application_1_0002", "alice", "bob");
    write_job(jobs_, "application_1_0003", "carol", "*");
    write_job(jobs_, "application_1_0004", "carol", " ");
  }

  void TearDown() override {
    stop_ = true;
    if (server_.joinable())
      server_.join();
    fs::remove_all(jobs_);
  }

  // Serves the jobs; the visitor is who the X-Test-User header names.
  void serve(std::optional<std::string> admins) {
    history_options opts;
    opts.dirs = {jobs_.string()};
    serve_options so;
    so.authenticate = [](const httplib::Request& req, httplib::Response& res) {
      auto user = req.get_header_value("X-Test-User");
      if (!user.empty())
        return std::optional<std::string>{user};
      res.status = 401;
      res.set_content("who are you?\n", "text/plain");
      return std::optional<std::string>{};
    };
    if (admins)
      so.admins = base::access_list{*admins};
    server_ = std::thread{[this, opts, so] {
      std::ostream out{&said_}, err{&said_};
      serve_history(opts, so, stop_, out, err);
    }};
    std::regex url{R"(serving at http://127\.0\.0\.1:(\d+)/)"};
    for (int i = 0; i < 500 && port_ == 0; ++i) {
      std::smatch m;
      auto text = said_.text();
      if (std::regex_search(text, m, url))
        port_ = std::stoi(m[1]);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_NE(port_, 0) << said_.text();
  }

  httplib::Result get(const std::string& path, const std::string& user) {
    httplib::Client client{"127.0.0.1", port_};
    httplib::Headers headers;
    if (!user.empty())
      headers.emplace("X-Test-User", user);
    return client.Get(path.c_str(), headers);
  }

  fs::path jobs_;
  shared_text said_;
  std::atomic<bool> stop_{false};
  std::thread server_;
  int port_ = 0;
};

bool lists(const std::string& page, const std::string& app_id) {
  return page.find(app_id) != std::string::npos;
}

TEST_F(history_acl, a_visitor_is_listed_and_shown_what_the_acls_allow) {
  serve(std::string{"yarn"});
  auto bob = get("/", "bob");
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->status, 200);
  EXPECT_FALSE(lists(bob->body, "application_1_0001")) << "alice's private job";
  EXPECT_TRUE(lists(bob->body, "application_1_0002")) << "its view ACL names bob";
  EXPECT_TRUE(lists(bob->body, "application_1_0003")) << "its view ACL is *";
  EXPECT_FALSE(lists(bob->body, "application_1_0004")) << "an empty view ACL";
  for (auto path :
       {"/jobs/application_1_0001/", "/jobs/application_1_0001/api/job",
        "/jobs/application_1_0001/config", "/jobs/application_1_0001/tensorboard/"}) {
    auto r = get(path, "bob");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 403) << path;
    EXPECT_NE(r->body.find("user bob may not view application application_1_0001: only "
                           "its owner (alice)"),
              std::string::npos)
        << r->body;
  }
  auto shared = get("/jobs/application_1_0002/api/job", "bob");
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->status, 200);
  EXPECT_NE(shared->body.find("application_1_0002"), std::string::npos);

  auto alice = get("/", "alice");
  ASSERT_TRUE(alice);
  EXPECT_TRUE(lists(alice->body, "application_1_0001"));
  EXPECT_TRUE(lists(alice->body, "application_1_0002"));
  EXPECT_FALSE(lists(alice->body, "application_1_0004")) << "carol's private job";
  EXPECT_EQ(get("/jobs/application_1_0004/api/job", "carol")->status, 200) << "its owner";
  auto admin = get("/", "yarn");
  ASSERT_TRUE(admin);
  for (auto id : {"application_1_0001", "application_1_0002", "application_1_0003",
                  "application_1_0004"})
    EXPECT_TRUE(lists(admin->body, id)) << id << " for an admin";
  EXPECT_EQ(get("/jobs/application_1_0004/api/job", "yarn")->status, 200);
}

TEST_F(history_acl, a_request_the_authenticator_refuses_reaches_no_route) {
  serve(std::string{"yarn"});
  for (auto path : {"/", "/jobs/application_1_0003/api/job", "/nothing-here"}) {
    auto r = get(path, "");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path;
    EXPECT_EQ(r->body, "who are you?\n") << path;
  }
}

TEST_F(history_acl, with_the_acls_off_every_authenticated_visitor_sees_every_job) {
  serve(std::nullopt);
  auto bob = get("/", "bob");
  ASSERT_TRUE(bob);
  for (auto id : {"application_1_0001", "application_1_0002", "application_1_0003",
                  "application_1_0004"})
    EXPECT_TRUE(lists(bob->body, id)) << id;
  EXPECT_EQ(get("/jobs/application_1_0001/api/job", "bob")->status, 200);
}

} // namespace
} // namespace tony::history
