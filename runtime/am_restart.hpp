#pragma once

// What carries a job from one AM attempt to the next on YARN
// (`[am] max_app_attempts >= 2`; doc/operations.md "AM restart"). Both live
// in the job's staging dir, which every attempt and every executor reaches:
//
//   am.json        where the current AM's registry listens, and its attempt:
//                  written by each AM once it listens; executors whose AM
//                  died read it until a new AM is named there
//   am-state.json  the job as the AM last saw it (job_status JSON): written
//                  as it changes, read by the next AM attempt, which adopts
//                  the tasks that still run
//
//   AM 1 ──state──▶ am-state.json ──▶ AM 2 (adopts: core/lifecycle.hpp)
//   AM 1 ──addr───▶ am.json ◀─poll── executors ──register again──▶ AM 2
//        (dies)     AM 2 ──addr──▶ am.json

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "hadoop/credentials.hpp"
#include "hadoop/webhdfs.hpp"
#include "messages/types.hpp"

namespace tony {

constexpr const char* am_address_file = "am.json";
constexpr const char* am_state_file = "am-state.json";

/// Where an AM attempt's registry listens.
struct am_location {
  std::string host;
  int32_t port = 0;
  int32_t am_attempt = 0;
};

std::string to_json(const am_location& x);

/// am.json's content; nothing when `text` is not one.
std::optional<am_location> am_location_from_json(const std::string& text);

/// YARN's application attempt of a container id (container_..._02_000001:
/// 2); 0 when `container_id` is none.
int32_t attempt_of_container(const std::string& container_id);

/// How the AM and its executors reach a directory `uri` on the cluster's
/// filesystem: for hdfs:// through WebHDFS at `webhdfs`, with the job's
/// HDFS delegation token for that NameNode when `tokens` holds one (a
/// Kerberos cluster: nobody in a container has a ticket), else SIMPLE as
/// `user`; HTTPS against `ca_file` (empty: the system's CA bundle).
webhdfs::namenode_http namenode_for(const std::string& uri, const std::string& webhdfs,
                                    const std::string& user,
                                    const hadoop::credentials& tokens,
                                    const std::string& ca_file);

/// Keeps the newest job status written through `write`, at most every
/// `interval` (a final status at once), on a thread of its own: save()
/// never waits for the filesystem.
class state_journal {
public:
  using write_fn = std::function<bool(const std::string& json)>;

  state_journal(write_fn write, std::chrono::milliseconds interval);

  /// Writes what is still unwritten, then stops.
  ~state_journal();

  state_journal(const state_journal&) = delete;
  state_journal& operator=(const state_journal&) = delete;

  /// Keeps `st` as the newest (any thread); ignored once closed.
  void save(const job_status& st);

  /// Writes what is still unwritten and stops; later saves are ignored.
  void close();

  /// Statuses written so far.
  uint64_t writes() const;

private:
  void run();

  write_fn write_;
  std::chrono::milliseconds interval_;
  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::optional<job_status> newest_;
  bool stop_ = false;
  uint64_t writes_ = 0;
  std::thread thread_;
};

} // namespace tony
