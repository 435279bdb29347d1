#pragma once

// Horovod's gloo rendezvous, served by the AM for `framework = "horovod"`
// jobs: the HTTP key-value store `horovodrun` runs beside its workers
// (horovod/runner/http/http_server.py), on a port of the AM's own.
//
// Horovod's client (horovod/common/gloo/http_store.cc) knows three requests,
// each on a connection of its own, with no credentials:
//
//   PUT    http://<ADDR>:<PORT>/<scope>/<key>   body: the value   -> 200
//   GET    http://<ADDR>:<PORT>/<scope>/<key>   -> 200 + value, or 404 (polled
//                                                  every 10 ms while it waits)
//   DELETE http://<ADDR>:<PORT>/<scope>/<rank>  at the end of each context
//
// Scopes are "global", "local_<host>", "cross_<local rank>" and process
// sets'; keys are gloo's "rank_<i>" (host names) and "<i>" (pair addresses).
//
// Authentication rides in the URL. The client builds it as
// "http://" + ADDR + ":" + PORT + "/" + scope + "/" + key, and splits the
// host from the path at the first '/', so tony sets
// HOROVOD_GLOO_RENDEZVOUS_ADDR to "<host>:<port>/<token>" and every request
// arrives as
//
//   /<token>:<port>/<scope>/<key>
//
// where <token> = hex(HMAC-SHA256(job secret, "tony-horovod/1 attempt <n>"))
// cut to 32 characters: the executor derives it from the job secret it
// holds, so it is in no launch script, and it differs per job attempt. A
// request without a token of this job is refused (403) before its body is
// read; one with the token of an attempt older than the newest seen is
// refused too (410); the first request of a newer attempt drops the store
// of the older one. So each attempt starts from an empty store, and a
// straggler of a failed attempt cannot disturb the next.
//
// Memory is bounded: a value, the number of keys and the bytes held (keys,
// values and a fixed cost per entry) have limits that grow with the world
// size (gloo stores O(world) bytes per rank per scope); a PUT beyond them
// gets 413, which Horovod reports as a failed rendezvous.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace tony::http {
class http_server;
} // namespace tony::http

namespace tony::rendezvous {

/// The path token of `attempt`, derived from the job secret.
std::string horovod_token(const std::string& secret, int32_t attempt);

struct store_limits {
  size_t max_value_bytes = 0;
  size_t max_keys = 0;
  size_t max_bytes = 0; // keys, values and entry_cost per entry
};

/// What one entry costs besides its key and value bytes (map node, strings).
constexpr size_t entry_cost = 96;

/// The limits for a world of `world_size` ranks: room for every scope
/// Horovod opens (global, local, cross and a few process sets) with some
/// to spare.
store_limits limits_for_world(int32_t world_size);

/// An HTTP answer: status and body.
struct reply {
  int status = 200;
  std::string body;
};

/// The store with Horovod's semantics, guarded by a token per attempt.
/// Thread-safe: the HTTP server's workers call it concurrently.
class horovod_rendezvous {
public:
  /// Accepts the tokens of attempts 1 to `max_attempts` of the job whose
  /// secret is `secret`.
  horovod_rendezvous(const std::string& secret, int32_t max_attempts,
                     store_limits limits);

  /// The request's verdict before its body is read: nothing when it may
  /// go on, else the refusal.
  std::pair<bool, reply> screen(const std::string& method, const std::string& path);

  /// Answers `method` on `path` with `body` (PUT).
  reply handle(const std::string& method, const std::string& path,
               const std::string& body);

  /// The store's limits.
  const store_limits& limits() const { return limits_; }

  /// Bytes held now (as counted against max_bytes), for tests and logs.
  size_t bytes() const;

  /// The attempt whose store is live (0 before the first request).
  int32_t attempt() const;

private:
  struct target {
    int32_t attempt = 0;
    std::string scope;
    std::string key;
  };

  /// The request's attempt, scope and key, or the refusal.
  std::pair<target, reply> parse(const std::string& path) const;

  /// Moves to `attempt` when it is newer; false when it is older.
  bool enter(int32_t attempt); // REQUIRES: mutex_ is held

  reply put(const target& t, const std::string& value); // REQUIRES: mutex_ is held
  reply erase(const target& t);                         // REQUIRES: mutex_ is held

  std::map<std::string, int32_t> tokens_; // token -> attempt
  store_limits limits_;

  mutable std::mutex mutex_;
  int32_t attempt_ = 0;
  std::map<std::string, std::map<std::string, std::string>> scopes_;
  size_t keys_ = 0;
  size_t bytes_ = 0;
};

/// Serves `store` on `server` (bound, not started): a refused request is
/// answered before its body is read, and a PUT's body is taken up to the
/// store's largest value (web/request_body.hpp). Logs nothing per request.
void serve(http::http_server& server, std::shared_ptr<horovod_rendezvous> store);

} // namespace tony::rendezvous
