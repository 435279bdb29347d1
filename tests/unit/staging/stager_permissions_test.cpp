// Staging permissions as MapReduce's (runtime/staging/stager.hpp): the job's
// directory 0700 and its files 0600, the history dir 0750 and its event logs
// 0640; on file:// by mode, on HDFS by the `permission=` WebHDFS sends with
// MKDIRS and CREATE (against a loopback stand-in NameNode). And the
// NameNodes of an HA nameservice: the active one found past a dead one and
// a standby.

#include "runtime/staging/stager.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/files.hpp"
#include "messages/error.hpp"
#include "runtime/history/history_store.hpp"
#include "runtime/staging/remote_dir.hpp"
#include "web/http_server.hpp"

namespace tony::staging {
namespace {

namespace fs = std::filesystem;

unsigned mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

class file_staging : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    auto dir = base::make_private_dir("tony-stager-test-", why);
    ASSERT_TRUE(dir) << why;
    root = *dir;
    ::chmod(root.c_str(), 0755);
    source = root + "/source.txt";
    std::ofstream(source) << "job.json with [env] secrets\n";
    ::chmod(source.c_str(), 0644);
  }
  void TearDown() override { fs::remove_all(root); }

  std::string root;
  std::string source;
};

TEST_F(file_staging, the_jobs_dir_is_0700_and_its_files_0600) {
  auto s = make_file_stager(root + "/staging/application_1_0001");
  ASSERT_TRUE(s->put(source, "job.json", false));
  ASSERT_TRUE(s->put_shared(source, "tony.tgz", true));
  EXPECT_EQ(mode_of(root + "/staging/application_1_0001"), 0700u);
  EXPECT_EQ(mode_of(root + "/staging/application_1_0001/job.json"), 0600u);
  EXPECT_EQ(mode_of(root + "/staging/application_1_0001/tony.tgz"), 0600u);
}

TEST_F(file_staging, history_files_are_readable_by_the_group) {
  auto s = make_file_stager(root + "/history", history_permissions);
  ASSERT_TRUE(s->put(source, "application_1_0001.jsonl", false));
  EXPECT_EQ(mode_of(root + "/history"), 0750u);
  EXPECT_EQ(mode_of(root + "/history/application_1_0001.jsonl"), 0640u);
}

TEST_F(file_staging, a_directory_there_already_keeps_its_mode) {
  fs::create_directories(root + "/shared");
  ::chmod((root + "/shared").c_str(), 01777);
  auto s = make_file_stager(root + "/shared", history_permissions);
  ASSERT_TRUE(s->put(source, "a.jsonl", false));
  EXPECT_EQ(mode_of(root + "/shared"), 01777u);
  EXPECT_EQ(mode_of(root + "/shared/a.jsonl"), 0640u);
}

// What doubt() said, or the error's text.
std::string said(const tony::expected<std::string>& x) {
  return x ? *x : "error: " + describe(x.error());
}

// Shared caches reuse a copy only when nobody but the user could have
// written it (stager::doubt): in a root others can write, a copy someone
// else owns, or can write, or can move, is doubted.
TEST_F(file_staging, a_cached_copy_is_trusted_only_when_nobody_else_could_write_it) {
  auto bin = root + "/shared/bin";
  fs::create_directories(bin);
  ::chmod((root + "/shared").c_str(), 01777);
  auto cache = make_file_stager(bin + "/0123abcd");
  ASSERT_TRUE(cache->put_shared(source, "tony.tgz", true));
  auto trusted = cache->doubt("tony.tgz", "alice");
  ASSERT_TRUE(trusted) << describe(trusted.error());
  EXPECT_EQ(*trusted, "");

  auto file = bin + "/0123abcd/tony.tgz";
  ::chmod(file.c_str(), 0666);
  auto writable = cache->doubt("tony.tgz", "alice");
  ASSERT_TRUE(writable);
  EXPECT_EQ(*writable, file + " is writable by its group or others (mode 666)");
  ::chmod(file.c_str(), 0600);

  // The directory above the copy's: others may not move the copy's
  // directory, unless it is sticky.
  ::chmod(bin.c_str(), 0777);
  auto movable = cache->doubt("tony.tgz", "alice");
  ASSERT_TRUE(movable);
  EXPECT_EQ(*movable, bin + " is writable by its group or others (mode 777)");
  ::chmod(bin.c_str(), 01777);
  EXPECT_EQ(said(cache->doubt("tony.tgz", "alice")), "");
  ::chmod(bin.c_str(), 0755);

  // A link the user did not make there.
  fs::rename(file, file + ".real");
  fs::create_symlink(file + ".real", file);
  EXPECT_EQ(said(cache->doubt("tony.tgz", "alice")), file + " is a symbolic link");
  fs::remove(file);
  fs::rename(file + ".real", file);

  if (::geteuid() != 0)
    GTEST_SKIP() << "another owner needs root (chown)";
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
  auto planted = cache->doubt("tony.tgz", "alice");
  ASSERT_TRUE(planted);
  EXPECT_EQ(*planted, file + " is owned by uid 65534, not by uid 0");
}

// The same judgement on HDFS, from GETFILESTATUS's owner and permission.
struct owning_namenode {
  http::http_server server;
  int port = 0;
  std::map<std::string, std::pair<std::string, std::string>> status; // path: owner, mode

  owning_namenode() {
    port = *server.bind("127.0.0.1", 0);
    server.start(
        [this](const httplib::Request& req, const std::string&, httplib::Response& res) {
          auto path = req.path.substr(std::string{"/webhdfs/v1"}.size());
          auto i = status.find(path);
          if (req.get_param_value("op") != "GETFILESTATUS" || i == status.end()) {
            res.status = 404;
            return;
          }
          res.set_content(R"({"FileStatus":{"length":28,"modificationTime":1,"owner":")" +
                              i->second.first + R"(","permission":")" + i->second.second +
                              R"("}})",
                          "application/json");
        });
  }
};

TEST_F(file_staging, an_hdfs_copy_is_trusted_by_its_owner_and_permission) {
  owning_namenode nn;
  nn.status["/shared/bin/0123abcd/tony.tgz"] = {"alice", "600"};
  nn.status["/shared/bin/0123abcd"] = {"alice", "700"};
  nn.status["/shared/bin"] = {"hdfs", "1777"};
  webhdfs::namenode_http endpoint{"http://127.0.0.1:" + std::to_string(nn.port), {}};
  endpoint.auth.user = "alice";
  auto cache = make_webhdfs_stager(endpoint, "hdfs://nn:8020", "/shared/bin/0123abcd");
  EXPECT_EQ(said(cache->doubt("tony.tgz", "alice")), "");
  nn.status["/shared/bin/0123abcd"] = {"mallory", "755"};
  EXPECT_EQ(said(cache->doubt("tony.tgz", "alice")),
            "hdfs://nn:8020/shared/bin/0123abcd is owned by mallory, not by alice");
  nn.status["/shared/bin/0123abcd"] = {"alice", "700"};
  nn.status["/shared/bin"] = {"mallory", "755"};
  EXPECT_EQ(said(cache->doubt("tony.tgz", "alice")),
            "hdfs://nn:8020/shared/bin is owned by mallory, not by alice");
  nn.status["/shared/bin"] = {"alice", "755"};
  nn.status["/shared/bin/0123abcd/tony.tgz"] = {"alice", "664"};
  EXPECT_EQ(said(cache->doubt("tony.tgz", "alice")),
            "hdfs://nn:8020/shared/bin/0123abcd/tony.tgz is writable by its group or "
            "others (mode 664)");
}

// A NameNode and DataNode in one: records every request, answers as
// WebHDFS does.
struct fake_namenode {
  http::http_server server;
  int port = 0;
  std::mutex mutex;
  std::vector<std::string> requests; // "METHOD target"

  fake_namenode() {
    port = *server.bind("127.0.0.1", 0);
    server.set_body_policy([](const std::string&, const std::string& path) {
      http::body_rule rule;
      if (path.rfind("/dn/", 0) == 0)
        rule.max_bytes = 1 << 20;
      return rule;
    });
    server.start([this](const httplib::Request& req, const std::string& body,
                        httplib::Response& res) {
      {
        std::lock_guard<std::mutex> guard{mutex};
        requests.push_back(req.method + " " + req.target);
      }
      auto op = req.get_param_value("op");
      if (req.path.rfind("/dn/", 0) == 0) {
        res.status = body.empty() ? 400 : 201;
      } else if (op == "CREATE") {
        res.status = 307;
        res.set_header("Location", "http://127.0.0.1:" + std::to_string(port) + "/dn" +
                                       req.path.substr(11));
      } else if (op == "MKDIRS" || op == "RENAME") {
        res.set_content(R"({"boolean":true})", "application/json");
      } else if (op == "LISTSTATUS") {
        res.set_content(R"({"FileStatuses":{"FileStatus":[{"pathSuffix":"app_1.jsonl",)"
                        R"("type":"FILE","length":28,"modificationTime":1}]}})",
                        "application/json");
      } else if (op == "GETFILESTATUS") {
        res.set_content(R"({"FileStatus":{"length":28,"modificationTime":1}})",
                        "application/json");
      } else {
        res.status = 400;
      }
    });
  }

  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> guard{mutex};
    return requests;
  }
};

bool has(const std::vector<std::string>& xs, const std::string& part) {
  for (auto& x : xs)
    if (x.find(part) != std::string::npos)
      return true;
  return false;
}

TEST_F(file_staging, webhdfs_sends_the_permissions_with_mkdirs_and_create) {
  fake_namenode nn;
  webhdfs::namenode_http endpoint{"http://127.0.0.1:" + std::to_string(nn.port), {}};
  endpoint.auth.user = "alice";
  auto job = make_webhdfs_stager(endpoint, "hdfs://nn:8020", "/user/alice/.tony/app_1");
  ASSERT_TRUE(job->put(source, "job.json", false));
  auto history = make_webhdfs_stager(endpoint, "hdfs://nn:8020",
                                     "/user/alice/.tony/history", history_permissions);
  ASSERT_TRUE(history->put(source, "app_1.jsonl", false));
  auto seen = nn.seen();
  std::string all;
  for (auto& r : seen)
    all += r + "\n";
  EXPECT_TRUE(
      has(seen, "/user/alice/.tony/app_1?op=MKDIRS&user.name=alice&permission=700"))
      << all;
  EXPECT_TRUE(has(seen, "/user/alice/.tony/app_1/job.json.partial.")) << all;
  EXPECT_TRUE(has(seen, "op=CREATE&user.name=alice&overwrite=true&permission=600"))
      << all;
  EXPECT_TRUE(
      has(seen, "/user/alice/.tony/history?op=MKDIRS&user.name=alice&permission=750"))
      << all;
  EXPECT_TRUE(has(seen, "op=CREATE&user.name=alice&overwrite=true&permission=640"))
      << all;
  // Nothing is created without a permission.
  for (auto& r : seen) {
    bool makes = r.find("op=CREATE") != std::string::npos ||
                 r.find("op=MKDIRS") != std::string::npos;
    if (makes) {
      EXPECT_NE(r.find("permission="), std::string::npos) << r;
    }
  }
}

// A NameNode in standby: every WebHDFS call is a StandbyException.
struct standby_namenode {
  http::http_server server;
  int port = 0;
  std::atomic<int> hits{0};

  standby_namenode() {
    port = *server.bind("127.0.0.1", 0);
    server.start([this](const httplib::Request&, const std::string&,
                        httplib::Response& res) {
      ++hits;
      res.status = 403;
      res.set_content(R"({"RemoteException":{"exception":"StandbyException",)"
                      R"("message":"Operation category READ is not supported in state )"
                      R"(standby"}})",
                      "application/json");
    });
  }
};

// A port nothing listens on: bound, never listened, closed.
std::string refused_address() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

// An HA nameservice's NameNodes (webhdfs::webhdfs_address: comma-separated)
// as the stager, the history dir and remote_dir get them: a dead one and a
// standby are passed over for the active one.
TEST_F(file_staging, every_webhdfs_user_goes_to_the_active_namenode_of_a_list) {
  fake_namenode active;
  standby_namenode standby;
  webhdfs::namenode_http nn{refused_address() +
                                ",http://127.0.0.1:" + std::to_string(standby.port) +
                                ",127.0.0.1:" + std::to_string(active.port),
                            {}};
  nn.auth.user = "alice";
  auto job = make_webhdfs_stager(nn, "hdfs://prod", "/user/alice/.tony/app_1");
  auto put = job->put(source, "job.json", false);
  ASSERT_TRUE(put) << describe(put.error());
  EXPECT_EQ(put->url, "hdfs://prod/user/alice/.tony/app_1/job.json");
  EXPECT_TRUE(has(active.seen(), "/user/alice/.tony/app_1?op=MKDIRS&user.name=alice"));
  EXPECT_GE(standby.hits.load(), 1);

  auto listed = list_dir("hdfs://prod/user/alice/.tony/history", nn);
  ASSERT_TRUE(listed) << describe(listed.error());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().name, "app_1.jsonl");

  auto history = history::open_history("hdfs://prod/user/alice/.tony/history", nn);
  ASSERT_TRUE(history) << describe(history.error());
  auto logs = (*history)->list();
  ASSERT_TRUE(logs) << describe(logs.error());
  EXPECT_TRUE(has(active.seen(), "/user/alice/.tony/history?op=LISTSTATUS"));
}

// Without the list (one address) a standby's answer is the answer: the
// stager reports the NameNode's message.
TEST_F(file_staging, a_single_standby_namenode_is_an_error_with_its_message) {
  standby_namenode standby;
  webhdfs::namenode_http nn{"127.0.0.1:" + std::to_string(standby.port), {}};
  nn.auth.user = "alice";
  auto job = make_webhdfs_stager(nn, "hdfs://nn:8020", "/user/alice/.tony/app_1");
  auto put = job->put(source, "job.json", false);
  ASSERT_FALSE(put);
  EXPECT_NE(describe(put.error()).find("not supported in state standby"),
            std::string::npos)
      << describe(put.error());
  EXPECT_EQ(standby.hits.load(), 1);
}

} // namespace
} // namespace tony::staging
