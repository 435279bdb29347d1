#include "runtime/process/command_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "messages/error.hpp"
#include "runtime/metrics/task_sampler.hpp"
#include "runtime/process/process.hpp"

namespace tony {

command_runner::~command_runner() {
  // nop
}

task_sample command_runner::sample(int64_t) {
  return {};
}

file_writer::~file_writer() {
  // nop
}

std::optional<std::string> file_writer::read_small(const std::string&, size_t) {
  return std::nullopt;
}

namespace {

class process_runner : public command_runner {
public:
  process_runner(std::string out, std::string err, std::string guard_program)
      : stdout_path_(std::move(out))
      , stderr_path_(std::move(err))
      , guard_program_(std::move(guard_program)) {
    // nop
  }

  ~process_runner() override {
    if (child_.pgid > 0 && !ended_)
      process::kill_group(child_.pgid, SIGKILL);
    if (waiter_.joinable())
      waiter_.join();
  }

  expected<void> start(const std::string& command,
                       const std::map<std::string, std::string>& env,
                       const std::string& cwd,
                       std::function<void(exit_status)> on_exit) override {
    process::spawn_options opts;
    opts.argv = {"/bin/sh", "-c", command};
    opts.env = env;
    opts.cwd = cwd;
    opts.stdout_path = stdout_path_;
    opts.stderr_path = stderr_path_;
    opts.new_process_group = true;
    opts.guard_group = true;
    opts.guard_program = guard_program_;
    auto child = process::spawn(opts);
    if (!child)
      return child.error();
    child_ = *child;
    if (auto i = env.find("CUDA_VISIBLE_DEVICES"); i != env.end())
      sampler_ = metrics::task_sampler{metrics::parse_device_list(i->second)};
    waiter_ = std::thread{[this, on_exit = std::move(on_exit)] {
      auto exit = process::wait(child_.pid);
      // The task ends with its main process; whatever it left behind in its
      // group (and the guard) goes with it.
      process::kill_group(child_.pgid, SIGKILL);
      process::release_guard(child_);
      ended_ = true;
      on_exit({exit.exit_code, exit.signal});
    }};
    return ok;
  }

  void signal(int sig) override {
    if (child_.pgid > 0 && !ended_)
      process::kill_group(child_.pgid, sig);
  }

  std::string stderr_tail(size_t max_bytes) override {
    return process::tail_file(stderr_path_, max_bytes);
  }

  task_sample sample(int64_t now_ms) override {
    if (child_.pid <= 0 || ended_)
      return {};
    return sampler_.sample(child_.pid, child_.pgid, now_ms);
  }

private:
  std::string stdout_path_;
  std::string stderr_path_;
  std::string guard_program_;
  process::child child_;
  std::atomic<bool> ended_{false};
  std::thread waiter_;
  metrics::task_sampler sampler_;
};

class disk_writer : public file_writer {
public:
  expected<void> write(const std::string& path, const std::string& content) override {
    auto tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
      out << content;
      if (!out)
        return make_error(errc::infrastructure, "cannot write " + tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      return make_error(errc::infrastructure, "cannot rename " + tmp + " to " + path);
    return ok;
  }

  expected<void> write_private(const std::string& path,
                               const std::string& content) override {
    return write_with_mode(path, content, 0600);
  }

  expected<void> write_program(const std::string& path,
                               const std::string& content) override {
    auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0 &&
        ::mkdir(path.substr(0, slash).c_str(), 0700) != 0 && errno != EEXIST)
      return make_error(errc::infrastructure, "cannot make " + path.substr(0, slash) +
                                                  ": " + std::strerror(errno));
    return write_with_mode(path, content, 0700);
  }

  std::optional<std::string> read_small(const std::string& path,
                                        size_t max_bytes) override {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return std::nullopt;
    std::string bytes(max_bytes, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(max_bytes));
    bytes.resize(static_cast<size_t>(in.gcount()));
    return bytes;
  }

private:
  // Written aside with `mode` from the moment it exists, whatever the
  // umask, then renamed over `path`.
  static expected<void> write_with_mode(const std::string& path,
                                        const std::string& content, mode_t mode) {
    auto tmp = path + ".tmp";
    ::unlink(tmp.c_str());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
      return make_error(errc::infrastructure,
                        "cannot write " + tmp + ": " + std::strerror(errno));
    ::fchmod(fd, mode); // whatever the umask
    bool ok = ::write(fd, content.data(), content.size()) ==
              static_cast<ssize_t>(content.size());
    ok = ::close(fd) == 0 && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
      ::unlink(tmp.c_str());
      return make_error(errc::infrastructure, "cannot write " + path);
    }
    return tony::ok;
  }
};

} // namespace

std::unique_ptr<command_runner> make_process_runner(std::string stdout_path,
                                                    std::string stderr_path,
                                                    std::string guard_program) {
  return std::make_unique<process_runner>(std::move(stdout_path), std::move(stderr_path),
                                          std::move(guard_program));
}

std::unique_ptr<file_writer> make_file_writer() {
  return std::make_unique<disk_writer>();
}

} // namespace tony
