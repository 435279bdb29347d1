#include "base/files.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace tony::base {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return std::nullopt;
  return ss.str();
}

std::string expand_home(const std::string& path) {
  if (path != "~" && path.rfind("~/", 0) != 0)
    return path;
  std::string home;
  if (const char* env = std::getenv("HOME"); env != nullptr && *env != '\0')
    home = env;
  else if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr)
    home = pw->pw_dir;
  else
    return path;
  return home + path.substr(1);
}

namespace {

// Whether `path` is a directory of the effective user's that no one else
// may enter; else why not.
bool private_dir_ok(const std::string& path, std::string& why) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    why = "cannot inspect " + path + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    why = path + " is not a directory (a link or a file stands there)";
    return false;
  }
  if (st.st_uid != ::geteuid()) {
    why = path + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user";
    return false;
  }
  if ((st.st_mode & 077) != 0) {
    why = path + " may be entered by other users";
    return false;
  }
  return true;
}

std::optional<std::string> private_dir_in(const std::string& parent,
                                          const std::string& prefix, std::string& why) {
  std::string pattern = parent + "/" + prefix + "XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    why = "cannot make a directory in " + parent + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string path = buf.data();
  if (!private_dir_ok(path, why))
    return std::nullopt;
  return path;
}

} // namespace

std::optional<std::string> make_private_dir(const std::string& prefix, std::string& why,
                                            const std::string& parent) {
  if (!parent.empty())
    return private_dir_in(parent, prefix, why);
  const char* tmp = std::getenv("TMPDIR");
  std::string first = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  if (auto dir = private_dir_in(first, prefix, why))
    return dir;
  auto home = expand_home("~/.tony");
  std::string second = home + "/tmp";
  ::mkdir(home.c_str(), 0700);
  ::mkdir(second.c_str(), 0700);
  std::string why_first = why;
  if (!private_dir_ok(second, why)) {
    why = why_first + "; " + why;
    return std::nullopt;
  }
  if (auto dir = private_dir_in(second, prefix, why))
    return dir;
  why = why_first + "; " + why;
  return std::nullopt;
}

std::optional<std::string> private_home_dir(const std::string& name, std::string& why) {
  auto home = expand_home("~/.tony");
  auto dir = home + "/" + name;
  ::mkdir(home.c_str(), 0700);
  ::mkdir(dir.c_str(), 0700);
  if (!private_dir_ok(home, why) || !private_dir_ok(dir, why))
    return std::nullopt;
  return dir;
}

bool write_new_file(const std::string& path, const std::string& content, unsigned mode,
                    std::string& why) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  static_cast<mode_t>(mode));
  if (fd < 0) {
    why = "cannot create " + path + ": " + std::strerror(errno) +
          (errno == EEXIST ? " (something is there already)" : "");
    return false;
  }
  size_t done = 0;
  while (done < content.size()) {
    auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      why = "cannot write " + path + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(path.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    why = "cannot write " + path + ": " + std::strerror(errno);
    ::unlink(path.c_str());
    return false;
  }
  return true;
}

size_t open_files_limit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY)
    return 0;
  return static_cast<size_t>(files.rlim_cur);
}

size_t pending_cap(size_t wanted, size_t limit, size_t reserve, size_t percent) {
  constexpr size_t floor = 16;
  if (limit == 0)
    return wanted;
  auto left = limit > reserve ? limit - reserve : 0;
  auto share = left / 100 * percent + left % 100 * percent / 100;
  return std::max(std::min(wanted, share), std::min(wanted, floor));
}

} // namespace tony::base
