#include "base/access_list.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "base/text.hpp"

namespace tony::base {

namespace {

// "a, b,,c" -> {"a", "b", "c"}.
std::vector<std::string> names_of(std::string_view part) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= part.size()) {
    auto comma = part.find(',', at);
    if (comma == std::string_view::npos)
      comma = part.size();
    auto name = trim(part.substr(at, comma - at));
    if (!name.empty())
      out.push_back(name);
    at = comma + 1;
  }
  return out;
}

// The users' part and the groups' part of an ACL's text.
std::pair<std::string_view, std::string_view> parts_of(std::string_view text) {
  auto space = text.find(' ');
  if (space == std::string_view::npos)
    return {text, {}};
  return {text.substr(0, space), text.substr(space + 1)};
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' ||
         c == '-' || c == '@' || c == '$';
}

} // namespace

access_list::access_list(std::string_view text) {
  auto [users, groups] = parts_of(text);
  if (trim(users) == "*" || trim(groups) == "*") {
    everyone_ = true;
    return;
  }
  users_ = names_of(users);
  groups_ = names_of(groups);
}

bool access_list::admits(const std::string& user,
                         const std::vector<std::string>& groups) const {
  if (everyone_)
    return true;
  if (std::find(users_.begin(), users_.end(), user) != users_.end())
    return true;
  return std::any_of(groups.begin(), groups.end(), [this](const std::string& g) {
    return std::find(groups_.begin(), groups_.end(), g) != groups_.end();
  });
}

std::string access_list::to_string() const {
  if (everyone_)
    return "*";
  auto out = join(users_, ",");
  if (!groups_.empty())
    out += " " + join(groups_, ",");
  return out.empty() ? " " : out;
}

std::optional<std::string> invalid_acl(std::string_view text) {
  auto [users, groups] = parts_of(text);
  auto u = trim(users);
  auto g = trim(groups);
  if (u == "*" || g == "*") {
    if ((u == "*" && !g.empty()) || (g == "*" && !u.empty()))
      return "'*' stands alone (it admits everyone), got '" + std::string{text} + "'";
    return std::nullopt;
  }
  if (g.find(' ') != std::string::npos)
    return "users and groups are two comma-separated lists split by one space, as in "
           "'alice,bob ops,ml'; got '" +
           std::string{text} + "'";
  for (auto part : {users, groups})
    for (auto& name : names_of(part)) {
      if (name == "*")
        return "'*' stands alone (it admits everyone), got '" + std::string{text} + "'";
      if (std::find_if_not(name.begin(), name.end(), name_char) != name.end())
        return "'" + name +
               "' is not a user or group name (letters, digits and . _ - @ $ only)";
    }
  return std::nullopt;
}

std::vector<std::string> local_groups_of(const std::string& user) {
  std::vector<std::string> out;
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 ||
      found == nullptr)
    return out;
  int count = 64;
  std::vector<gid_t> gids(static_cast<size_t>(count));
  while (getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &count) < 0) {
    if (count <= static_cast<int>(gids.size()) || count > 65536)
      return out;
    gids.resize(static_cast<size_t>(count));
  }
  gids.resize(static_cast<size_t>(count));
  long gsize = sysconf(_SC_GETGR_R_SIZE_MAX);
  std::vector<char> gbuf(gsize > 0 ? static_cast<size_t>(gsize) : 16384);
  for (auto gid : gids) {
    group gr{};
    group* g = nullptr;
    while (getgrgid_r(gid, &gr, gbuf.data(), gbuf.size(), &g) == ERANGE &&
           gbuf.size() < (1u << 22))
      gbuf.resize(gbuf.size() * 2);
    if (g != nullptr)
      out.emplace_back(g->gr_name);
  }
  return out;
}

} // namespace tony::base
