#include "hadoop/user.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace tony::hadoop {

std::string current_user() {
  for (auto* var : {"HADOOP_USER_NAME", "USER"}) {
    auto* value = std::getenv(var);
    if (value != nullptr && *value != '\0')
      return value;
  }
  passwd pw;
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found) == 0 &&
      found != nullptr)
    return found->pw_name;
  return std::to_string(::geteuid());
}

} // namespace tony::hadoop
