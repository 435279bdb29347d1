// base/access_list: Hadoop's ACL text as YARN reads an application's
// VIEW_APP and MODIFY_APP ACLs and yarn.admin.acl.

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "base/access_list.hpp"

namespace tony::base {
namespace {

TEST(access_list, users_then_groups_split_at_the_first_space) {
  access_list acl{"alice,bob ops,ml"};
  EXPECT_EQ(acl.users(), (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(acl.groups(), (std::vector<std::string>{"ops", "ml"}));
  EXPECT_TRUE(acl.admits("alice", {}));
  EXPECT_TRUE(acl.admits("carol", {"staff", "ml"}));
  EXPECT_FALSE(acl.admits("carol", {"staff"}));
  EXPECT_FALSE(acl.admits("ops", {}));
  EXPECT_EQ(acl.to_string(), "alice,bob ops,ml");
}

TEST(access_list, a_leading_space_names_groups_only) {
  access_list acl{" ops"};
  EXPECT_TRUE(acl.users().empty());
  EXPECT_TRUE(acl.admits("x", {"ops"}));
  EXPECT_FALSE(acl.admits("ops", {}));
  EXPECT_EQ(acl.to_string(), " ops");
}

TEST(access_list, empty_or_blank_admits_nobody_and_a_star_everyone) {
  for (auto text : {"", " ", " , "}) {
    access_list acl{text};
    EXPECT_TRUE(acl.nobody()) << text;
    EXPECT_FALSE(acl.admits("alice", {"ops"})) << text;
    EXPECT_EQ(acl.to_string(), " ");
  }
  for (auto text : {"*", " *", "* ", " * "}) {
    access_list acl{text};
    EXPECT_TRUE(acl.everyone()) << text;
    EXPECT_TRUE(acl.admits("anyone", {})) << text;
    EXPECT_EQ(acl.to_string(), "*");
  }
}

TEST(access_list, invalid_acl_takes_what_a_user_writes) {
  for (auto ok : {"", " ", "*", "alice", "alice,bob", "alice ops", " ops,ml",
                  "svc-etl_1.x@corp ops"})
    EXPECT_EQ(invalid_acl(ok), std::nullopt) << ok;
}

TEST(access_list, invalid_acl_names_what_is_wrong) {
  EXPECT_NE(invalid_acl("alice;rm -rf")->find("'alice;rm' is not a user or group name"),
            std::string::npos);
  EXPECT_NE(invalid_acl("alice,* ops")->find("'*' stands alone"), std::string::npos);
  EXPECT_NE(invalid_acl("* ops")->find("'*' stands alone"), std::string::npos);
  EXPECT_NE(invalid_acl("alice ops ml")->find("split by one space"), std::string::npos);
  // As in Hadoop, the first space ends the users: "bob ops" would be a group.
  EXPECT_NE(invalid_acl("alice, bob ops")->find("split by one space"), std::string::npos);
}

TEST(access_list, local_groups_of_a_known_user_include_its_primary_group) {
  auto groups = local_groups_of("root");
  ASSERT_FALSE(groups.empty());
  EXPECT_EQ(groups.front(), "root");
  EXPECT_TRUE(local_groups_of("tony-no-such-user-x").empty());
}

} // namespace
} // namespace tony::base
