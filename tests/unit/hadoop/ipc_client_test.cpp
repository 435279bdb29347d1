// The IPC client against a loopback fake server: the happy path byte by
// byte, concurrency, SASL, and every kind of bad answer (garbage, truncated
// frames, wrong SASL replies, silence, closed ports). Each bad answer must
// end in an error before the deadline: no crash, no hang.

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include "hadoop/ipc_client.hpp"
#include "tests/unit/hadoop/fake_server.hpp"

namespace tony::hadoop {
namespace {

using namespace std::chrono_literals;
using testing::accept_simple;
using testing::accept_token;
using testing::fake_peer;
using testing::fake_server;
using testing::read_call;
using testing::response_frame;
using msg = proto::IpcConnectionContextProto; // any small message will do
using status = proto::RpcResponseHeaderProto;

const char* protocol = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";

connection_params target(uint16_t port) {
  connection_params p;
  p.address = endpoint{"127.0.0.1", port};
  p.protocol = protocol;
  p.user = "alice";
  p.server_kind = "ResourceManager";
  p.address_key = "yarn.resourcemanager.address";
  return p;
}

connection_options fast() {
  connection_options opts;
  opts.connect_timeout = 300ms;
  opts.initial_backoff = 20ms;
  opts.max_backoff = 50ms;
  return opts;
}

msg make(const std::string& text) {
  msg m;
  m.set_protocol(text);
  return m;
}

msg parse(const std::string& bytes) {
  msg m;
  m.ParseFromString(bytes);
  return m;
}

token amrm_token() {
  return token{"identifier-bytes", "password-bytes", "YARN_AM_RM_TOKEN",
               "127.0.0.1:8030"};
}

// A port nobody listens on, held for the test: bound but not listening, so
// a connect is refused, and no other process can take the port meanwhile
// (a port closed before the test could be taken by a parallel one).
class refusing_port {
public:
  refusing_port()
      : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~refusing_port() { ::close(fd_); }
  refusing_port(const refusing_port&) = delete;
  refusing_port& operator=(const refusing_port&) = delete;
  uint16_t port() const { return port_; }

private:
  int fd_;
  uint16_t port_ = 0;
};

TEST(ipc_client, simple_call_sends_preamble_context_and_call_frame) {
  std::promise<std::string> seen;
  fake_server server{[&](fake_peer& peer) {
    std::string report;
    auto pre = peer.read_preamble();
    report += pre && *pre == std::string("hrpc\x09\x00\x00", 7) ? "preamble " : "BAD ";
    auto ctx = testing::read_context(peer);
    if (ctx && ctx->protocol() == protocol && ctx->userinfo().effectiveuser() == "alice")
      report += "context ";
    auto call = read_call(peer);
    if (call && call->call_id == 0 && call->request_header.methodname() == "getX" &&
        call->request_header.declaringclassprotocolname() == protocol &&
        call->request_header.clientprotocolversion() == 1 &&
        parse(call->request).protocol() == "question") {
      report += "call";
      auto answer = make("answer");
      peer.write(response_frame(call->call_id, status::SUCCESS, &answer));
    }
    seen.set_value(report);
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto rsp = client.call<msg>(target(server.port()), "getX", make("question"),
                              deadline_after(5s));
  ASSERT_TRUE(rsp) << rsp.error().message();
  EXPECT_EQ(rsp->protocol(), "answer");
  EXPECT_EQ(seen.get_future().get(), "preamble context call");
  EXPECT_EQ(client.client_id().size(), 16u);
}

// Hadoop's proxy users: with SIMPLE the context names both users, the one
// acted for as effective user, and a connection of its own (the pool keys
// on it, so a call for alice never rides a connection made for bob).
TEST(ipc_client, a_proxy_user_is_the_effective_user_and_the_caller_the_real_one) {
  std::promise<std::string> seen;
  fake_server server{[&](fake_peer& peer) {
    if (!peer.read_preamble())
      return;
    auto ctx = testing::read_context(peer);
    if (!ctx)
      return;
    auto call = read_call(peer);
    if (!call)
      return;
    auto& who = ctx->userinfo();
    if (who.effectiveuser() == "bob")
      seen.set_value(who.effectiveuser() + " for " +
                     (who.has_realuser() ? who.realuser() : "nobody"));
    auto ok = make("");
    peer.write(response_frame(call->call_id, status::SUCCESS, &ok));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto own = target(server.port());
  ASSERT_TRUE(client.call<msg>(own, "m", make(""), deadline_after(5s)));
  auto acting = own;
  acting.proxy_user = "bob";
  ASSERT_TRUE(client.call<msg>(acting, "m", make(""), deadline_after(5s)));
  auto said = seen.get_future();
  ASSERT_EQ(said.wait_for(5s), std::future_status::ready) << "no connection acted for bob";
  EXPECT_EQ(said.get(), "bob for alice");
  EXPECT_EQ(server.accepted(), 2);
}

TEST(ipc_client, concurrent_calls_are_matched_by_call_id) {
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    auto first = read_call(peer);
    auto second = read_call(peer);
    ASSERT_TRUE(first && second);
    // Answer in reverse order: each reply echoes its request.
    for (auto* c : {&*second, &*first}) {
      auto echo = make("re:" + parse(c->request).protocol());
      peer.write(response_frame(c->call_id, status::SUCCESS, &echo));
    }
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  auto a = std::async(std::launch::async, [&] {
    return client.call<msg>(t, "m", make("a"), deadline_after(5s));
  });
  auto b = std::async(std::launch::async, [&] {
    return client.call<msg>(t, "m", make("b"), deadline_after(5s));
  });
  auto ra = a.get();
  auto rb = b.get();
  ASSERT_TRUE(ra) << ra.error().message();
  ASSERT_TRUE(rb) << rb.error().message();
  EXPECT_EQ(ra->protocol(), "re:a");
  EXPECT_EQ(rb->protocol(), "re:b");
  EXPECT_EQ(server.accepted(), 1);
}

TEST(ipc_client, a_remote_error_names_the_java_exception_and_keeps_the_connection) {
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    auto first = read_call(peer);
    ASSERT_TRUE(first);
    peer.write(
        response_frame(first->call_id, status::ERROR, nullptr,
                       "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException",
                       "Application with id 'application_1_0001' doesn't exist in "
                       "RM.\n\tat org.Foo(Foo.java:1)"));
    auto second = read_call(peer);
    ASSERT_TRUE(second);
    auto ok = make("fine");
    peer.write(response_frame(second->call_id, status::SUCCESS, &ok));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  auto bad = client.call<msg>(t, "getApplicationReport", make(""), deadline_after(5s));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), error_code::remote);
  EXPECT_TRUE(bad.error().is_remote("ApplicationNotFoundException"));
  EXPECT_FALSE(bad.error().fatal());
  EXPECT_EQ(bad.error().message(),
            "ResourceManager at 127.0.0.1:" + std::to_string(server.port()) +
                ": getApplicationReport failed: "
                "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException: "
                "Application with id 'application_1_0001' doesn't exist in RM.");
  auto good = client.call<msg>(t, "m", make(""), deadline_after(5s));
  ASSERT_TRUE(good) << good.error().message();
  EXPECT_EQ(server.accepted(), 1);
}

TEST(ipc_client, a_fatal_error_breaks_the_connection_and_the_next_call_reconnects) {
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    auto call = read_call(peer);
    ASSERT_TRUE(call);
    if (parse(call->request).protocol() == "first") {
      peer.write(response_frame(-1, status::FATAL, nullptr,
                                "org.apache.hadoop.ipc.RpcServerException",
                                "Unknown rpc kind"));
      return;
    }
    auto ok = make("second ok");
    peer.write(response_frame(call->call_id, status::SUCCESS, &ok));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  auto bad = client.call<msg>(t, "m", make("first"), deadline_after(5s));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().fatal());
  EXPECT_NE(bad.error().message().find("RpcServerException"), std::string::npos);
  auto good = client.call<msg>(t, "m", make("second"), deadline_after(5s));
  ASSERT_TRUE(good) << good.error().message();
  EXPECT_EQ(good->protocol(), "second ok");
  EXPECT_EQ(server.accepted(), 2);
}

TEST(ipc_client, a_rejected_connection_reports_the_servers_reason) {
  // What a TOKEN-only port does with a SIMPLE client: FATAL, then close,
  // possibly before the client's first call is written.
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    peer.write(response_frame(
        -1, status::FATAL, nullptr, "org.apache.hadoop.security.AccessControlException",
        "SIMPLE authentication is not enabled.  Available:[TOKEN]"));
    peer.close();
  }};
  ipc_client client{fast()};
  for (int i = 0; i < 3; ++i) {
    auto rsp =
        client.call<msg>(target(server.port()), "allocate", make(""), deadline_after(5s));
    ASSERT_FALSE(rsp);
    EXPECT_NE(rsp.error().message().find("Available:[TOKEN]"), std::string::npos)
        << rsp.error().message();
  }
}

TEST(ipc_client, garbage_instead_of_a_frame_is_a_protocol_error) {
  fake_server server{[&](fake_peer& peer) {
    peer.read_preamble();
    peer.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto rsp = client.call<msg>(target(server.port()), "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::protocol);
  EXPECT_NE(rsp.error().message().find("HTTP port"), std::string::npos)
      << rsp.error().message();
}

TEST(ipc_client, a_malformed_header_is_a_protocol_error) {
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    read_call(peer);
    peer.write(std::string("\x00\x00\x00\x04\x03\xFF\xFF\xFF", 8));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto rsp = client.call<msg>(target(server.port()), "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::protocol);
}

TEST(ipc_client, a_truncated_frame_followed_by_close_is_an_error) {
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    read_call(peer);
    peer.write(std::string("\x00\x00\x00\x64\x02\x08\x00", 7)); // 100 announced, 3 sent
    peer.close();
  }};
  ipc_client client{fast()};
  auto rsp = client.call<msg>(target(server.port()), "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::connection_closed);
  EXPECT_NE(rsp.error().message().find("in the middle of a frame"), std::string::npos)
      << rsp.error().message();
}

TEST(ipc_client, a_server_closing_before_answering_fails_the_call) {
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    read_call(peer);
    peer.close();
  }};
  ipc_client client{fast()};
  auto start = clock::now();
  auto rsp = client.call<msg>(target(server.port()), "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::connection_closed);
  EXPECT_LT(clock::now() - start, 4s);
}

TEST(ipc_client, a_silent_server_times_out_at_the_deadline) {
  std::promise<void> done;
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    read_call(peer);
    peer.wait_for_eof();
    done.set_value();
  }};
  ipc_client client{fast()};
  auto start = clock::now();
  auto rsp = client.call<msg>(target(server.port()), "getClusterNodes", make(""),
                              deadline_after(200ms));
  auto elapsed = clock::now() - start;
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::timeout);
  EXPECT_NE(rsp.error().message().find("getClusterNodes"), std::string::npos);
  EXPECT_GE(elapsed, 190ms);
  EXPECT_LT(elapsed, 2s);
  client.close_all();
  done.get_future().wait();
}

TEST(ipc_client, a_late_reply_is_dropped_and_the_connection_stays_usable) {
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    auto slow = read_call(peer);
    auto next = read_call(peer); // arrives after the first call timed out
    ASSERT_TRUE(slow && next);
    auto late = make("late");
    peer.write(response_frame(slow->call_id, status::SUCCESS, &late));
    auto fresh = make("fresh");
    peer.write(response_frame(next->call_id, status::SUCCESS, &fresh));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  auto first = client.call<msg>(t, "m", make(""), deadline_after(100ms));
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code(), error_code::timeout);
  auto second = client.call<msg>(t, "m", make(""), deadline_after(5s));
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(second->protocol(), "fresh");
}

TEST(ipc_client, a_closed_port_gives_a_clear_error_within_the_deadline) {
  refusing_port refusing;
  auto port = refusing.port();
  ipc_client client{fast()};
  auto start = clock::now();
  auto rsp =
      client.call<msg>(target(port), "getNewApplication", make(""), deadline_after(2s));
  auto elapsed = clock::now() - start;
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::connect_failed);
  auto& text = rsp.error().message();
  EXPECT_EQ(text.rfind("cannot connect to ResourceManager at 127.0.0.1:" +
                           std::to_string(port) + ": connection refused",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("(is it running? check yarn.resourcemanager.address)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("attempts"), std::string::npos) << text;
  EXPECT_LT(elapsed, 2s);
}

// tony-am's end waits for the threads of its calls: shut_down ends a call
// retrying a refused NodeManager at once, not at its deadline.
TEST(ipc_client, shut_down_ends_a_connect_retrying_a_refused_server_at_once) {
  refusing_port refusing;
  connection_options opts;
  opts.connect_timeout = 60s; // without shut_down the call would retry for 60 s
  ipc_client client{opts};
  auto start = clock::now();
  auto call = std::async(std::launch::async, [&] {
    return client.call<msg>(target(refusing.port()), "stopContainers", make(""),
                            deadline_after(60s));
  });
  std::this_thread::sleep_for(300ms); // a few refused attempts and back-offs
  client.shut_down();
  ASSERT_EQ(call.wait_for(20s), std::future_status::ready);
  auto rsp = call.get();
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::cancelled);
  EXPECT_NE(rsp.error().message().find("shutting down"), std::string::npos)
      << rsp.error().message();
  EXPECT_LT(clock::now() - start, 20s);
  // Later calls fail at once, without connecting.
  auto later =
      client.call<msg>(target(refusing.port()), "m", make(""), deadline_after(60s));
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error().code(), error_code::cancelled);
}

TEST(ipc_client, shut_down_ends_a_call_waiting_for_a_silent_server) {
  std::promise<void> done;
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    read_call(peer);
    peer.wait_for_eof();
    done.set_value();
  }};
  ipc_client client{fast()};
  auto call = std::async(std::launch::async, [&] {
    return client.call<msg>(target(server.port()), "allocate", make(""),
                            deadline_after(60s));
  });
  std::this_thread::sleep_for(300ms);
  client.shut_down();
  ASSERT_EQ(call.wait_for(20s), std::future_status::ready);
  auto rsp = call.get();
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::cancelled) << rsp.error().message();
  done.get_future().wait();
}

TEST(ipc_client, an_unresolvable_host_fails_without_retrying) {
  ipc_client client{fast()};
  auto t = target(8032);
  t.address.host = "no-such-host.invalid";
  auto rsp = client.call<msg>(t, "m", make(""), deadline_after(10s));
  ASSERT_FALSE(rsp);
  EXPECT_NE(rsp.error().message().find("cannot resolve host 'no-such-host.invalid'"),
            std::string::npos)
      << rsp.error().message();
}

TEST(ipc_client, pings_an_idle_connection) {
  std::promise<int32_t> first_frame;
  fake_server server{[&](fake_peer& peer) {
    ASSERT_TRUE(accept_simple(peer));
    auto call = read_call(peer);
    ASSERT_TRUE(call);
    auto ok = make("");
    peer.write(response_frame(call->call_id, status::SUCCESS, &ok));
    auto next = peer.read_frame();
    first_frame.set_value(next ? next->header.callid() : 0);
    peer.wait_for_eof();
  }};
  auto opts = fast();
  opts.ping_interval = 50ms;
  ipc_client client{opts};
  ASSERT_TRUE(client.call<msg>(target(server.port()), "m", make(""), deadline_after(5s)));
  EXPECT_EQ(first_frame.get_future().get(), ping_call_id);
}

TEST(ipc_client, pools_connections_per_user_and_token) {
  fake_server server{[&](fake_peer& peer) {
    if (!accept_simple(peer))
      return;
    while (auto call = read_call(peer)) {
      auto ok = make("");
      peer.write(response_frame(call->call_id, status::SUCCESS, &ok));
    }
  }};
  // alice twice shares one connection; bob gets a second one.
  ipc_client client{fast()};
  auto alice = target(server.port());
  ASSERT_TRUE(client.call<msg>(alice, "m", make(""), deadline_after(5s)));
  ASSERT_TRUE(client.call<msg>(alice, "m", make(""), deadline_after(5s)));
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(client.connection_count(), 1u);
  auto bob = alice;
  bob.user = "bob";
  ASSERT_TRUE(client.call<msg>(bob, "m", make(""), deadline_after(5s)));
  EXPECT_EQ(server.accepted(), 2);
  EXPECT_EQ(client.connection_count(), 2u);
}

// -- SASL ---------------------------------------------------------------------

TEST(ipc_client_sasl, token_login_then_call) {
  std::promise<std::string> user_in_context;
  fake_server server{[&](fake_peer& peer) {
    auto pre = peer.read_preamble();
    ASSERT_TRUE(pre);
    EXPECT_EQ(*pre, std::string("hrpc\x09\x00\xDF", 7));
    auto login = testing::serve_sasl(peer, amrm_token());
    ASSERT_TRUE(login.ok) << login.problem;
    auto ctx = testing::read_context(peer);
    ASSERT_TRUE(ctx);
    EXPECT_TRUE(ctx->has_userinfo());
    user_in_context.set_value(ctx->userinfo().effectiveuser());
    auto call = read_call(peer);
    ASSERT_TRUE(call);
    auto ok = make("registered");
    peer.write(response_frame(call->call_id, status::SUCCESS, &ok));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  t.auth_token = amrm_token();
  auto rsp =
      client.call<msg>(t, "registerApplicationMaster", make(""), deadline_after(5s));
  ASSERT_TRUE(rsp) << rsp.error().message();
  EXPECT_EQ(rsp->protocol(), "registered");
  // With a token the user comes from the token, not the context.
  EXPECT_EQ(user_in_context.get_future().get(), "");
}

TEST(ipc_client_sasl, a_wrong_rspauth_fails_the_login) {
  fake_server server{[&](fake_peer& peer) {
    peer.read_preamble();
    testing::serve_sasl(peer, amrm_token(), /*wrong_rspauth=*/true);
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  t.auth_token = amrm_token();
  auto rsp = client.call<msg>(t, "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::auth);
  EXPECT_NE(rsp.error().message().find("rspauth"), std::string::npos);
}

TEST(ipc_client_sasl, success_without_rspauth_is_refused) {
  fake_server server{[&](fake_peer& peer) {
    peer.read_preamble();
    peer.read_frame();
    proto::RpcSaslProto offer;
    offer.set_state(proto::RpcSaslProto::NEGOTIATE);
    auto* auth = offer.add_auths();
    auth->set_method("TOKEN");
    auth->set_mechanism("DIGEST-MD5");
    auth->set_serverid("default");
    auth->set_challenge("realm=\"default\",nonce=\"n\",qop=\"auth\",algorithm=md5-sess");
    peer.write(testing::sasl_response(offer));
    peer.read_frame();
    proto::RpcSaslProto success;
    success.set_state(proto::RpcSaslProto::SUCCESS);
    peer.write(testing::sasl_response(success));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  t.auth_token = amrm_token();
  auto rsp = client.call<msg>(t, "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::auth);
}

TEST(ipc_client_sasl, a_non_sasl_reply_during_login_is_an_error) {
  fake_server server{[&](fake_peer& peer) {
    peer.read_preamble();
    peer.read_frame();
    auto junk = make("not sasl");
    peer.write(response_frame(5, status::SUCCESS, &junk));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  t.auth_token = amrm_token();
  auto rsp = client.call<msg>(t, "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::auth);
  EXPECT_NE(rsp.error().message().find("call id 5"), std::string::npos);
}

TEST(ipc_client_sasl, garbage_sasl_payload_is_an_error) {
  fake_server server{[&](fake_peer& peer) {
    peer.read_preamble();
    peer.read_frame();
    proto::RpcResponseHeaderProto header;
    header.set_callid(static_cast<uint32_t>(sasl_call_id));
    header.set_status(status::SUCCESS);
    std::string frame = make_frame({&header}).substr(4) + "\x05\xFF\xFF\xFF\xFF\xFF";
    std::string len(4, '\0');
    len[3] = static_cast<char>(frame.size());
    peer.write(len + frame);
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  t.auth_token = amrm_token();
  auto rsp = client.call<msg>(t, "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::auth);
}

TEST(ipc_client_sasl, a_server_offering_only_kerberos_is_refused_clearly) {
  fake_server server{[&](fake_peer& peer) {
    peer.read_preamble();
    peer.read_frame();
    proto::RpcSaslProto offer;
    offer.set_state(proto::RpcSaslProto::NEGOTIATE);
    auto* auth = offer.add_auths();
    auth->set_method("KERBEROS");
    auth->set_mechanism("GSSAPI");
    auth->set_protocol("rm");
    auth->set_serverid("host");
    peer.write(testing::sasl_response(offer));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  t.auth_token = amrm_token();
  auto rsp = client.call<msg>(t, "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_NE(rsp.error().message().find("offers KERBEROS/GSSAPI"), std::string::npos)
      << rsp.error().message();
}

TEST(ipc_client_sasl, an_access_control_exception_reaches_the_caller) {
  fake_server server{[&](fake_peer& peer) {
    peer.read_preamble();
    peer.read_frame();
    peer.write(
        response_frame(sasl_call_id, status::FATAL, nullptr,
                       "org.apache.hadoop.security.AccessControlException",
                       "SIMPLE authentication is not enabled.  Available:[TOKEN]"));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  t.auth_token = amrm_token();
  auto rsp = client.call<msg>(t, "m", make(""), deadline_after(5s));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::auth);
  EXPECT_TRUE(rsp.error().is_remote("AccessControlException"));
  EXPECT_NE(rsp.error().message().find("Available:[TOKEN]"), std::string::npos);
}

TEST(ipc_client_sasl, falls_back_to_simple_when_the_server_offers_it) {
  std::promise<std::string> seen;
  fake_server server{[&](fake_peer& peer) {
    peer.read_preamble();
    peer.read_frame();
    proto::RpcSaslProto offer;
    offer.set_state(proto::RpcSaslProto::NEGOTIATE);
    auto* auth = offer.add_auths();
    auth->set_method("SIMPLE");
    auth->set_mechanism("");
    peer.write(testing::sasl_response(offer));
    auto initiate = peer.read_frame();
    ASSERT_TRUE(initiate && initiate->messages.size() == 1);
    proto::RpcSaslProto reply;
    reply.ParseFromString(initiate->messages[0]);
    EXPECT_EQ(reply.state(), proto::RpcSaslProto::INITIATE);
    ASSERT_EQ(reply.auths_size(), 1);
    EXPECT_EQ(reply.auths(0).method(), "SIMPLE");
    auto ctx = testing::read_context(peer);
    ASSERT_TRUE(ctx);
    seen.set_value(ctx->userinfo().effectiveuser());
    auto call = read_call(peer);
    ASSERT_TRUE(call);
    auto ok = make("");
    peer.write(response_frame(call->call_id, status::SUCCESS, &ok));
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  t.auth_token = amrm_token();
  auto rsp = client.call<msg>(t, "m", make(""), deadline_after(5s));
  ASSERT_TRUE(rsp) << rsp.error().message();
  EXPECT_EQ(seen.get_future().get(), "alice");
}

TEST(ipc_client_sasl, a_silent_server_during_login_times_out) {
  fake_server server{[&](fake_peer& peer) {
    peer.read_preamble();
    peer.read_frame(); // NEGOTIATE, never answered
    peer.wait_for_eof();
  }};
  ipc_client client{fast()};
  auto t = target(server.port());
  t.auth_token = amrm_token();
  auto start = clock::now();
  auto rsp = client.call<msg>(t, "m", make(""), deadline_after(200ms));
  ASSERT_FALSE(rsp);
  EXPECT_EQ(rsp.error().code(), error_code::timeout);
  EXPECT_LT(clock::now() - start, 2s);
}

} // namespace
} // namespace tony::hadoop
