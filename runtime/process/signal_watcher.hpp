#pragma once

// Turns SIGTERM, SIGINT and SIGHUP into calls of a callback on a thread of
// its own, so signals become ordinary messages to actors. Construct it before
// any other thread starts: it blocks those signals in the calling thread, and
// threads started later inherit the mask.

#include <atomic>
#include <functional>
#include <thread>

namespace tony::process {

class signal_watcher {
public:
  signal_watcher();
  ~signal_watcher();

  signal_watcher(const signal_watcher&) = delete;
  signal_watcher& operator=(const signal_watcher&) = delete;

  /// Starts delivering signals to `on_signal` (called on the watcher thread).
  void start(std::function<void(int)> on_signal);

private:
  std::atomic<bool> running_{false};
  std::thread thread_;
};

} // namespace tony::process
