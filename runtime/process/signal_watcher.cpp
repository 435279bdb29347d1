#include "runtime/process/signal_watcher.hpp"

#include <signal.h>
#include <time.h>

namespace tony::process {

namespace {

sigset_t watched() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

} // namespace

signal_watcher::signal_watcher() {
  auto set = watched();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A closed pipe is an error value, never a process-killing signal.
  signal(SIGPIPE, SIG_IGN);
}

signal_watcher::~signal_watcher() {
  running_ = false;
  if (thread_.joinable())
    thread_.join();
}

void signal_watcher::start(std::function<void(int)> on_signal) {
  running_ = true;
  thread_ = std::thread{[this, f = std::move(on_signal)] {
    auto set = watched();
    timespec tick{0, 100 * 1000 * 1000};
    while (running_) {
      int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig > 0)
        f(sig);
    }
  }};
}

} // namespace tony::process
