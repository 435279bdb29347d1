#include "runtime/staging/hadoop_fs.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include "messages/error.hpp"
#include "runtime/process/process.hpp"

namespace fs = std::filesystem;

namespace tony::staging {

std::string scheme_of(const std::string& uri) {
  auto colon = uri.find("://");
  if (colon == std::string::npos || colon == 0)
    return {};
  for (size_t i = 0; i < colon; ++i) {
    char c = uri[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok)
      return {};
  }
  return uri.substr(0, colon);
}

fs_access access_of(const std::string& uri) {
  auto scheme = scheme_of(uri);
  if (scheme.empty() || scheme == "file")
    return fs_access::local;
  if (scheme == "hdfs")
    return fs_access::webhdfs;
  return fs_access::hadoop_cli;
}

namespace {

error bad_output(const std::string& what, const std::string& output) {
  return make_error(errc::infrastructure,
                    "cannot read `hadoop fs -stat` " + what + " from '" + output + "'");
}

bool parse_int(const std::string& text, int64_t& out) {
  if (text.empty())
    return false;
  char* end = nullptr;
  errno = 0;
  auto v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < 0)
    return false;
  out = v;
  return true;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ')
    ++i;
  return s.substr(i);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string{std::istreambuf_iterator<char>(in), {}};
}

// The last line hadoop wrote to stderr that says something (its log4j
// warnings come first, the error last).
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (auto t = trim(line); !t.empty())
      last = t;
  return last;
}

std::chrono::milliseconds default_timeout() {
  if (auto* v = std::getenv("TONY_HADOOP_FS_TIMEOUT"); v && *v) {
    int64_t s = 0;
    if (parse_int(v, s) && s > 0)
      return std::chrono::seconds(s);
  }
  return std::chrono::seconds(300);
}

} // namespace

expected<fs_stat> parse_stat(const std::string& output) {
  auto line = trim(output);
  if (line.find('\n') != std::string::npos)
    line = trim(line.substr(line.rfind('\n') + 1));
  auto space = line.find(' ');
  if (space == std::string::npos)
    return bad_output("'%b %Y'", output);
  fs_stat st;
  if (!parse_int(line.substr(0, space), st.size) ||
      !parse_int(trim(line.substr(space + 1)), st.modified_ms))
    return bad_output("'%b %Y'", output);
  return st;
}

expected<std::vector<fs_entry>> parse_listing(const std::string& output) {
  std::vector<fs_entry> result;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (trim(line).empty())
      continue;
    // TYPE|SIZE|MTIME|NAME; the name is the rest of the line.
    auto a = line.find('|');
    auto b = a == std::string::npos ? a : line.find('|', a + 1);
    auto c = b == std::string::npos ? b : line.find('|', b + 1);
    if (c == std::string::npos)
      return bad_output("'%F|%b|%Y|%n'", line);
    fs_entry e;
    e.directory = line.substr(0, a) == "directory";
    if (!parse_int(line.substr(a + 1, b - a - 1), e.size) ||
        !parse_int(line.substr(b + 1, c - b - 1), e.modified_ms))
      return bad_output("'%F|%b|%Y|%n'", line);
    e.name = line.substr(c + 1);
    while (!e.name.empty() && e.name.back() == '\r')
      e.name.pop_back();
    result.push_back(std::move(e));
  }
  return result;
}

expected<std::string> find_hadoop(const std::string& uri) {
  std::string looked;
  if (auto* home = std::getenv("HADOOP_HOME"); home && *home) {
    auto candidate = std::string{home} + "/bin/hadoop";
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    looked = candidate + " and ";
  } else {
    looked = "HADOOP_HOME (not set) and ";
  }
  if (auto* path = std::getenv("PATH"); path && *path) {
    std::istringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (dir.empty())
        continue;
      auto candidate = dir + "/hadoop";
      if (::access(candidate.c_str(), X_OK) == 0)
        return candidate;
    }
  }
  return make_error(errc::invalid_config,
                    "tony reaches " + uri +
                        " through the cluster's Hadoop client, but "
                        "found no `hadoop` command (looked in " +
                        looked +
                        "PATH): set HADOOP_HOME to a Hadoop installation configured "
                        "for " +
                        scheme_of(uri) + "://, or put its bin/ on PATH");
}

expected<std::string> hadoop_fs(const std::string& uri,
                                const std::vector<std::string>& args,
                                hadoop_fs_options opts) {
  auto hadoop = find_hadoop(uri);
  if (!hadoop)
    return hadoop.error();
  auto timeout = opts.timeout.count() > 0 ? opts.timeout : default_timeout();
  std::string shown = "hadoop fs";
  for (auto& a : args)
    shown += " " + a;
  auto tmp = fs::temp_directory_path().string() + "/tony-hadoop-fs.XXXXXX";
  std::vector<char> buf(tmp.begin(), tmp.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    return make_error(errc::infrastructure,
                      "cannot create a temporary directory for `" + shown + "`");
  std::string dir = buf.data();
  auto cleanup = [&] {
    std::error_code ec;
    fs::remove_all(dir, ec);
  };
  process::spawn_options sp;
  sp.argv = {*hadoop, "fs"};
  sp.argv.insert(sp.argv.end(), args.begin(), args.end());
  sp.env = process::current_environment();
  sp.stdout_path = dir + "/out";
  sp.stderr_path = dir + "/err";
  sp.new_process_group = true;
  auto child = process::spawn(sp);
  if (!child) {
    cleanup();
    return make_error(errc::infrastructure,
                      "cannot run `" + shown + "`: " + describe(child.error()));
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<process::exit_info> done;
  while (!(done = process::try_wait(child->pid))) {
    if (std::chrono::steady_clock::now() >= deadline) {
      process::kill_group(child->pgid, SIGKILL);
      process::wait(child->pid);
      auto err = last_line(slurp(dir + "/err"));
      cleanup();
      auto secs = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
      return make_error(errc::timeout,
                        "`" + shown + "` (for " + uri + ") did not finish within " +
                            std::to_string(secs) +
                            " s and was stopped (set TONY_HADOOP_FS_TIMEOUT to allow "
                            "more)" +
                            (err.empty() ? std::string{} : "; its last words: " + err));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto out = slurp(dir + "/out");
  auto err = last_line(slurp(dir + "/err"));
  cleanup();
  if (done->exit_code != 0) {
    auto code = err.find("No such file or directory") != std::string::npos
                    ? errc::unsatisfiable
                    : errc::infrastructure;
    return make_error(code, "`" + shown + "` failed for " + uri + " (exit " +
                                std::to_string(done->exit_code) +
                                "): " + (err.empty() ? std::string{"no message"} : err));
  }
  return out;
}

} // namespace tony::staging
