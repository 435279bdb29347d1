#include "base/files.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <pwd.h>
#include <unistd.h>

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

} // namespace tony::base
