#pragma once

// Hadoop's access control lists (AccessControlList), as YARN reads
// yarn.admin.acl and an application's VIEW_APP and MODIFY_APP ACLs:
//
//   "*"                 everyone
//   "alice,bob"         these users
//   "alice,bob ops,ml"  these users, and the members of these groups
//   " ops"              the members of group ops only
//   "" or " "           nobody
//
// Users and groups are comma separated, the two lists split at the first
// space; names are trimmed and empty ones dropped. A part that is "*"
// (trimmed) admits everyone, as in Hadoop.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tony::base {

class access_list {
public:
  /// Parses `text` as above; never fails (see invalid_acl for checking a
  /// user's input).
  explicit access_list(std::string_view text = {});

  /// Whether `user`, a member of `groups`, is on the list.
  bool admits(const std::string& user, const std::vector<std::string>& groups) const;

  bool everyone() const { return everyone_; }
  bool nobody() const { return !everyone_ && users_.empty() && groups_.empty(); }
  const std::vector<std::string>& users() const { return users_; }
  const std::vector<std::string>& groups() const { return groups_; }

  /// The list as Hadoop writes it: "*", "alice,bob ops", " ops", " ".
  std::string to_string() const;

private:
  bool everyone_ = false;
  std::vector<std::string> users_;
  std::vector<std::string> groups_;
};

/// Why `text` is not an ACL a user should write, or nullopt: a name holds
/// a character no user or group name has (only letters, digits, and
/// . _ - @ $ are taken), or "*" is mixed with names.
std::optional<std::string> invalid_acl(std::string_view text);

/// The groups of `user` on this machine (its primary group and those that
/// list it, as getgrouplist answers; Hadoop's default group mapping asks the
/// same). Empty for a user this machine does not know.
std::vector<std::string> local_groups_of(const std::string& user);

} // namespace tony::base
