// How tony's WebHDFS calls authenticate (the parameter each URL carries)
// and which endpoint a configuration names (HTTP or HTTPS-only clusters).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "hadoop/webhdfs.hpp"
#include "messages/error.hpp"

namespace tony::webhdfs {
namespace {

TEST(webhdfs, simple_calls_name_the_user) {
  namenode_http nn{"nn:9870", {}};
  nn.auth.user = "alice";
  EXPECT_EQ(op_url(nn, "/user/alice/x", "GETFILESTATUS"),
            "http://nn:9870/webhdfs/v1/user/alice/x?op=GETFILESTATUS&user.name=alice");
}

TEST(webhdfs, a_proxy_user_is_asked_for_with_doas) {
  namenode_http nn{"nn:9870", {}};
  nn.auth.user = "tony";
  nn.auth.proxy_user = "alice";
  EXPECT_EQ(op_url(nn, "/user/alice", "MKDIRS"),
            "http://nn:9870/webhdfs/v1/user/alice?op=MKDIRS&user.name=tony&doas=alice");
  // A delegation token is already alice's.
  nn.auth.delegation = "HAAEcm9vdA";
  EXPECT_EQ(op_url(nn, "/user/alice", "MKDIRS"),
            "http://nn:9870/webhdfs/v1/user/alice?op=MKDIRS&delegation=HAAEcm9vdA");
}

TEST(webhdfs, a_delegation_token_replaces_every_other_parameter) {
  namenode_http nn{"https://nn:9871", {}};
  nn.auth.user = "alice";
  nn.auth.delegation = "HAAEcm9vdA";
  EXPECT_EQ(op_url(nn, "/tmp", "LISTSTATUS"),
            "https://nn:9871/webhdfs/v1/tmp?op=LISTSTATUS&delegation=HAAEcm9vdA");
}

TEST(webhdfs, a_bare_address_is_http) {
  EXPECT_EQ(base_url("nn:9870"), "http://nn:9870");
  EXPECT_EQ(base_url("https://nn:9871"), "https://nn:9871");
}

TEST(webhdfs, an_https_only_cluster_is_reached_at_its_https_address) {
  hadoop::configuration conf;
  EXPECT_EQ(namenode_address(conf, "nn"), "nn:9870");
  conf.set("dfs.namenode.http-address", "0.0.0.0:50070");
  EXPECT_EQ(namenode_address(conf, "nn"), "nn:50070");
  conf.set("dfs.http.policy", "HTTPS_ONLY");
  EXPECT_EQ(namenode_address(conf, "nn"), "https://nn:9871");
  conf.set("dfs.namenode.https-address", "0.0.0.0:50470");
  EXPECT_EQ(namenode_address(conf, "nn"), "https://nn:50470");
  conf.set("dfs.http.policy", "HTTP_AND_HTTPS");
  EXPECT_EQ(namenode_address(conf, "nn"), "nn:50070");
}

TEST(webhdfs, an_html_401_says_what_it_wants) {
  auto text =
      remote_message("<html><head><title>Error 401 Authentication required"
                     "</title></head><body><h2>HTTP ERROR 401</h2></body></html>");
  EXPECT_NE(text.find("Kerberos (SPNEGO) or a delegation token"), std::string::npos)
      << text;
  EXPECT_EQ(remote_message(R"({"RemoteException":{"message":"File /x not found."}})"),
            "File /x not found.");
}

} // namespace
} // namespace tony::webhdfs

// -- HA nameservices ----------------------------------------------------------

namespace tony::webhdfs {
namespace {

// A client configuration as an HA cluster's (doc/operations.md, HDFS HA).
hadoop::configuration ha_conf() {
  hadoop::configuration conf;
  conf.set("fs.defaultFS", "hdfs://prod");
  conf.set("dfs.nameservices", "prod,other");
  conf.set("dfs.ha.namenodes.prod", "nn1, nn2");
  conf.set("dfs.namenode.rpc-address.prod.nn1", "a.example:8020");
  conf.set("dfs.namenode.rpc-address.prod.nn2", "b.example:8020");
  conf.set("dfs.namenode.http-address.prod.nn1", "a.example:9870");
  conf.set("dfs.namenode.http-address.prod.nn2", "b.example:9870");
  conf.set("dfs.namenode.https-address.prod.nn1", "a.example:9871");
  conf.set("dfs.namenode.https-address.prod.nn2", "b.example:9871");
  conf.set("dfs.client.failover.proxy.provider.prod",
           "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider");
  return conf;
}

TEST(webhdfs_ha, a_nameservice_resolves_to_its_namenodes_in_order) {
  auto conf = ha_conf();
  auto got = namenode_addresses(conf, "prod");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, (std::vector<std::string>{"a.example:9870", "b.example:9870"}));
  conf.set("dfs.http.policy", "HTTPS_ONLY");
  got = namenode_addresses(conf, "prod");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, (std::vector<std::string>{"https://a.example:9871",
                                            "https://b.example:9871"}));
}

TEST(webhdfs_ha, a_host_or_an_address_with_a_port_is_one_namenode) {
  auto conf = ha_conf();
  conf.set("dfs.namenode.http-address", "0.0.0.0:50070");
  auto got = namenode_addresses(conf, "nn.example:8020");
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (std::vector<std::string>{"nn.example:50070"}));
  // "prod" with a port is a host called prod, as in Hadoop.
  got = namenode_addresses(conf, "prod:8020");
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (std::vector<std::string>{"prod:50070"}));
}

TEST(webhdfs_ha, a_nameservice_lacking_a_key_is_refused_naming_it) {
  auto conf = ha_conf();
  auto got = namenode_addresses(conf, "other");
  ASSERT_FALSE(got);
  EXPECT_NE(
      describe(got.error()).find("dfs.client.failover.proxy.provider.other is not set"),
      std::string::npos)
      << describe(got.error());
  conf.set("dfs.client.failover.proxy.provider.other", "x");
  got = namenode_addresses(conf, "other");
  ASSERT_FALSE(got);
  EXPECT_NE(describe(got.error()).find("dfs.ha.namenodes.other is not set"),
            std::string::npos)
      << describe(got.error());
  conf.set("dfs.ha.namenodes.other", "n1,n2");
  conf.set("dfs.namenode.http-address.other.n1", "c:1");
  got = namenode_addresses(conf, "other");
  ASSERT_FALSE(got);
  EXPECT_NE(describe(got.error()).find("dfs.namenode.http-address.other.n2"),
            std::string::npos)
      << describe(got.error());
}

TEST(webhdfs_ha, a_standby_answer_is_recognized) {
  response standby{
      403,
      R"({"RemoteException":{"exception":"StandbyException","javaClassName":)"
      R"("org.apache.hadoop.ipc.StandbyException","message":"Operation category )"
      R"(READ is not supported in state standby."}})",
      {}};
  EXPECT_TRUE(is_standby(standby));
  response missing{
      404, R"({"RemoteException":{"exception":"FileNotFoundException"}})", {}};
  EXPECT_FALSE(is_standby(missing));
  EXPECT_FALSE(is_standby(response{200, "{}", {}}));
}

// A local HTTP server answering every request with one fixed response.
class fixed_server {
public:
  fixed_server(int status, std::string body) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 8);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    auto reply = "HTTP/1.1 " + std::to_string(status) +
                 " X\r\nContent-Type: application/json\r\nConnection: close\r\n"
                 "Content-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n" + body;
    thread_ = std::thread([this, reply] {
      for (;;) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0)
          return;
        char buf[4096];
        (void)::recv(c, buf, sizeof(buf), 0);
        // Counted before the answer goes out: a client that has it sees
        // the count (counted after, a test could read 2 of 3 hits).
        ++hits;
        (void)::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
        ::close(c);
      }
    });
  }
  ~fixed_server() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::atomic<int> hits{0};

private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// A port nothing listens on: bound, never listened, closed.
// A port bound and never listened on, held for the test's lifetime:
// connections to it are refused (RST), and no other process can take the
// port meanwhile (a port closed again could be reused by a parallel test).
class refused_port {
public:
  refused_port() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    address_ = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  }
  ~refused_port() { ::close(fd_); }
  refused_port(const refused_port&) = delete;
  refused_port& operator=(const refused_port&) = delete;
  const std::string& address() const { return address_; }

private:
  int fd_ = -1;
  std::string address_;
};

const char* standby_body =
    R"({"RemoteException":{"exception":"StandbyException","message":"in state standby"}})";

std::string status_url(const std::string& base) {
  return base + "/webhdfs/v1/?op=GETFILESTATUS&user.name=alice";
}

TEST(webhdfs_ha,
     a_call_goes_past_a_dead_and_a_standby_namenode_and_remembers_the_active) {
  fixed_server standby(403, standby_body);
  fixed_server active(200, R"({"FileStatus":{}})");
  refused_port refused;
  std::vector<std::string> bases{refused.address(), standby.address(), active.address()};
  std::size_t which = 0;
  http_auth auth;
  auth.user = "alice";
  auto r = call_active(bases, &which, status_url, "GET", auth);
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(which, 2u);
  EXPECT_EQ(standby.hits.load(), 1);
  // The next call goes to the active one first.
  r = call_active(bases, &which, status_url, "GET", auth);
  ASSERT_TRUE(r);
  EXPECT_EQ(standby.hits.load(), 1);
  EXPECT_EQ(active.hits.load(), 2);
}

// What a NameNode becoming active answered in the secure HA tier for a
// delegation token it had not yet read from the shared edits.
const char* retriable_body =
    R"({"RemoteException":{"exception":"SecurityException","javaClassName":)"
    R"("java.lang.SecurityException","message":"Failed to obtain user group )"
    R"(information: org.apache.hadoop.ipc.RetriableException: org.apache.hadoop.)"
    R"(security.token.SecretManager$InvalidToken: Token for real user: , can't be )"
    R"(found in cache"}})";

TEST(webhdfs_ha, a_namenode_becoming_active_is_asked_again) {
  EXPECT_TRUE(is_retriable(response{403, retriable_body, {}}));
  EXPECT_TRUE(is_retriable(
      response{403, R"({"RemoteException":{"exception":"RetriableException"}})", {}}));
  EXPECT_FALSE(is_retriable(response{403, standby_body, {}}));
  EXPECT_FALSE(is_retriable(response{
      403, R"({"RemoteException":{"exception":"AccessControlException"}})", {}}));
  fixed_server becoming(403, retriable_body);
  std::size_t which = 0;
  auto r = call_active({becoming.address()}, &which, status_url, "GET", {}, {}, false, 3);
  ASSERT_FALSE(r);
  auto text = describe(r.error());
  EXPECT_NE(text.find("no NameNode answered as active (3 rounds)"), std::string::npos)
      << text;
  EXPECT_NE(text.find(": not ready (Failed to obtain user group information"),
            std::string::npos)
      << text;
  EXPECT_EQ(becoming.hits.load(), 3);
}

TEST(webhdfs_ha, an_error_that_is_not_standby_is_the_answer) {
  fixed_server missing(404,
                       R"({"RemoteException":{"exception":"FileNotFoundException"}})");
  fixed_server active(200, "{}");
  std::size_t which = 0;
  auto r =
      call_active({missing.address(), active.address()}, &which, status_url, "GET", {});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(active.hits.load(), 0);
}

TEST(webhdfs_ha, no_active_namenode_is_an_error_naming_each_in_bounded_time) {
  fixed_server standby(403, standby_body);
  refused_port refused;
  auto dead = refused.address();
  std::size_t which = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto r =
      call_active({dead, standby.address()}, &which, status_url, "GET", {}, {}, false, 3);
  auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r);
  auto text = describe(r.error());
  EXPECT_NE(text.find("no NameNode answered as active (3 rounds)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("http://" + dead + ": "), std::string::npos) << text;
  EXPECT_NE(text.find("http://" + standby.address() + ": standby (in state standby)"),
            std::string::npos)
      << text;
  EXPECT_EQ(standby.hits.load(), 3);
  // Pauses of 0.2 and 0.4 s between the three rounds.
  EXPECT_LT(took, std::chrono::seconds{5});
}

} // namespace
} // namespace tony::webhdfs
