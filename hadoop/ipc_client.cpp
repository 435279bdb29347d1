#include "hadoop/ipc_client.hpp"

#include "hadoop/crypto.hpp"

namespace tony::hadoop {

ipc_client::ipc_client(connection_options opts)
    : opts_(opts)
    , client_id_(random_bytes(16)) {
  // Hadoop's client ids are UUIDs: mark version 4 / variant 1 for tidiness.
  client_id_[6] = static_cast<char>((client_id_[6] & 0x0F) | 0x40);
  client_id_[8] = static_cast<char>((client_id_[8] & 0x3F) | 0x80);
}

ipc_client::~ipc_client() {
  close_all();
}

ipc_client::key ipc_client::key_of(const connection_params& x) {
  std::string tok;
  if (x.auth_token)
    tok = x.auth_token->kind + '\0' + x.auth_token->identifier + '\0' +
          x.auth_token->password;
  // Credentials objects are compared by identity: a new login is a new
  // connection.
  std::string security =
      std::to_string(reinterpret_cast<uintptr_t>(x.kerberos.get())) + '\0' +
      std::to_string(x.protection.bits()) + '\0' + x.kerberos_principal.key + '\0' +
      x.kerberos_principal.principal + '\0' + x.kerberos_principal.pattern;
  return key{
      x.address.host, x.address.port, x.protocol, x.user + '\0' + x.proxy_user, tok,
      x.server_kind,  security};
}

namespace {

error shutting_down(const connection_params& target) {
  return error{error_code::cancelled,
               "no call to " + describe_server(target) + ": the client is shutting down"};
}

} // namespace

expected<std::shared_ptr<ipc_connection>>
ipc_client::acquire(const connection_params& target, deadline until, bool* reused) {
  if (shut_down_)
    return shutting_down(target);
  std::shared_ptr<slot> s;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& entry = slots_[key_of(target)];
    if (!entry)
      entry = std::make_shared<slot>();
    s = entry;
  }
  // Declared before the lock: a dropped connection joins its reader thread
  // in its destructor, which must not happen under the slot's lock.
  std::shared_ptr<ipc_connection> stale;
  // One connect per key at a time; other keys proceed in parallel.
  std::unique_lock<std::mutex> guard{s->mtx};
  if (!s->cv.wait_until(guard, until, [&] { return !s->connecting; }))
    return error{error_code::timeout, "cannot connect to " + describe_server(target) +
                                          ": another connection attempt is still "
                                          "running at the deadline"};
  if (s->conn && s->conn->usable()) {
    *reused = true;
    return s->conn;
  }
  *reused = false;
  stale.swap(s->conn);
  s->connecting = true;
  guard.unlock();
  auto conn = ipc_connection::open(target, opts_, client_id_, until, &shut_down_);
  guard.lock();
  s->connecting = false;
  s->cv.notify_all();
  if (!conn)
    return std::move(conn).error();
  if (shut_down_) { // shut down while connecting: close_all missed this one
    guard.unlock();
    (*conn)->close();
    return shutting_down(target);
  }
  s->conn = std::shared_ptr<ipc_connection>{std::move(*conn)};
  return s->conn;
}

expected<std::string> ipc_client::call_raw(const connection_params& target,
                                           const std::string& method,
                                           const google::protobuf::MessageLite& request,
                                           deadline until) {
  for (int attempt = 0;; ++attempt) {
    bool reused = false;
    auto conn = acquire(target, until, &reused);
    if (!conn)
      return std::move(conn).error();
    bool sent = false;
    auto result = (*conn)->call(method, request, until, &sent);
    if (!result && shut_down_)
      return error{error_code::cancelled, describe_server(target) + ": " + method +
                                              ": the client is shutting down"};
    // A request that never left may go out on a fresh connection.
    if (!result && !sent && reused && attempt == 0)
      continue;
    return result;
  }
}

size_t ipc_client::connection_count() const {
  std::lock_guard<std::mutex> guard{mtx_};
  size_t n = 0;
  for (auto& [k, s] : slots_) {
    std::lock_guard<std::mutex> g{s->mtx};
    if (s->conn && s->conn->usable())
      ++n;
  }
  return n;
}

void ipc_client::shut_down() {
  shut_down_ = true;
  close_all();
}

void ipc_client::close_all() {
  std::map<key, std::shared_ptr<slot>> slots;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    slots.swap(slots_);
  }
  for (auto& [k, s] : slots) {
    std::shared_ptr<ipc_connection> conn;
    {
      std::lock_guard<std::mutex> g{s->mtx};
      conn.swap(s->conn);
    }
    if (conn)
      conn->close();
  }
}

} // namespace tony::hadoop
