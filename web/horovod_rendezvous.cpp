#include "web/horovod_rendezvous.hpp"

#include <algorithm>
#include <vector>

#include "runtime/gate/job_secret.hpp"
#include "web/http_server.hpp"

namespace tony::rendezvous {

namespace {

// Scope and key names as Horovod and gloo make them: host names, digits,
// "rank_<i>", "_process_set_hash_<hex>". Anything else is no client of ours.
bool is_name(const std::string& s) {
  if (s.empty() || s.size() > 255)
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == ':';
  });
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  size_t start = path.empty() || path[0] != '/' ? 0 : 1;
  for (;;) {
    auto end = path.find('/', start);
    out.push_back(path.substr(start, end - start));
    if (end == std::string::npos)
      return out;
    start = end + 1;
  }
}

reply refuse(int status, std::string why) {
  return {status, "tony: " + std::move(why) + "\n"};
}

} // namespace

std::string horovod_token(const std::string& secret, int32_t attempt) {
  return gate::derived_token(secret, "tony-horovod/1 attempt " + std::to_string(attempt));
}

store_limits limits_for_world(int32_t world_size) {
  auto n = static_cast<size_t>(std::max(world_size, 1));
  // gloo's largest value: one pair address (under 200 bytes) per peer.
  store_limits out;
  out.max_value_bytes = 64 * 1024 + n * 512;
  // Per scope a rank sets two keys; global, local and cross scopes hold n
  // ranks each; room for as many again in process sets.
  out.max_keys = 256 + 16 * n;
  out.max_bytes = (size_t{4} << 20) + 8 * n * out.max_value_bytes;
  return out;
}

horovod_rendezvous::horovod_rendezvous(const std::string& secret, int32_t max_attempts,
                                       store_limits limits)
    : limits_(limits) {
  for (int32_t a = 1; a <= std::max(max_attempts, 1); ++a)
    tokens_.emplace(horovod_token(secret, a), a);
}

std::pair<horovod_rendezvous::target, reply>
horovod_rendezvous::parse(const std::string& path) const {
  target t;
  auto parts = split_path(path);
  if (parts.empty() || parts[0].empty())
    return {t,
            refuse(403, "this is the job's Horovod rendezvous; requests need its token")};
  // The first segment is "<token>:<port>" (the client appends the port).
  auto token = parts[0].substr(0, parts[0].find(':'));
  auto it = tokens_.find(token);
  if (it == tokens_.end())
    return {t, refuse(403, "this is the job's Horovod rendezvous; the token is not "
                           "this job's")};
  t.attempt = it->second;
  if (parts.size() != 3 || !is_name(parts[1]) || !is_name(parts[2]))
    return {t, refuse(400, "a rendezvous request is /<token>:<port>/<scope>/<key>")};
  t.scope = parts[1];
  t.key = parts[2];
  return {t, reply{}};
}

std::pair<bool, reply> horovod_rendezvous::screen(const std::string& method,
                                                  const std::string& path) {
  if (method != "GET" && method != "PUT" && method != "DELETE")
    return {false, refuse(405, "the rendezvous answers GET, PUT and DELETE")};
  auto [t, refusal] = parse(path);
  if (t.attempt == 0 || !refusal.body.empty())
    return {false, refusal};
  std::lock_guard<std::mutex> guard{mutex_};
  if (t.attempt < attempt_)
    return {false, refuse(410, "attempt " + std::to_string(t.attempt) +
                                   " of the job is over; attempt " +
                                   std::to_string(attempt_) + " runs now")};
  return {true, reply{}};
}

bool horovod_rendezvous::enter(int32_t attempt) {
  if (attempt < attempt_)
    return false;
  if (attempt > attempt_) {
    scopes_.clear();
    keys_ = 0;
    bytes_ = 0;
    attempt_ = attempt;
  }
  return true;
}

reply horovod_rendezvous::handle(const std::string& method, const std::string& path,
                                 const std::string& body) {
  auto [ok, refusal] = screen(method, path);
  if (!ok)
    return refusal;
  auto t = parse(path).first;
  std::lock_guard<std::mutex> guard{mutex_};
  if (!enter(t.attempt))
    return refuse(410, "attempt " + std::to_string(t.attempt) + " of the job is over");
  if (method == "PUT")
    return put(t, body);
  if (method == "DELETE")
    return erase(t);
  auto scope = scopes_.find(t.scope);
  if (scope == scopes_.end())
    return {404, ""};
  auto entry = scope->second.find(t.key);
  if (entry == scope->second.end())
    return {404, ""};
  return {200, entry->second};
}

reply horovod_rendezvous::put(const target& t, const std::string& value) {
  if (value.size() > limits_.max_value_bytes)
    return refuse(413, "a rendezvous value is at most " +
                           std::to_string(limits_.max_value_bytes) + " bytes, got " +
                           std::to_string(value.size()));
  auto& scope = scopes_[t.scope];
  auto entry = scope.find(t.key);
  size_t old_cost = 0;
  if (entry != scope.end())
    old_cost = entry_cost + t.scope.size() + t.key.size() + entry->second.size();
  size_t new_cost = entry_cost + t.scope.size() + t.key.size() + value.size();
  bool too_many = entry == scope.end() && keys_ >= limits_.max_keys;
  if (too_many || bytes_ - old_cost + new_cost > limits_.max_bytes) {
    if (scope.empty())
      scopes_.erase(t.scope);
    return refuse(413, "the rendezvous holds at most " +
                           std::to_string(limits_.max_keys) + " keys and " +
                           std::to_string(limits_.max_bytes) +
                           " bytes for this job's world");
  }
  if (entry == scope.end())
    ++keys_;
  bytes_ = bytes_ - old_cost + new_cost;
  scope[t.key] = value;
  return {200, ""};
}

// Horovod's server counts the DELETEs of scopes it sized from its host plan
// and clears them when every rank finished; for other scopes it deletes the
// key. A rank's DELETE names its own rank, which is also the key of its pair
// addresses: deleting that key frees the bulk of the scope as each rank
// finishes (it comes after gloo's barrier, so no peer still reads it).
reply horovod_rendezvous::erase(const target& t) {
  auto scope = scopes_.find(t.scope);
  if (scope == scopes_.end())
    return {200, ""};
  auto entry = scope->second.find(t.key);
  if (entry != scope->second.end()) {
    bytes_ -= entry_cost + t.scope.size() + t.key.size() + entry->second.size();
    --keys_;
    scope->second.erase(entry);
  }
  if (scope->second.empty())
    scopes_.erase(scope);
  return {200, ""};
}

size_t horovod_rendezvous::bytes() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return bytes_;
}

int32_t horovod_rendezvous::attempt() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return attempt_;
}

void serve(http::http_server& server, std::shared_ptr<horovod_rendezvous> store) {
  server.set_body_policy([store](const std::string& method, const std::string& path) {
    http::body_rule rule;
    auto [ok, refusal] = store->screen(method, path);
    if (!ok) {
      rule.refuse_status = refusal.status;
      rule.refuse_text = refusal.body;
    } else if (method == "PUT") {
      rule.max_bytes = store->limits().max_value_bytes;
    }
    return rule;
  });
  server.set_filter([store](const httplib::Request& req, httplib::Response& res) {
    auto [ok, refusal] = store->screen(req.method, req.path);
    if (ok)
      return false;
    res.status = refusal.status;
    res.set_header("Connection", "close");
    res.set_content(refusal.body, "text/plain; charset=utf-8");
    return true;
  });
  server.start([store](const httplib::Request& req, const std::string& body,
                       httplib::Response& res) {
    auto r = store->handle(req.method, req.path, body);
    res.status = r.status;
    res.set_content(r.body, "application/octet-stream");
  });
}

} // namespace tony::rendezvous
