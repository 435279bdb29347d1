#include "runtime/process/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "messages/error.hpp"

extern char** environ;

namespace tony::process {

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

// Resolves argv[0] against PATH before fork: execvp is not async-signal-safe.
std::string resolve_program(const std::string& prog,
                            const std::map<std::string, std::string>& env) {
  if (prog.find('/') != std::string::npos)
    return prog;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  if (auto i = env.find("PATH"); i != env.end())
    path = i->second;
  size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find(':', start);
    if (end == std::string::npos)
      end = path.size();
    auto dir = path.substr(start, end - start);
    if (dir.empty())
      dir = ".";
    auto candidate = dir + "/" + prog;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  return {};
}

// Closes every descriptor from `first` on (the guard must not keep the
// parent's sockets alive).
void close_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0)
    return;
#endif
  for (int fd = first; fd < 1024; ++fd)
    ::close(fd);
}

int open_output(const char* path) {
  return ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

// What the child needs from the heap, built before fork: the child may not
// allocate. The pointer arrays point into the strings, so an image is filled
// in place and never moved.
struct exec_image {
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  std::vector<std::string> argv_strings;
  std::vector<char*> argv;
  const char* cwd = nullptr;
  const char* out = nullptr;
  const char* err = nullptr;
  bool same_file = false;

  exec_image() = default;
  exec_image(const exec_image&) = delete;
  exec_image& operator=(const exec_image&) = delete;
};

void prepare_image(const spawn_options& opts, exec_image& image) {
  image.env_strings.reserve(opts.env.size());
  for (auto& [k, v] : opts.env)
    image.env_strings.push_back(k + "=" + v);
  for (auto& s : image.env_strings)
    image.envp.push_back(s.data());
  image.envp.push_back(nullptr);
  image.argv_strings = opts.argv;
  for (auto& s : image.argv_strings)
    image.argv.push_back(s.data());
  image.argv.push_back(nullptr);
  image.cwd = opts.cwd.empty() ? nullptr : opts.cwd.c_str();
  image.out = opts.stdout_path.empty() ? nullptr : opts.stdout_path.c_str();
  image.err = opts.stderr_path.empty() ? nullptr : opts.stderr_path.c_str();
  image.same_file = image.out && image.err && opts.stdout_path == opts.stderr_path;
}

// Child, after fork: reports `stage` and errno on the status pipe and exits.
[[noreturn]] void child_fail(int status_fd, int stage) {
  int e = errno;
  int msg[2] = {stage, e};
  [[maybe_unused]] auto n = ::write(status_fd, msg, sizeof(msg));
  ::_exit(127);
}

// Child, after fork: async-signal-safe calls only, on what prepare_image
// built. Execs `program` or fails through the status pipe.
[[noreturn]] void exec_child(const spawn_options& opts, const std::string& program,
                             const exec_image& image, int status_fd, pid_t parent) {
  sigset_t mask;
  sigemptyset(&mask);
  if (opts.block_stop_signals) {
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
  }
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  if (opts.new_session && ::setsid() < 0)
    child_fail(status_fd, 1);
  if (opts.new_process_group && ::setpgid(0, 0) < 0)
    child_fail(status_fd, 1);
  if (opts.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127);
  }
  if (image.out) {
    int fd = open_output(image.out);
    if (fd < 0 || ::dup2(fd, 1) < 0)
      child_fail(status_fd, 2);
    if (image.same_file && ::dup2(fd, 2) < 0)
      child_fail(status_fd, 2);
  }
  if (image.err && !image.same_file) {
    int fd = open_output(image.err);
    if (fd < 0 || ::dup2(fd, 2) < 0)
      child_fail(status_fd, 3);
  }
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0)
    ::dup2(devnull, 0);
  if (image.cwd && ::chdir(image.cwd) < 0)
    child_fail(status_fd, 4);
  ::execve(program.c_str(), image.argv.data(), image.envp.data());
  child_fail(status_fd, 5);
}

// Parent: what the child wrote on the status pipe before exec closed it;
// the byte count read (sizeof(msg) after a failure, 0 after exec).
ssize_t read_exec_status(int status_fd, int (&msg)[2]) {
  ssize_t n;
  do {
    n = ::read(status_fd, msg, sizeof(msg));
  } while (n < 0 && errno == EINTR);
  return n;
}

// The error for what the child reported: the stage that failed, where, why.
error exec_failure(const int (&msg)[2], const spawn_options& opts,
                   const std::string& program) {
  static constexpr const char* stages[] = {"",
                                           "cannot create session/group",
                                           "cannot open stdout file",
                                           "cannot open stderr file",
                                           "cannot change to working directory",
                                           "cannot execute"};
  std::string what = stages[msg[0] >= 1 && msg[0] <= 5 ? msg[0] : 5];
  std::string where = msg[0] == 2   ? opts.stdout_path
                      : msg[0] == 3 ? opts.stderr_path
                      : msg[0] == 4 ? opts.cwd
                                    : program;
  return make_error(errc::infrastructure,
                    what + " '" + where + "': " + errno_text(msg[1]));
}

// Guard, after fork: joins the command's group `pgid`, waits for the parent
// to vanish (EOF on `rfd`), then kills the group.
[[noreturn]] void run_guard(pid_t pgid, int rfd, const std::string& guard_program) {
  if (::setpgid(0, pgid) < 0)
    ::_exit(0); // the group is already gone
  if (rfd != 3) {
    ::dup2(rfd, 3);
    rfd = 3;
  }
  close_from(4);
  ::fcntl(rfd, F_SETFD, 0); // kept across exec
  // Deaf to every signal but SIGKILL: a TERM meant for the task must not
  // take the guard with it. The mask survives exec.
  sigset_t all;
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  // tony-guard (static, a few system calls) holds well under a megabyte;
  // a shell waiting on the pipe about two; a forked copy of the executor
  // far more. The loop below is the last fallback.
  if (!guard_program.empty())
    ::execl(guard_program.c_str(), "tony-guard", static_cast<char*>(nullptr));
  ::execl("/bin/sh", "sh", "-c", "read _ <&3; kill -9 0", static_cast<char*>(nullptr));
  char buf[16];
  for (;;) {
    auto r = ::read(rfd, buf, sizeof(buf));
    if (r == 0 || (r < 0 && errno != EINTR))
      break;
  }
  ::kill(0, SIGKILL);
  ::_exit(0);
}

// Parent: forks the guard of `result`'s group, which holds the read end of
// `guard_pipe`; the parent keeps the write end (result.guard_fd).
void start_guard(const spawn_options& opts, const int (&guard_pipe)[2], child& result) {
  const auto& guard_program = opts.guard_program;
  auto guard = ::fork();
  if (guard == 0)
    run_guard(result.pid, guard_pipe[0], guard_program);
  ::close(guard_pipe[0]);
  if (guard < 0) {
    ::close(guard_pipe[1]);
  } else {
    result.guard_pid = guard;
    result.guard_fd = guard_pipe[1];
  }
}

} // namespace

expected<child> spawn(const spawn_options& opts) {
  if (opts.argv.empty())
    return make_error(errc::invalid_config, "spawn: empty command");
  if (opts.guard_group && !opts.new_process_group)
    return make_error(errc::invalid_config, "spawn: guard_group needs new_process_group");
  auto program = resolve_program(opts.argv[0], opts.env);
  if (program.empty())
    return make_error(errc::invalid_config,
                      "cannot execute '" + opts.argv[0] + "': not found in PATH");
  // Everything the child touches is prepared before fork.
  exec_image image;
  prepare_image(opts, image);
  // Reports exec failures: the child writes errno, exec closes it on success.
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0)
    return make_error(errc::infrastructure, "pipe: " + errno_text(errno));
  int guard_pipe[2] = {-1, -1};
  if (opts.guard_group && ::pipe2(guard_pipe, O_CLOEXEC) != 0) {
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    return make_error(errc::infrastructure, "pipe: " + errno_text(errno));
  }
  auto parent = ::getpid();
  auto pid = ::fork();
  if (pid < 0) {
    auto e = errno;
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    if (guard_pipe[0] >= 0) {
      ::close(guard_pipe[0]);
      ::close(guard_pipe[1]);
    }
    return make_error(errc::infrastructure, "fork: " + errno_text(e));
  }
  if (pid == 0)
    exec_child(opts, program, image, status_pipe[1], parent);
  // Parent. Set the group here too so it exists before we return.
  if (opts.new_process_group)
    ::setpgid(pid, pid);
  ::close(status_pipe[1]);
  int msg[2] = {0, 0};
  auto n = read_exec_status(status_pipe[0], msg);
  ::close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(msg))) {
    ::waitpid(pid, nullptr, 0);
    if (guard_pipe[0] >= 0) {
      ::close(guard_pipe[0]);
      ::close(guard_pipe[1]);
    }
    return exec_failure(msg, opts, program);
  }
  child result;
  result.pid = pid;
  result.pgid = opts.new_process_group ? pid : ::getpgid(pid);
  if (opts.guard_group)
    start_guard(opts, guard_pipe, result);
  return result;
}

exit_info wait(pid_t pid) {
  int status = 0;
  for (;;) {
    auto r = ::waitpid(pid, &status, 0);
    if (r == pid)
      break;
    if (r < 0 && errno != EINTR)
      return {255, 0};
  }
  if (WIFSIGNALED(status))
    return {128 + WTERMSIG(status), WTERMSIG(status)};
  return {WEXITSTATUS(status), 0};
}

std::optional<exit_info> try_wait(pid_t pid) {
  int status = 0;
  auto r = ::waitpid(pid, &status, WNOHANG);
  if (r != pid)
    return std::nullopt;
  if (WIFSIGNALED(status))
    return exit_info{128 + WTERMSIG(status), WTERMSIG(status)};
  return exit_info{WEXITSTATUS(status), 0};
}

bool kill_group(pid_t pgid, int sig) {
  if (pgid <= 1)
    return false;
  return ::killpg(pgid, sig) == 0;
}

std::vector<pid_t> session_members(pid_t sid) {
  std::vector<pid_t> result;
  auto dir = ::opendir("/proc");
  if (!dir)
    return result;
  while (auto entry = ::readdir(dir)) {
    char* end = nullptr;
    auto pid = static_cast<pid_t>(std::strtol(entry->d_name, &end, 10));
    if (pid <= 0 || *end != '\0')
      continue;
    std::ifstream in("/proc/" + std::string(entry->d_name) + "/stat");
    std::string line;
    if (!std::getline(in, line))
      continue;
    // Fields after the command name (which may hold spaces) in parentheses:
    // state ppid pgrp session ...
    auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos)
      continue;
    char state = 0;
    int ppid = 0, pgrp = 0, session = 0;
    if (std::sscanf(line.c_str() + close_paren + 1, " %c %d %d %d", &state, &ppid, &pgrp,
                    &session) != 4)
      continue;
    if (session == sid && state != 'Z')
      result.push_back(pid);
  }
  ::closedir(dir);
  return result;
}

int kill_session(pid_t sid, int sig) {
  if (sid <= 1)
    return 0;
  int n = 0;
  for (auto pid : session_members(sid))
    if (::kill(pid, sig) == 0)
      ++n;
  return n;
}

void release_guard(child& c) {
  if (c.guard_fd >= 0) {
    // The group is gone or the command ended normally: stop the guard
    // without letting it fire on a reused group id.
    if (c.guard_pid > 0)
      ::kill(c.guard_pid, SIGKILL);
    ::close(c.guard_fd);
    c.guard_fd = -1;
  }
  if (c.guard_pid > 0) {
    ::waitpid(c.guard_pid, nullptr, 0);
    c.guard_pid = -1;
  }
}

std::string tail_file(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return {};
  auto size = static_cast<size_t>(in.tellg());
  auto start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string data(size - start, '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (start > 0) {
    auto nl = data.find('\n');
    if (nl != std::string::npos && nl + 1 < data.size())
      data.erase(0, nl + 1);
  }
  return data;
}

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> result;
  for (auto e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos)
      result.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return result;
}

std::string self_executable() {
  char buf[4096];
  auto n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return {};
  buf[n] = '\0';
  return buf;
}

} // namespace tony::process
