#pragma once

// TensorBoard for finished jobs, on demand (tony-history serve): the first
// request for a job's tensorboard/ starts `tensorboard --logdir <its log
// dir>` on a free loopback port; requests are proxied to it once it
// answers; it is stopped when nobody asked for it for `idle_ms`, and the
// least recently used one goes when `max_running` are up. Every TensorBoard
// runs in a session of its own and is stopped (TERM, then KILL) with the
// launcher.
//
// Starts are bounded, so that no visitor can churn TensorBoards (each a
// Python process of a few hundred MB): a client (its address) starts at
// most `starts_per_client` in `start_window_ms`, and a TensorBoard used in
// the last `keep_ms` is never stopped to make room for another; a start
// beyond either is refused (too_many, busy) with when to try again.
//
//   get(app, dir) ─▶ starting ──port answers──▶ ready ──idle──▶ stopped
//                        │ exits, or no answer within start_timeout
//                        ▼
//                      failed (the reason and its output's last lines)

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tony::history {

class tensorboard_launcher {
public:
  struct options {
    /// The program; found on PATH when it has no slash.
    std::string program = "tensorboard";
    int64_t idle_ms = 10 * 60 * 1000;
    size_t max_running = 4;
    int64_t start_timeout_ms = 120 * 1000;
    size_t starts_per_client = 4;
    int64_t start_window_ms = 60 * 1000;
    int64_t keep_ms = 60 * 1000;
    /// With the default program, TensorBoard runs behind tony's guard
    /// (config/task_env.hpp, tensorboard_guard_program) and answers only
    /// requests carrying this token, as a job's sidecar does; with another
    /// program, tony's sitecustomize (tensorboard_site_hook) is first on
    /// its PYTHONPATH, so a TensorBoard it makes in Python is guarded the
    /// same way. Empty: as it is.
    std::string token;
    /// Where the launcher makes its private directory for the
    /// TensorBoards' output (<dir>/<key>.log); empty: $TMPDIR, else /tmp,
    /// else ~/.tony/tmp (base/files.hpp make_private_dir).
    std::string log_root;
  };

  struct status {
    /// too_many: this client started its share of late; busy: every
    /// TensorBoard up was used too recently to be stopped for another.
    enum state_t { ready, starting, failed, too_many, busy } state = starting;
    std::string address;       // "127.0.0.1:<port>" when ready
    std::string why;           // when failed, too_many or busy
    int64_t retry_after_s = 0; // too_many, busy
  };

  explicit tensorboard_launcher(options opts);
  ~tensorboard_launcher();

  /// The token the proxy sends to its TensorBoards; empty: none.
  const std::string& token() const noexcept {
    return guard_.empty() && site_dir_.empty() ? guard_ : opts_.token;
  }

  tensorboard_launcher(const tensorboard_launcher&) = delete;
  tensorboard_launcher& operator=(const tensorboard_launcher&) = delete;

  /// The TensorBoard of `key` (an application id) on `log_dir`: started
  /// when there is none, and marked used now; a start counts against
  /// `client` (the requester's address). Thread-safe.
  status get(const std::string& key, const std::string& log_dir,
             const std::string& client);

  /// Stops the TensorBoards idle for longer than idle_ms; calls `said` with
  /// a line for each. Thread-safe.
  void stop_idle(const std::function<void(const std::string&)>& said);

  /// The keys of the TensorBoards up or starting.
  std::vector<std::string> running() const;

  /// The private directory the TensorBoards' output goes to (mode 0700, a
  /// name made by mkdtemp, removed with the launcher); empty when none
  /// could be made (then no TensorBoard starts, and get() says why).
  const std::string& output_dir() const { return output_dir_; }

private:
  struct instance {
    pid_t pid = -1;
    int port = 0;
    std::string log_dir;
    std::string output;
    bool ready = false;
    std::string failure;
    std::chrono::steady_clock::time_point started;
    std::chrono::steady_clock::time_point used;
  };

  // REQUIRES: mtx_ is held.
  status start(const std::string& key, const std::string& log_dir);
  void check(const std::string& key, instance& x);
  void stop(instance& x);
  // False when every TensorBoard up was used within keep_ms.
  bool make_room();
  // Refuses a start `client` may not make now (too_many or busy).
  bool refuse_start(const std::string& client, status& s);

  options opts_;
  std::string output_dir_;
  std::string no_output_dir_; // why there is none
  std::string guard_;         // the guard program's path; empty: unguarded
  std::string site_dir_;      // tony's sitecustomize's dir, for another program
  mutable std::mutex mtx_;
  std::map<std::string, instance> up_;
  // Each client's starts within the window, oldest first.
  std::map<std::string, std::vector<std::chrono::steady_clock::time_point>> starts_;
};

/// A free TCP port on 127.0.0.1 (bound and released: another process may
/// take it meanwhile); 0 when none.
int free_loopback_port();

/// True if something accepts TCP connections on 127.0.0.1:`port` now.
bool port_answers(int port);

} // namespace tony::history
