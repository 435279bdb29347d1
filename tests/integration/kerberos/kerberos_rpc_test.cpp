// tony's SASL layer against real peers: an MIT KDC and Hadoop's own RPC
// server (tests/integration/kerberos/fixture.sh starts both; the ctest
// fixture `kerberos` names its directory in TONY_KERBEROS_FIXTURE). Without
// that variable every test skips and says so.
//
//   KERBEROS / GSSAPI  ApplicationClientProtocol at QOP auth, auth-int and
//                      auth-conf, from a ticket cache and from a keytab
//   TOKEN / DIGEST-MD5 ApplicationMasterProtocol at the same three QOPs
//   bad input          no ticket, expired ticket, keytab without the
//                      principal, unknown principal, a server principal
//                      that is not the configured one, an unreachable or
//                      silent KDC, SIMPLE against KERBEROS and the reverse,
//                      a QOP the client configuration excludes
//
// A recording relay between client and server shows what the wire carries:
// a marker sent under auth-int travels in clear (signed), under auth-conf
// it never appears (encrypted).

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hadoop/configuration.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/ipc_connection.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/yarn/application_client.hpp"
#include "hadoop/yarn/proto/yarn.pb.h"
#include "hadoop/yarn/protocols.hpp"

namespace tony::hadoop {
namespace {

using namespace std::chrono_literals;

constexpr auto call_timeout = 30s;

// -- the fixture's world ----------------------------------------------------------

std::map<std::string, std::string> read_env(const std::string& file) {
  std::map<std::string, std::string> result;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos)
      result[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return result;
}

int run(const std::string& command) {
  auto status = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A TCP relay that records every byte in both directions.
class recording_relay {
public:
  recording_relay(const std::string& host, uint16_t to)
      : host_(host)
      , to_(to) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 4);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread{[this] { serve(); }};
  }

  ~recording_relay() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }

  uint16_t port() const { return port_; }

  std::string seen() {
    std::lock_guard<std::mutex> guard{mtx_};
    return seen_;
  }

private:
  void serve() {
    std::vector<std::thread> pumps;
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0)
        continue;
      int client = ::accept(listen_fd_, nullptr, nullptr);
      if (client < 0)
        continue;
      pumps.emplace_back([this, client] { pump(client); });
    }
    for (auto& t : pumps)
      t.join();
  }

  // Copies one connection both ways until either side closes.
  void pump(int client) {
    int server = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(to_);
    ::inet_pton(AF_INET, host_.c_str(), &addr.sin_addr);
    if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      char buf[65536];
      bool done = false;
      while (!stop_ && !done) {
        if (::poll(fds, 2, 200) < 0)
          break;
        for (int i = 0; i < 2 && !done; ++i) {
          if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
            continue;
          auto n = ::recv(fds[i].fd, buf, sizeof buf, 0);
          if (n <= 0) {
            done = true;
            break;
          }
          {
            std::lock_guard<std::mutex> guard{mtx_};
            seen_.append(buf, static_cast<size_t>(n));
          }
          ::send(fds[1 - i].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
        }
      }
    }
    ::close(client);
    ::close(server);
  }

  std::string host_;
  uint16_t to_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mtx_;
  std::string seen_;
  std::thread thread_;
};

std::string printable_text(size_t n) {
  std::string out;
  out.reserve(n);
  uint32_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245 + 12345;
    out.push_back(static_cast<char>('a' + (x >> 16) % 26));
  }
  return out;
}

class kerberos_rpc : public ::testing::Test {
protected:
  void SetUp() override {
    auto* dir = std::getenv("TONY_KERBEROS_FIXTURE");
    if (dir == nullptr || *dir == '\0')
      GTEST_SKIP() << "TONY_KERBEROS_FIXTURE is not set: start the world with "
                      "tests/integration/kerberos/fixture.sh start DIR and export it";
    env_ = read_env(std::string{dir} + "/env");
    ASSERT_FALSE(env_["KRB5_CONFIG"].empty()) << "no env file in " << dir;
    ::setenv("KRB5_CONFIG", env_["KRB5_CONFIG"].c_str(), 1);
    char tmpl[] = "/tmp/tony-krb-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    scratch_ = tmpl;
    ccache_ = scratch_ + "/ccache";
    ::setenv("KRB5CCNAME", ("FILE:" + ccache_).c_str(), 1);
  }

  void TearDown() override {
    if (!scratch_.empty())
      run("rm -rf '" + scratch_ + "'");
  }

  std::string realm() { return env_["TONY_REALM"]; }
  std::string principal(const std::string& who) { return who + "@" + realm(); }
  std::string keytab(const std::string& who) {
    return env_["TONY_KEYTABS"] + "/" + who + ".keytab";
  }
  uint16_t port(const std::string& key) {
    return static_cast<uint16_t>(std::stoi(env_.at(key)));
  }
  std::string host() { return env_["TONY_SERVER_HOST"]; }

  /// kinit into this test's ticket cache; `lifetime` as kinit -l takes it.
  void kinit(const std::string& who, const std::string& lifetime = {}) {
    auto cmd = "kinit -kt '" + keytab(who) + "' -c 'FILE:" + ccache_ + "' " +
               (lifetime.empty() ? "" : "-l " + lifetime + " ") + principal(who);
    ASSERT_EQ(run(cmd), 0) << cmd;
  }

  std::shared_ptr<kerberos_credentials> login(const std::string& who = {},
                                              const std::string& tab = {}) {
    auto creds = kerberos_credentials::login({who, tab});
    EXPECT_TRUE(creds) << creds.error().message();
    return creds ? *creds : nullptr;
  }

  /// The client configuration of a cluster whose RM listens on `rm_port`.
  configuration client_conf(uint16_t rm_port,
                            const std::string& rm_principal = "rm/_HOST@TONY.TEST") {
    configuration conf;
    conf.set("yarn.resourcemanager.address", host() + ":" + std::to_string(rm_port));
    conf.set("yarn.resourcemanager.principal", rm_principal);
    conf.set("hadoop.security.authentication", "kerberos");
    return conf;
  }

  yarn::application_client rm_client(const configuration& conf,
                                     std::shared_ptr<const kerberos_credentials> creds,
                                     bool allow_simple = false) {
    connection_options opts;
    opts.allow_simple_fallback = allow_simple;
    opts.connect_timeout = 5s;
    ipc_ = std::make_shared<ipc_client>(opts);
    auto rm =
        yarn::application_client::from_configuration(ipc_, conf, "", std::move(creds));
    EXPECT_TRUE(rm) << rm.error().message();
    return std::move(*rm);
  }

  /// getApplicationReport's diagnostics: the server's view of the caller.
  expected<std::string> whoami(yarn::application_client& rm) {
    auto report = rm.get_application_report(yarn::application_id{1700000000000, 1},
                                            deadline_after(call_timeout));
    if (!report)
      return report.error();
    return report->diagnostics;
  }

  /// Submits `echo` in the AM environment and reads the server's echo back.
  expected<std::string> echo(yarn::application_client& rm, const std::string& echo) {
    auto app = rm.get_new_application(deadline_after(call_timeout));
    if (!app)
      return app.error();
    yarn::submission_context ctx;
    ctx.id = app->id;
    ctx.name = "sasl-echo";
    ctx.am_launch.env["ECHO"] = echo;
    if (auto ok = rm.submit_application(ctx, deadline_after(call_timeout)); !ok)
      return ok.error();
    auto report = rm.get_application_report(app->id, deadline_after(call_timeout));
    if (!report)
      return report.error();
    auto at = report->diagnostics.find(" echo=");
    if (at == std::string::npos)
      return error{error_code::protocol, "no echo in " + report->diagnostics};
    return report->diagnostics.substr(at + 6);
  }

  /// A connection of its own to `conf`'s RM, to see what was negotiated.
  std::unique_ptr<ipc_connection> open_connection(yarn::application_client& rm) {
    connection_options opts;
    opts.allow_simple_fallback = false;
    auto conn = ipc_connection::open(rm.target(), opts, std::string(16, 'c'),
                                     deadline_after(call_timeout));
    EXPECT_TRUE(conn) << conn.error().message();
    return conn ? std::move(*conn) : nullptr;
  }

  /// Sends a marker through a recording relay to the server `port_key` and
  /// checks it came back over a connection of QOP `wanted`; returns the
  /// marker and every byte the relay saw.
  std::pair<std::string, std::string> echo_through_relay(const std::string& port_key,
                                                         qop wanted) {
    kinit("alice");
    recording_relay relay{host(), port(port_key)};
    auto rm = rm_client(client_conf(relay.port()), login());
    auto marker = "tony-" + port_key + "-marker-" + printable_text(8);
    auto back = echo(rm, marker);
    EXPECT_TRUE(back) << back.error().message();
    EXPECT_EQ(back ? *back : std::string{}, marker);
    auto conn = open_connection(rm);
    EXPECT_TRUE(conn);
    if (conn) {
      EXPECT_EQ(conn->negotiated_qop(), wanted);
      conn->close();
    }
    return {marker, relay.seen()};
  }

  /// A port on the test host that nothing listens on (bound, then freed).
  std::string closed_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    auto addr = bind_any_port(fd);
    ::close(fd);
    return host() + ":" + std::to_string(ntohs(addr.sin_port));
  }

  /// Binds `fd` to a free port of the test host.
  sockaddr_in bind_any_port(int fd) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    ::inet_pton(AF_INET, host().c_str(), &addr.sin_addr);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    return addr;
  }

  /// A krb5.conf like the fixture's whose KDC is at `kdc` instead.
  void use_kdc(const std::string& kdc) {
    std::ifstream in(env_["KRB5_CONFIG"]);
    std::string text{std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>()};
    // The realm's entry, not libdefaults' dns_lookup_kdc.
    auto at = text.find("\n    kdc = ");
    ASSERT_NE(at, std::string::npos);
    auto end = text.find('\n', at + 1);
    text.replace(at, end - at, "\n    kdc = " + kdc);
    auto path = scratch_ + "/krb5.conf";
    std::ofstream(path) << text;
    ::setenv("KRB5_CONFIG", path.c_str(), 1);
  }

  /// Calls registerApplicationMaster with a token from `token_file` on the
  /// token server `port_key`; returns the server's echo (the queue field).
  expected<std::string> register_with_token(const std::string& token_file,
                                            const std::string& port_key,
                                            const std::string& url = "http://am:1/") {
    auto creds = read_credentials_file(token_file);
    if (!creds)
      return creds.error();
    auto* tok = creds->find(amrm_token_kind);
    if (tok == nullptr)
      return error{error_code::not_found, "no AMRMToken in " + token_file};
    connection_params target;
    target.address = endpoint{host(), port(port_key)};
    target.protocol = yarn::application_master_protocol;
    target.auth_token = *tok;
    target.server_kind = "ResourceManager scheduler";
    ipc_client client;
    yarn::proto::RegisterApplicationMasterRequestProto req;
    req.set_host("am");
    req.set_rpc_port(1);
    req.set_tracking_url(url);
    auto rsp = client.call<yarn::proto::RegisterApplicationMasterResponseProto>(
        target, "registerApplicationMaster", req, deadline_after(call_timeout));
    if (!rsp)
      return rsp.error();
    return rsp->queue();
  }

  std::map<std::string, std::string> env_;
  std::string scratch_;
  std::string ccache_;
  std::shared_ptr<ipc_client> ipc_;
};

// -- KERBEROS ---------------------------------------------------------------------

TEST_F(kerberos_rpc, a_ticket_cache_login_authenticates_to_hadoop_as_the_principal) {
  kinit("alice");
  auto creds = login();
  ASSERT_TRUE(creds);
  EXPECT_EQ(creds->principal(), principal("alice"));
  EXPECT_EQ(creds->short_name(), "alice");
  EXPECT_EQ(creds->source(), "ticket cache FILE:" + ccache_);
  auto rm = rm_client(client_conf(port("SASL_KERBEROS_AUTHENTICATION_PORT")), creds);
  auto seen = whoami(rm);
  ASSERT_TRUE(seen) << seen.error().message();
  EXPECT_NE(seen->find("user=" + principal("alice") + " auth=KERBEROS"),
            std::string::npos)
      << *seen;
  auto conn = open_connection(rm);
  ASSERT_TRUE(conn);
  EXPECT_EQ(conn->auth_method(), "KERBEROS");
  EXPECT_EQ(conn->negotiated_qop(), qop::auth);
}

TEST_F(kerberos_rpc, integrity_signs_every_call_but_leaves_it_readable) {
  auto [marker, wire] = echo_through_relay("SASL_KERBEROS_INTEGRITY_PORT", qop::auth_int);
  EXPECT_NE(wire.find(marker), std::string::npos);
}

TEST_F(kerberos_rpc, privacy_encrypts_every_call) {
  auto [marker, wire] = echo_through_relay("SASL_KERBEROS_PRIVACY_PORT", qop::auth_conf);
  EXPECT_GT(wire.size(), marker.size());
  EXPECT_EQ(wire.find(marker), std::string::npos)
      << "the marker crossed the wire in clear";
  EXPECT_EQ(wire.find("sasl-echo"), std::string::npos);
}

TEST_F(kerberos_rpc, privacy_carries_requests_and_responses_larger_than_the_buffer) {
  kinit("alice");
  auto rm = rm_client(client_conf(port("SASL_KERBEROS_PRIVACY_PORT")), login());
  // 300 KB: the request crosses several wrapped pieces of at most the
  // server's 64 KB buffer; the response comes back as one large token.
  auto big = printable_text(300 * 1024);
  auto back = echo(rm, big);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->size(), big.size());
  EXPECT_TRUE(*back == big);
  // The connection stays usable for more calls.
  auto seen = whoami(rm);
  ASSERT_TRUE(seen) << seen.error().message();
}

TEST_F(kerberos_rpc, a_keytab_login_never_touches_the_ticket_cache) {
  auto creds = login(principal("alice"), keytab("alice"));
  ASSERT_TRUE(creds);
  EXPECT_TRUE(creds->from_keytab());
  EXPECT_EQ(creds->source(), "keytab " + keytab("alice"));
  auto rm = rm_client(client_conf(port("SASL_KERBEROS_PRIVACY_PORT")), creds);
  auto seen = whoami(rm);
  ASSERT_TRUE(seen) << seen.error().message();
  EXPECT_NE(seen->find("user=" + principal("alice") + " auth=KERBEROS"),
            std::string::npos)
      << *seen;
  struct stat st;
  EXPECT_NE(::stat(ccache_.c_str(), &st), 0) << "the keytab login wrote " << ccache_;
}

TEST_F(kerberos_rpc, a_keytab_login_renews_itself_when_its_ticket_runs_out) {
  // brief's tickets live 3 s at most (its max life in the KDC).
  auto creds = login(principal("brief"), keytab("brief"));
  ASSERT_TRUE(creds);
  auto end = creds->expires();
  EXPECT_LE(end - std::chrono::system_clock::now(), 5s);
  while (std::chrono::system_clock::now() <= end + 1s)
    std::this_thread::sleep_for(100ms);
  auto rm = rm_client(client_conf(port("SASL_KERBEROS_AUTHENTICATION_PORT")), creds);
  auto seen = whoami(rm);
  ASSERT_TRUE(seen) << seen.error().message();
  EXPECT_NE(seen->find("user=" + principal("brief")), std::string::npos) << *seen;
}

TEST_F(kerberos_rpc, the_client_protection_setting_limits_the_qop) {
  kinit("alice");
  auto conf = client_conf(port("SASL_KERBEROS_PRIVACY_PORT"));
  conf.set("hadoop.rpc.protection", "authentication");
  auto rm = rm_client(conf, login());
  auto seen = whoami(rm);
  ASSERT_FALSE(seen);
  EXPECT_EQ(seen.error().code(), error_code::auth);
  EXPECT_NE(seen.error().message().find("hadoop.rpc.protection"), std::string::npos)
      << seen.error().message();
}

// -- TOKEN / DIGEST-MD5 ----------------------------------------------------------

TEST_F(kerberos_rpc, a_token_authenticates_at_every_qop) {
  for (auto key : {"SASL_TOKEN_AUTHENTICATION_PORT", "SASL_TOKEN_INTEGRITY_PORT",
                   "SASL_TOKEN_PRIVACY_PORT"}) {
    auto seen = register_with_token(env_["SASL_TOKEN_FILE"], key);
    ASSERT_TRUE(seen) << key << ": " << seen.error().message();
    EXPECT_NE(seen->find("auth=TOKEN"), std::string::npos) << key << ": " << *seen;
    EXPECT_NE(seen->find("url=http://am:1/"), std::string::npos) << key << ": " << *seen;
  }
}

TEST_F(kerberos_rpc, a_token_connection_with_privacy_carries_large_messages) {
  auto url = "http://am:1/" + printable_text(200 * 1024);
  auto seen =
      register_with_token(env_["SASL_TOKEN_FILE"], "SASL_TOKEN_PRIVACY_PORT", url);
  ASSERT_TRUE(seen) << seen.error().message();
  EXPECT_NE(seen->find("url=" + url), std::string::npos);
}

TEST_F(kerberos_rpc, a_forged_token_is_rejected_at_every_qop) {
  for (auto key : {"SASL_TOKEN_AUTHENTICATION_PORT", "SASL_TOKEN_PRIVACY_PORT"}) {
    auto seen = register_with_token(env_["SASL_FORGED_TOKEN_FILE"], key);
    ASSERT_FALSE(seen) << key;
    EXPECT_EQ(seen.error().code(), error_code::auth) << seen.error().message();
  }
}

// -- bad input ---------------------------------------------------------------------

TEST_F(kerberos_rpc, no_ticket_and_no_keytab_says_to_run_kinit) {
  auto creds = kerberos_credentials::login({principal("alice"), ""});
  ASSERT_FALSE(creds);
  EXPECT_EQ(creds.error().code(), error_code::auth);
  auto& text = creds.error().message();
  EXPECT_EQ(text.rfind("no Kerberos credentials: run kinit " + principal("alice") +
                           " or set [security] keytab",
                       0),
            0u)
      << text;
}

TEST_F(kerberos_rpc, an_expired_ticket_says_when_and_what_to_do) {
  kinit("alice", "1s");
  // Wait for the ticket's end (the KDC grants the 1 s asked for).
  for (int i = 0; i < 50 && run("klist -s -c 'FILE:" + ccache_ + "'") == 0; ++i)
    std::this_thread::sleep_for(100ms);
  auto creds = kerberos_credentials::login({});
  ASSERT_FALSE(creds);
  auto& text = creds.error().message();
  EXPECT_NE(text.find("expired at"), std::string::npos) << text;
  EXPECT_NE(text.find("run kinit " + principal("alice")), std::string::npos) << text;
}

TEST_F(kerberos_rpc, a_ticket_cache_of_another_principal_is_refused) {
  kinit("bob");
  auto creds = kerberos_credentials::login({principal("alice"), ""});
  ASSERT_FALSE(creds);
  EXPECT_NE(creds.error().message().find("holds tickets of " + principal("bob") +
                                         ", not " + principal("alice")),
            std::string::npos)
      << creds.error().message();
}

TEST_F(kerberos_rpc, a_keytab_without_the_principal_names_what_it_holds) {
  auto creds = kerberos_credentials::login({principal("bob"), keytab("alice")});
  ASSERT_FALSE(creds);
  auto& text = creds.error().message();
  EXPECT_NE(text.find("holds no key for " + principal("bob")), std::string::npos) << text;
  EXPECT_NE(text.find(principal("alice")), std::string::npos) << text;
}

TEST_F(kerberos_rpc, a_principal_the_kdc_does_not_know_is_named) {
  auto creds = kerberos_credentials::login({principal("gone"), keytab("gone")});
  ASSERT_FALSE(creds);
  EXPECT_NE(creds.error().message().find("does not know " + principal("gone")),
            std::string::npos)
      << creds.error().message();
}

TEST_F(kerberos_rpc, a_server_with_another_principal_is_refused_as_impersonation) {
  kinit("alice");
  auto creds = login();
  auto rm = rm_client(client_conf(port("SASL_KERBEROS_AUTHENTICATION_PORT"),
                                  "rm/elsewhere.example.com@TONY.TEST"),
                      creds);
  auto seen = whoami(rm);
  ASSERT_FALSE(seen);
  auto& text = seen.error().message();
  EXPECT_NE(text.find("possible impersonation"), std::string::npos) << text;
  EXPECT_NE(text.find(env_["TONY_SERVER_PRINCIPAL"]), std::string::npos) << text;
  auto conf = client_conf(port("SASL_KERBEROS_AUTHENTICATION_PORT"));
  conf.set("yarn.resourcemanager.principal.pattern", "nn/*");
  auto by_pattern = rm_client(conf, creds);
  auto again = whoami(by_pattern);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message().find(".pattern"), std::string::npos)
      << again.error().message();
}

TEST_F(kerberos_rpc, an_unreachable_kdc_is_named_with_its_address) {
  auto dead = closed_port(); // the KDC is down
  use_kdc(dead);
  auto creds = kerberos_credentials::login({principal("alice"), keytab("alice")});
  ASSERT_FALSE(creds);
  auto& text = creds.error().message();
  EXPECT_NE(text.find("cannot reach a KDC of realm TONY.TEST at " + dead),
            std::string::npos)
      << text;
}

TEST_F(kerberos_rpc, a_silent_kdc_fails_after_a_bounded_wait_naming_its_address) {
  // A KDC that accepts connections and never answers.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  auto addr = bind_any_port(fd);
  ::listen(fd, 16);
  auto silent = host() + ":" + std::to_string(ntohs(addr.sin_port));
  use_kdc(silent);
  auto creds = kerberos_credentials::login({principal("alice"), keytab("alice")});
  ::close(fd);
  ASSERT_FALSE(creds);
  EXPECT_NE(creds.error().message().find("at " + silent), std::string::npos)
      << creds.error().message();
}

TEST_F(kerberos_rpc, a_kdc_lost_after_login_is_named_when_a_server_ticket_is_needed) {
  kinit("alice");
  auto creds = login();
  ASSERT_TRUE(creds);
  auto dead = closed_port();
  use_kdc(dead);
  auto rm = rm_client(client_conf(port("SASL_KERBEROS_AUTHENTICATION_PORT")), creds);
  auto seen = whoami(rm);
  ASSERT_FALSE(seen);
  auto& text = seen.error().message();
  EXPECT_NE(text.find("cannot reach a KDC of realm TONY.TEST at " + dead),
            std::string::npos)
      << text;
}

TEST_F(kerberos_rpc, a_simple_client_against_a_kerberos_server_is_told_to_use_kerberos) {
  auto conf = client_conf(port("SASL_KERBEROS_AUTHENTICATION_PORT"));
  auto rm = rm_client(conf, nullptr, /*allow_simple=*/true);
  auto seen = whoami(rm);
  ASSERT_FALSE(seen);
  auto& text = seen.error().message();
  EXPECT_TRUE(seen.error().is_remote("AccessControlException")) << text;
  EXPECT_NE(text.find("hadoop.security.authentication=kerberos"), std::string::npos)
      << text;
}

TEST_F(kerberos_rpc, a_kerberos_client_refuses_a_simple_server) {
  kinit("alice");
  auto rm = rm_client(client_conf(port("SASL_SIMPLE_PORT")), login());
  auto seen = whoami(rm);
  ASSERT_FALSE(seen);
  auto& text = seen.error().message();
  EXPECT_EQ(seen.error().code(), error_code::auth) << text;
  EXPECT_NE(text.find("accepts SIMPLE authentication only"), std::string::npos) << text;
  EXPECT_NE(text.find("ipc.client.fallback-to-simple-auth-allowed"), std::string::npos)
      << text;
}

TEST_F(kerberos_rpc, a_kerberos_client_may_fall_back_to_simple_when_configured) {
  kinit("alice");
  auto rm =
      rm_client(client_conf(port("SASL_SIMPLE_PORT")), login(), /*allow_simple=*/true);
  auto seen = whoami(rm);
  ASSERT_TRUE(seen) << seen.error().message();
  EXPECT_NE(seen->find("auth=SIMPLE"), std::string::npos) << *seen;
}

} // namespace
} // namespace tony::hadoop
