#include "hadoop/ipc_connection.hpp"

#include <algorithm>

#include "hadoop/digest_md5.hpp"
#include "hadoop/gssapi_client.hpp"
#include "hadoop/rpc_codec.hpp"

namespace tony::hadoop {

namespace {

using namespace std::chrono_literals;

std::string first_line(const std::string& x) {
  auto end = x.find('\n');
  auto line = x.substr(0, end);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
    line.pop_back();
  return line;
}

std::string hint_for(const connection_params& p) {
  std::string hint = "is it running?";
  if (!p.address_key.empty())
    hint += " check " + p.address_key;
  return hint;
}

proto::RpcSaslProto sasl_message(proto::RpcSaslProto::SaslState state) {
  proto::RpcSaslProto msg;
  msg.set_state(state);
  return msg;
}

std::string offered(const proto::RpcSaslProto& msg) {
  std::string result;
  for (auto& auth : msg.auths())
    result += (result.empty() ? "" : ", ") + auth.method() + "/" + auth.mechanism();
  return result.empty() ? "nothing" : result;
}

bool offers(const proto::RpcSaslProto& msg, const char* method) {
  for (auto& auth : msg.auths())
    if (auth.method() == method)
      return true;
  return false;
}

const char* kerberos_hint =
    " (the server requires Kerberos: set hadoop.security.authentication=kerberos in "
    "core-site.xml of the client configuration, then run kinit or set [security] "
    "keytab)";

} // namespace

std::string describe_server(const connection_params& x) {
  return x.server_kind + " at " + to_string(x.address);
}

std::string describe_duration(std::chrono::milliseconds x) {
  if (x < 1000ms)
    return std::to_string(x.count()) + " ms";
  auto tenths = (x.count() + 50) / 100;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " s";
}

ipc_connection::ipc_connection(connection_params params, connection_options opts,
                               std::string client_id, tcp_socket sock)
    : params_(std::move(params))
    , opts_(opts)
    , client_id_(std::move(client_id))
    , sock_(std::move(sock))
    , unwrapped_(opts.max_response_bytes) {
  last_call_ = last_write_ = clock::now();
}

std::string ipc_connection::simple_refusal() const {
  if (!params_.kerberos)
    return "the server accepts SIMPLE authentication only";
  return "the server accepts SIMPLE authentication only, but this client authenticates "
         "with Kerberos (hadoop.security.authentication=kerberos): refusing to fall back "
         "to an unauthenticated server (if the server really is insecure, set "
         "ipc.client.fallback-to-simple-auth-allowed=true in core-site.xml)";
}

std::string ipc_connection::client_can() const {
  std::string can;
  if (params_.auth_token)
    can = "TOKEN/DIGEST-MD5 (" + describe(*params_.auth_token) + ")";
  if (params_.kerberos)
    can += (can.empty() ? "" : " and ") + std::string{"KERBEROS/GSSAPI (as "} +
           params_.kerberos->principal() + ")";
  if (can.empty())
    can = "SIMPLE";
  return "this client authenticates with " + can + " only";
}

std::string
ipc_connection::server_requirement_hint(const proto::RpcSaslProto& msg) const {
  return offers(msg, "KERBEROS") && !params_.kerberos ? kerberos_hint : "";
}

ipc_connection::~ipc_connection() {
  close();
  if (reader_.joinable())
    reader_.join();
}

expected<std::unique_ptr<ipc_connection>>
ipc_connection::open(const connection_params& params, const connection_options& opts,
                     std::string client_id, deadline until,
                     const std::atomic<bool>* stop) {
  auto stopped = [&] { return stop && stop->load(); };
  auto cancelled = [&] {
    return error{error_code::cancelled, "not connecting to " + describe_server(params) +
                                            ": the client is shutting down"};
  };
  auto start = clock::now();
  auto budget =
      params.connect_timeout.count() > 0 ? params.connect_timeout : opts.connect_timeout;
  auto budget_end = std::min(until, start + budget);
  auto backoff = opts.initial_backoff;
  int attempts = 0;
  expected<tcp_socket> sock = error{error_code::connect_failed, "not attempted"};
  for (;;) {
    if (stopped())
      return cancelled();
    ++attempts;
    sock = tcp_socket::connect(params.address, budget_end);
    if (sock)
      break;
    auto& err = sock.error();
    auto name_error = err.message().compare(0, 21, "cannot resolve host '") == 0;
    auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start);
    if (name_error || err.code() == error_code::timeout ||
        clock::now() + backoff >= budget_end) {
      std::string text =
          "cannot connect to " + describe_server(params) + ": " + err.message();
      if (attempts > 1)
        text += " after " + std::to_string(attempts) + " attempts in " +
                describe_duration(elapsed);
      text += " (" + hint_for(params) + ")";
      return error{err.code() == error_code::timeout ? error_code::timeout
                                                     : error_code::connect_failed,
                   std::move(text)};
    }
    // The back-off in short steps: a shut-down ends it at once.
    for (auto end = clock::now() + backoff; clock::now() < end && !stopped();)
      std::this_thread::sleep_for(
          std::min(remaining(end), std::chrono::milliseconds{20}));
    backoff = std::min(backoff * 2, opts.max_backoff);
  }
  std::unique_ptr<ipc_connection> conn{
      new ipc_connection(params, opts, std::move(client_id), std::move(*sock))};
  if (auto ok = conn->handshake(until); !ok)
    return ok.error();
  conn->reader_ = std::thread{[c = conn.get()] { c->reader_loop(); }};
  return conn;
}

expected<std::string> ipc_connection::wrap_frame(const std::string& frame) {
  std::lock_guard<std::mutex> guard{sasl_mtx_};
  std::string out;
  for (auto piece : split_for_wrap(frame, max_wrap_)) {
    auto token = sasl_->wrap(piece);
    if (!token)
      return token.error();
    out += make_wrap_frame(*token);
  }
  return out;
}

expected<void> ipc_connection::write_frame(const std::string& frame, deadline until) {
  std::lock_guard<std::mutex> guard{write_mtx_};
  expected<void> ok;
  if (wrapped_) {
    auto out = wrap_frame(frame);
    if (!out)
      return out.error();
    ok = sock_.write_all(*out, until);
  } else {
    ok = sock_.write_all(frame, until);
  }
  if (ok) {
    std::lock_guard<std::mutex> g{mtx_};
    last_write_ = clock::now();
  }
  return ok;
}

expected<std::string> ipc_connection::read_frame(deadline until) {
  char len_bytes[4];
  if (auto ok = sock_.read_exact(len_bytes, 4, until); !ok)
    return ok.error();
  auto len = decode_frame_length({len_bytes, 4}, opts_.max_response_bytes);
  if (!len)
    return len.error();
  std::string frame(*len, '\0');
  auto frame_until = std::min(until, clock::now() + opts_.frame_timeout);
  if (auto ok = sock_.read_exact(frame.data(), frame.size(), frame_until); !ok)
    return ok.error();
  return frame;
}

error ipc_connection::remote_error(const std::string& what,
                                   const rpc_response& rsp) const {
  auto cls = rsp.exception_class.empty() ? std::string{"unknown exception"}
                                         : rsp.exception_class;
  auto text = describe_server(params_) + ": " + what + " failed: " + cls;
  auto line = first_line(rsp.error_message);
  if (!line.empty())
    text += ": " + line;
  // What a Kerberos-only server tells a SIMPLE client.
  if (auth_method_ == "SIMPLE" &&
      rsp.error_message.find("SIMPLE authentication is not enabled") !=
          std::string::npos &&
      rsp.error_message.find("KERBEROS") != std::string::npos)
    text += kerberos_hint;
  return error{error_code::remote, std::move(text), rsp.exception_class,
               rsp.error_message, rsp.status == rpc_status::fatal};
}

expected<void> ipc_connection::handshake(deadline until) {
  auto where = describe_server(params_);
  auto fail = [&](const error& e, const char* step) {
    auto code = e.code();
    if (code == error_code::connection_closed)
      code = error_code::auth;
    return error{code, where + ": " + step + ": " + e.message(), e.remote_class(),
                 e.remote_message(), e.fatal()};
  };
  bool sasl = params_.auth_token || params_.kerberos;
  auto auth = sasl ? auth_protocol::sasl : auth_protocol::none;
  if (auto ok = sock_.write_all(connection_preamble(auth), until); !ok)
    return fail(ok.error(), "sending the connection preamble");
  if (sasl) {
    if (auto ok = sasl_handshake(until); !ok)
      return ok.error().code() == error_code::connection_closed
                 ? fail(ok.error(), "SASL negotiation")
                 : ok.error();
  }
  proto::IpcConnectionContextProto context;
  context.set_protocol(params_.protocol);
  auto* user_info = context.mutable_userinfo();
  // With a token the server takes the user from the token; KERBEROS names
  // the effective user only (the principal, or the user it acts for: the
  // authenticated principal is the real user); SIMPLE names the user it
  // claims, and the real user when it acts for another
  // (ProtoUtil.makeIpcConnectionContext).
  const auto& proxy = params_.proxy_user;
  if (auth_method_ == "SIMPLE") {
    user_info->set_effectiveuser(proxy.empty() ? params_.user : proxy);
    if (!proxy.empty())
      user_info->set_realuser(params_.user);
  } else if (auth_method_ == "KERBEROS") {
    user_info->set_effectiveuser(proxy.empty() ? params_.kerberos->principal() : proxy);
  }
  auto header = make_request_header(connection_context_call_id, client_id_, -1);
  if (auto ok = write_frame(make_frame({&header, &context}), until); !ok)
    return fail(ok.error(), "sending the connection context");
  return {};
}

expected<void> ipc_connection::send_sasl(const proto::RpcSaslProto& msg, deadline until) {
  auto header = make_request_header(sasl_call_id, {}, -1);
  return sock_.write_all(make_frame({&header, &msg}), until);
}

expected<proto::RpcSaslProto> ipc_connection::read_sasl_reply(deadline until) {
  auto where = describe_server(params_);
  auto protocol_error = [&](const std::string& what) {
    return error{error_code::auth, where + ": SASL negotiation: " + what};
  };
  auto frame = read_frame(until);
  if (!frame) {
    if (frame.error().code() == error_code::timeout)
      return error{error_code::timeout,
                   where + ": no SASL answer before the deadline (is this a Hadoop "
                           "RPC port?)"};
    if (sasl_ && frame.error().code() == error_code::connection_closed)
      return error{error_code::auth,
                   where + ": the server closed the connection after our " +
                       sasl_->name() + " answer: it rejected " +
                       (params_.auth_token && auth_method_ == "TOKEN"
                            ? "the " + describe(*params_.auth_token) +
                                  " (expired, of another application attempt, or of "
                                  "another cluster?)"
                            : "the client's credentials")};
    return frame.error();
  }
  auto rsp = decode_response(*frame);
  if (!rsp)
    return protocol_error(rsp.error().message());
  if (rsp->status != rpc_status::success) {
    auto err = remote_error("authentication", *rsp);
    return error{error_code::auth, err.message(), err.remote_class(),
                 err.remote_message(), err.fatal()};
  }
  if (rsp->call_id != sasl_call_id)
    return protocol_error("expected a SASL reply (call id -33), got call id " +
                          std::to_string(rsp->call_id));
  auto msg = decode_sasl(rsp->body);
  if (!msg)
    return protocol_error(msg.error().message());
  return msg;
}

expected<void> ipc_connection::sasl_handshake(deadline until) {
  auto where = describe_server(params_);
  auto protocol_error = [&](const std::string& what) {
    return error{error_code::auth, where + ": SASL negotiation: " + what};
  };
  if (auto ok = send_sasl(sasl_message(proto::RpcSaslProto::NEGOTIATE), until); !ok)
    return ok.error();
  for (int round = 0; round < 16; ++round) {
    auto msg = read_sasl_reply(until);
    if (!msg)
      return msg.error();
    switch (msg->state()) {
    case proto::RpcSaslProto::NEGOTIATE: {
      if (sasl_)
        return protocol_error("the server sent NEGOTIATE twice");
      auto step = on_negotiate(*msg, until);
      if (!step)
        return step.error();
      if (*step == sasl_step::done)
        return {};
      break;
    }
    case proto::RpcSaslProto::CHALLENGE: {
      if (!sasl_)
        return protocol_error("CHALLENGE before NEGOTIATE");
      if (!msg->has_token())
        return protocol_error("CHALLENGE without a token");
      auto answer = sasl_->evaluate(msg->token());
      if (!answer)
        return answer.error().with_context(where);
      proto::RpcSaslProto reply = sasl_message(proto::RpcSaslProto::RESPONSE);
      reply.set_token(std::move(*answer));
      if (auto ok = send_sasl(reply, until); !ok)
        return ok.error();
      break;
    }
    case proto::RpcSaslProto::SUCCESS:
      return on_success(*msg);
    default:
      return protocol_error(std::string{"unexpected SASL state "} +
                            sasl_state_name(msg->state()));
    }
  }
  return protocol_error("too many SASL rounds");
}

expected<ipc_connection::sasl_step>
ipc_connection::on_negotiate(const proto::RpcSaslProto& msg, deadline until) {
  auto where = describe_server(params_);
  // The server lists its methods in its order of preference; the first
  // one this client has credentials for wins (SaslRpcClient.selectSaslClient).
  const proto::RpcSaslProto::SaslAuth* chosen = nullptr;
  const proto::RpcSaslProto::SaslAuth* simple = nullptr;
  for (auto& a : msg.auths()) {
    bool token = a.method() == "TOKEN" && a.mechanism() == "DIGEST-MD5" &&
                 params_.auth_token.has_value();
    bool kerberos = a.method() == "KERBEROS" && a.mechanism() == "GSSAPI" &&
                    params_.kerberos != nullptr;
    if (token || kerberos) {
      chosen = &a;
      break;
    }
    if (a.method() == "SIMPLE" && simple == nullptr)
      simple = &a;
  }
  if (chosen == nullptr && simple != nullptr) {
    if (!opts_.allow_simple_fallback)
      return error{error_code::auth, where + ": " + simple_refusal()};
    proto::RpcSaslProto reply = sasl_message(proto::RpcSaslProto::INITIATE);
    *reply.add_auths() = *simple;
    if (auto ok = send_sasl(reply, until); !ok)
      return ok.error();
    auth_method_ = "SIMPLE";
    return sasl_step::done;
  }
  if (chosen == nullptr)
    return error{error_code::auth, where + ": the server offers " + offered(msg) +
                                       " but " + client_can() +
                                       server_requirement_hint(msg)};
  auto mech = make_mechanism(*chosen);
  if (!mech)
    return mech.error().with_context(where);
  sasl_ = std::move(*mech);
  auth_method_ = chosen->method();
  // DIGEST-MD5 answers the inline challenge; GSSAPI speaks first; a
  // mechanism with neither sends an empty token and waits for a CHALLENGE.
  std::string token;
  if (chosen->has_challenge() || sasl_->has_initial_response()) {
    auto answer = sasl_->evaluate(chosen->has_challenge() ? chosen->challenge() : "");
    if (!answer)
      return answer.error().with_context(where);
    token = std::move(*answer);
  }
  proto::RpcSaslProto reply = sasl_message(proto::RpcSaslProto::INITIATE);
  auto* auth = reply.add_auths();
  *auth = *chosen;
  auth->clear_challenge();
  reply.set_token(std::move(token));
  if (auto ok = send_sasl(reply, until); !ok)
    return ok.error();
  return sasl_step::more;
}

expected<std::unique_ptr<sasl_mechanism>>
ipc_connection::make_mechanism(const proto::RpcSaslProto::SaslAuth& auth) {
  if (auth.method() == "TOKEN")
    return make_digest_md5_client(*params_.auth_token, auth.protocol(), auth.serverid(),
                                  params_.protection);
  if (auth.protocol().empty() || auth.serverid().empty())
    return error{error_code::auth, "the server offers KERBEROS but advertises no "
                                   "principal (protocol '" +
                                       auth.protocol() + "', serverId '" +
                                       auth.serverid() + "')"};
  auto realm = realm_of_host(auth.serverid());
  if (!realm)
    return realm.error();
  auto advertised = auth.protocol() + "/" + auth.serverid() + "@" + *realm;
  auto principal = check_server_principal(params_.kerberos_principal, advertised,
                                          canonical_host(params_.address));
  if (!principal)
    return principal.error();
  return make_gssapi_client(params_.kerberos, *principal, params_.protection);
}

expected<void> ipc_connection::on_success(const proto::RpcSaslProto& msg) {
  auto where = describe_server(params_);
  if (!sasl_) {
    // A SIMPLE-only server answers NEGOTIATE with SUCCESS.
    if (!opts_.allow_simple_fallback)
      return error{error_code::auth, where + ": " + simple_refusal()};
    auth_method_ = "SIMPLE";
    return {};
  }
  if (msg.has_token()) {
    auto answer = sasl_->evaluate(msg.token());
    if (!answer)
      return answer.error().with_context(where);
    if (!answer->empty())
      return error{error_code::auth, where + ": SASL negotiation: the client has more to "
                                             "say after the server's SUCCESS"};
  }
  // A server must not end the exchange before it proved itself.
  if (!sasl_->complete())
    return error{error_code::auth,
                 where +
                     ": the server reported SASL success before it authenticated "
                     "itself (" +
                     (std::string{sasl_->name()} == "DIGEST-MD5"
                          ? std::string{"no rspauth"}
                          : std::string{"handshake incomplete"}) +
                     "); refusing an unauthenticated server"};
  qop_ = sasl_->negotiated_qop();
  if (qop_ == qop::auth) {
    // Nothing per call: the mechanism is done.
    sasl_.reset();
    return {};
  }
  max_wrap_ = sasl_->max_wrap_input();
  if (max_wrap_ == 0)
    return error{error_code::auth, where + ": SASL " + to_string(qop_) +
                                       " negotiated without room for data"};
  wrapped_ = true;
  return {};
}

expected<std::string> ipc_connection::call(const std::string& method,
                                           const google::protobuf::MessageLite& request,
                                           deadline until, bool* sent) {
  if (sent != nullptr)
    *sent = false;
  auto id = next_call_id_.fetch_add(1);
  if (id < 0) {
    // Call ids wrap back to 0 after INT32_MAX; negative ids are reserved.
    next_call_id_.store(1);
    id = 0;
  }
  auto frame = make_call_frame(id, client_id_, 0, method, params_.protocol, request);
  auto call = std::make_shared<pending_call>();
  call->method = method;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (broken_)
      return *broken_;
    pending_.emplace(id, call);
    last_call_ = clock::now();
  }
  if (auto ok = write_frame(frame, until); !ok) {
    auto reason =
        error{ok.error().code() == error_code::timeout ? error_code::timeout
                                                       : error_code::connection_closed,
              describe_server(params_) + ": sending " + method +
                  " failed: " + ok.error().message()};
    // A peer that rejects a connection (e.g. AccessControlException on a
    // TOKEN-only port) sends a FATAL reply and closes, so our write may fail
    // before the reader saw why. Give the reader a moment to find the root
    // cause in what already arrived.
    if (ok.error().code() != error_code::timeout) {
      sock_.shutdown_write();
      std::unique_lock<std::mutex> guard{mtx_};
      auto grace = std::min(until, clock::now() + std::chrono::seconds{1});
      cv_.wait_until(guard, grace, [&] { return call->result.has_value(); });
      if (call->result)
        return std::move(*call->result);
    }
    // A partly written frame leaves the stream unusable for everyone.
    fail_all(reason);
    std::lock_guard<std::mutex> guard{mtx_};
    return call->result ? std::move(*call->result) : reason;
  }
  if (sent != nullptr)
    *sent = true;
  std::unique_lock<std::mutex> guard{mtx_};
  cv_.wait_until(guard, until, [&] { return call->result.has_value(); });
  if (!call->result) {
    pending_.erase(id);
    return error{error_code::timeout, describe_server(params_) + ": no answer to " +
                                          method + " before the deadline"};
  }
  auto result = std::move(*call->result);
  if (!result && result.error().code() == error_code::remote)
    return result.error();
  if (!result)
    return result.error().with_context(method);
  return result;
}

bool ipc_connection::usable() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return !broken_;
}

void ipc_connection::close() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    closing_ = true;
  }
  fail_all(error{error_code::connection_closed,
                 describe_server(params_) + ": connection closed by the client"});
  sock_.shutdown();
}

void ipc_connection::fail_all(error reason) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!broken_)
    broken_ = reason;
  for (auto& [id, call] : pending_)
    if (!call->result)
      call->result = *broken_;
  pending_.clear();
  cv_.notify_all();
}

void ipc_connection::reader_loop() {
  auto where = describe_server(params_);
  auto tick = std::max(std::chrono::milliseconds{10},
                       std::min(opts_.ping_interval, opts_.max_idle));
  for (;;) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (closing_ || broken_)
        break;
    }
    auto readable = sock_.wait_readable(clock::now() + tick);
    if (!readable) {
      fail_all(error{error_code::connection_closed,
                     where + ": " + readable.error().message()});
      break;
    }
    if (!*readable) {
      bool idle = false;
      bool ping = false;
      {
        std::lock_guard<std::mutex> guard{mtx_};
        auto now = clock::now();
        idle = pending_.empty() && now - last_call_ >= opts_.max_idle;
        ping = now - last_write_ >= opts_.ping_interval;
      }
      if (idle) {
        fail_all(
            error{error_code::connection_closed, where + ": idle connection closed"});
        sock_.shutdown();
        break;
      }
      if (ping) {
        if (auto ok = write_frame(make_ping_frame(), clock::now() + opts_.frame_timeout);
            !ok) {
          fail_all(error{error_code::connection_closed,
                         where + ": ping failed: " + ok.error().message()});
          break;
        }
      }
      continue;
    }
    auto frame = read_frame(deadline::max());
    if (!frame) {
      auto code = frame.error().code() == error_code::protocol
                      ? error_code::protocol
                      : error_code::connection_closed;
      fail_all(error{code, where + ": " + frame.error().message()});
      break;
    }
    if (!(wrapped_ ? dispatch_wrapped(*frame) : dispatch(*frame)))
      break;
  }
  sock_.shutdown();
}

bool ipc_connection::dispatch(std::string_view frame) {
  auto rsp = decode_response(frame);
  if (!rsp) {
    fail_all(error{error_code::protocol,
                   describe_server(params_) +
                       ": malformed response: " + rsp.error().message()});
    return false;
  }
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = pending_.find(rsp->call_id);
  if (rsp->status == rpc_status::fatal) {
    // FATAL closes the connection: every outstanding call gets the error.
    auto err =
        remote_error(i != pending_.end() ? i->second->method : "connection setup", *rsp);
    if (!broken_)
      broken_ = err;
    for (auto& [id, call] : pending_)
      if (!call->result)
        call->result = err;
    pending_.clear();
    cv_.notify_all();
    return false;
  }
  if (i == pending_.end())
    return true; // the reply to a call that already timed out
  auto call = i->second;
  pending_.erase(i);
  if (rsp->status == rpc_status::success)
    call->result = std::string{rsp->body};
  else
    call->result = remote_error(call->method, *rsp);
  cv_.notify_all();
  return true;
}

bool ipc_connection::dispatch_wrapped(std::string_view frame) {
  auto where = describe_server(params_);
  auto broken = [&](const std::string& why) {
    fail_all(error{error_code::protocol, where + ": " + why});
    return false;
  };
  auto rsp = decode_response(frame);
  if (!rsp)
    return broken("malformed response: " + rsp.error().message());
  // On a protected connection an unwrapped response could come from anyone
  // on the path: refuse it, as Hadoop's WrappedInputStream does.
  if (rsp->call_id != sasl_call_id)
    return broken("the server sent an unprotected response (call id " +
                  std::to_string(rsp->call_id) + ") on a connection protected with " +
                  to_string(qop_) +
                  (rsp->exception_class.empty() ? std::string{}
                                                : ": " + rsp->exception_class + ": " +
                                                      first_line(rsp->error_message)));
  auto token = decode_wrap(rsp->body);
  if (!token)
    return broken(token.error().message());
  expected<std::string> plain = std::string{};
  {
    std::lock_guard<std::mutex> guard{sasl_mtx_};
    plain = sasl_->unwrap(*token);
  }
  if (!plain)
    return broken(plain.error().message());
  unwrapped_.append(*plain);
  for (;;) {
    auto next = unwrapped_.next();
    if (!next)
      return broken("in a wrapped response: " + next.error().message());
    if (!*next)
      return true;
    if (!dispatch(**next))
      return false;
  }
}

} // namespace tony::hadoop
