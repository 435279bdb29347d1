#pragma once

// Jobs longer than a delegation token's life, on YARN (as Spark's
// AMCredentialRenewer): the ResourceManager renews the tokens tony-submit
// got until their max date, and no further. When the job was submitted
// with a keytab, tony-submit ships it to the AM privately (its local
// resource, 0600) with the plan of which tokens to get
// (hdfs::renewal_plan); the AM then logs in itself and gets new tokens
// before the current ones expire:
//
//   start ─▶ login ─▶ get tokens ─▶ publish ─▶ wait 75 % of the time to the
//              ▲  fails │ fails       │        first new token's expiry ──┐
//              │        ▼             │                                    │
//              └── retry in 1 min ◀───┘◀───────────────────────────────────┘
//
// "Publish" puts them in the token_box — what every later container gets
// and what the AM's own WebHDFS calls use — and hands them to the running
// executors (application_master::publish_tokens), each of which rewrites
// its task's token file. Nothing here logs a token.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "hadoop/credentials.hpp"
#include "hadoop/hdfs/token_plan.hpp"

namespace tony {

/// The job's current credentials in the AM (its container's tokens minus
/// the AMRMToken, later merged with new ones). Thread-safe: the launcher,
/// the renewer and the end read and write it.
class token_box {
public:
  explicit token_box(hadoop::credentials initial);

  hadoop::credentials current() const;

  /// Adds `fresh`, replacing the tokens filed under the same alias.
  void merge(const hadoop::credentials& fresh);

private:
  mutable std::mutex mtx_;
  hadoop::credentials creds_;
};

class token_renewer {
public:
  /// Receives the serialized credentials after each renewal.
  using publish_fn = std::function<void(const std::string& credentials)>;

  /// `plan.keytab` is relative to `work_dir`.
  token_renewer(hdfs::renewal_plan plan, std::string work_dir,
                std::shared_ptr<token_box> box);

  /// Stops the thread (at most one call in flight finishes first).
  ~token_renewer();

  token_renewer(const token_renewer&) = delete;
  token_renewer& operator=(const token_renewer&) = delete;

  /// Starts the thread; the first round runs at once.
  void start(publish_fn publish);

  /// Stops the thread; idempotent.
  void stop();

private:
  void run();

  // One round: login if needed, get tokens, publish. The delay to the next.
  std::chrono::milliseconds round();

  hdfs::renewal_plan plan_;
  std::string keytab_;
  std::shared_ptr<token_box> box_;
  publish_fn publish_;
  std::shared_ptr<const hadoop::kerberos_credentials> login_;
  std::chrono::milliseconds interval_{0};
  int generation_ = 0;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace tony
