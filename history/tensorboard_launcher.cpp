#include "history/tensorboard_launcher.hpp"
#include "base/files.hpp"

#include <filesystem>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <thread>

#include "config/task_env.hpp"
#include "messages/error.hpp"
#include "runtime/process/process.hpp"

namespace tony::history {

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// A key as a file name: application ids are [a-z0-9_] already.
std::string file_safe(const std::string& key) {
  std::string out;
  for (char c : key)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return out;
}

} // namespace

int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return 0;
  auto addr = loopback(0);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

bool port_answers(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return false;
  auto addr = loopback(port);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

tensorboard_launcher::tensorboard_launcher(options opts)
    : opts_(std::move(opts)) {
  // A directory nobody else could have made or may enter: the logs cannot
  // be links planted to files of someone else's.
  if (auto dir = base::make_private_dir("tony-history-tensorboard-", no_output_dir_,
                                        opts_.log_root))
    output_dir_ = *dir;
  if (!output_dir_.empty() && !opts_.token.empty() && opts_.program == "tensorboard") {
    auto path = output_dir_ + "/tony_tensorboard.py";
    std::ofstream out{path};
    out << tensorboard_guard_program();
    if (out.flush())
      guard_ = path;
  } else if (!output_dir_.empty() && !opts_.token.empty()) {
    // Another program: a TensorBoard it makes in Python
    // (tensorboard.program) is guarded by tony's sitecustomize, as a
    // chief's is; another kind runs as it is.
    auto dir = output_dir_ + "/tony-py";
    std::string why;
    if (::mkdir(dir.c_str(), 0700) == 0 &&
        base::write_new_file(dir + "/sitecustomize.py", tensorboard_site_hook(), 0600,
                             why))
      site_dir_ = dir;
  }
}

tensorboard_launcher::~tensorboard_launcher() {
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& [_, x] : up_)
    stop(x);
  up_.clear();
  if (!output_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(output_dir_, ec);
  }
}

void tensorboard_launcher::stop(instance& x) {
  if (x.pid <= 0)
    return;
  process::kill_session(x.pid, SIGTERM);
  auto deadline = clock_type::now() + milliseconds(3000);
  while (!process::try_wait(x.pid) && clock_type::now() < deadline)
    std::this_thread::sleep_for(milliseconds(20));
  process::kill_session(x.pid, SIGKILL);
  if (!process::try_wait(x.pid))
    process::wait(x.pid);
  x.pid = -1;
}

// The least recently used goes when the launcher is full.
bool tensorboard_launcher::make_room() {
  auto now = clock_type::now();
  while (up_.size() >= opts_.max_running && !up_.empty()) {
    auto oldest = up_.begin();
    for (auto i = up_.begin(); i != up_.end(); ++i)
      if (i->second.used < oldest->second.used)
        oldest = i;
    if (now - oldest->second.used < milliseconds(opts_.keep_ms))
      return false;
    stop(oldest->second);
    up_.erase(oldest);
  }
  return true;
}

bool tensorboard_launcher::refuse_start(const std::string& client, status& s) {
  auto now = clock_type::now();
  auto window = milliseconds(opts_.start_window_ms);
  for (auto i = starts_.begin(); i != starts_.end();) { // forget old starts
    auto& times = i->second;
    times.erase(std::remove_if(times.begin(), times.end(),
                               [&](auto t) { return now - t >= window; }),
                times.end());
    i = times.empty() ? starts_.erase(i) : std::next(i);
  }
  auto seconds_until = [](clock_type::duration d) {
    return std::max<int64_t>(
        1, std::chrono::duration_cast<std::chrono::seconds>(d).count() + 1);
  };
  auto mine = starts_.find(client);
  if (mine != starts_.end() && mine->second.size() >= opts_.starts_per_client) {
    s.state = status::too_many;
    s.retry_after_s = seconds_until(mine->second.front() + window - now);
    s.why = std::to_string(mine->second.size()) + " TensorBoards were started for " +
            (client.empty() ? std::string{"this client"} : client) + " in the last " +
            std::to_string(opts_.start_window_ms / 1000) + " s; try again in " +
            std::to_string(s.retry_after_s) + " s";
    return true;
  }
  if (!make_room()) {
    auto oldest_use = clock_type::time_point::max();
    for (auto& [key, x] : up_)
      oldest_use = std::min(oldest_use, x.used);
    s.state = status::busy;
    s.retry_after_s = seconds_until(oldest_use + milliseconds(opts_.keep_ms) - now);
    s.why = "all " + std::to_string(opts_.max_running) +
            " TensorBoards this server runs were used in the last " +
            std::to_string(opts_.keep_ms / 1000) + " s; try again in " +
            std::to_string(s.retry_after_s) + " s";
    return true;
  }
  starts_[client].push_back(now);
  return false;
}

tensorboard_launcher::status tensorboard_launcher::start(const std::string& key,
                                                         const std::string& log_dir) {
  if (output_dir_.empty()) {
    status s;
    s.state = status::failed;
    s.why = "no private directory for TensorBoard's output: " + no_output_dir_ +
            " (set TMPDIR to a directory of yours)";
    return s;
  }
  instance x;
  x.log_dir = log_dir;
  x.port = free_loopback_port();
  x.output = output_dir_ + "/" + file_safe(key) + ".log";
  x.started = x.used = clock_type::now();
  process::spawn_options so;
  so.argv = {opts_.program,         "--logdir", log_dir, "--host", "127.0.0.1", "--port",
             std::to_string(x.port)};
  so.env = process::current_environment();
  if (!guard_.empty()) { // behind the token, as a job's sidecar
    so.argv[0] = guard_;
    so.argv.insert(so.argv.begin(), "python3");
    so.env["TONY_TENSORBOARD_TOKEN"] = opts_.token;
  } else if (!site_dir_.empty()) {
    auto& path = so.env["PYTHONPATH"];
    path = path.empty() ? site_dir_ : site_dir_ + ":" + path;
    so.env["TONY_TENSORBOARD_TOKEN"] = opts_.token;
  }
  so.stdout_path = x.output;
  so.stderr_path = x.output;
  so.new_session = true;
  auto child = process::spawn(so);
  if (x.port == 0 || !child) {
    status s;
    s.state = status::failed;
    s.why = x.port == 0
                ? std::string{"no free port on 127.0.0.1"}
                : "cannot start " + opts_.program + ": " + describe(child.error()) +
                      " (install the tensorboard package, or pass "
                      "--tensorboard PROGRAM)";
    return s;
  }
  x.pid = child->pid;
  up_[key] = std::move(x);
  return {};
}

// Ready once its port answers; failed when it exited or took too long.
void tensorboard_launcher::check(const std::string&, instance& x) {
  if (x.ready || !x.failure.empty())
    return;
  if (auto exit = process::try_wait(x.pid)) {
    x.pid = -1;
    x.failure = "TensorBoard exited with code " + std::to_string(exit->exit_code) +
                "; its output ends with:\n" + process::tail_file(x.output, 2000);
    return;
  }
  if (port_answers(x.port)) {
    x.ready = true;
    return;
  }
  auto waited = clock_type::now() - x.started;
  if (waited > milliseconds(opts_.start_timeout_ms)) {
    stop(x);
    x.failure = "TensorBoard did not answer within " +
                std::to_string(opts_.start_timeout_ms / 1000) +
                " s; its output ends with:\n" + process::tail_file(x.output, 2000);
  }
}

tensorboard_launcher::status tensorboard_launcher::get(const std::string& key,
                                                       const std::string& log_dir,
                                                       const std::string& client) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = up_.find(key);
  if (i != up_.end() && (i->second.log_dir != log_dir ||
                         (!i->second.failure.empty() &&
                          clock_type::now() - i->second.used > milliseconds(10000)))) {
    // Another log dir, or a failure long enough ago to try again.
    stop(i->second);
    up_.erase(i);
    i = up_.end();
  }
  if (i == up_.end()) {
    status refused;
    if (!output_dir_.empty() && refuse_start(client, refused))
      return refused;
    auto s = start(key, log_dir);
    if (s.state == status::failed)
      return s;
    i = up_.find(key);
  }
  auto& x = i->second;
  x.used = clock_type::now();
  check(key, x);
  status s;
  if (!x.failure.empty()) {
    s.state = status::failed;
    s.why = x.failure;
  } else if (x.ready) {
    s.state = status::ready;
    s.address = "127.0.0.1:" + std::to_string(x.port);
  }
  return s;
}

void tensorboard_launcher::stop_idle(
    const std::function<void(const std::string&)>& said) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto now = clock_type::now();
  for (auto i = up_.begin(); i != up_.end();) {
    auto idle = now - i->second.used;
    if (idle < milliseconds(opts_.idle_ms)) {
      ++i;
      continue;
    }
    stop(i->second);
    if (said)
      said(
          "TensorBoard of " + i->first + " stopped after " +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(idle).count()) +
          " s idle");
    i = up_.erase(i);
  }
}

std::vector<std::string> tensorboard_launcher::running() const {
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<std::string> out;
  for (auto& [key, x] : up_)
    if (x.pid > 0)
      out.push_back(key);
  return out;
}

} // namespace tony::history
