// RM delegation tokens as a workflow scheduler forwards them: the
// identifier Hadoop's YARNDelegationTokenIdentifier writes (protobuf), and
// the owner's short name.

#include <gtest/gtest.h>

#include "hadoop/yarn/proto/yarn.pb.h"
#include "hadoop/yarn/rm_token.hpp"

namespace tony::yarn {
namespace {

TEST(rm_token, the_identifier_says_owner_renewer_and_dates) {
  proto::YARNDelegationTokenIdentifierProto p;
  p.set_owner("alice@EXAMPLE.COM");
  p.set_renewer("yarn");
  p.set_realuser("");
  p.set_issuedate(1000);
  p.set_maxdate(605001000);
  p.set_sequencenumber(7);
  p.set_masterkeyid(2);
  auto id = parse_rm_token_identifier(p.SerializeAsString());
  ASSERT_TRUE(id) << id.error().message();
  EXPECT_EQ(id->owner, "alice@EXAMPLE.COM");
  EXPECT_EQ(id->renewer, "yarn");
  EXPECT_EQ(id->issue_date_ms, 1000);
  EXPECT_EQ(id->max_date_ms, 605001000);
}

TEST(rm_token, anything_else_is_no_identifier) {
  EXPECT_FALSE(parse_rm_token_identifier(""));
  EXPECT_FALSE(parse_rm_token_identifier(std::string("\x00\x05" "alice", 7)));
  auto bad = parse_rm_token_identifier("\xff\xff\xff");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("not an RM delegation token identifier"),
            std::string::npos);
}

TEST(rm_token, a_principals_short_name_is_its_first_component) {
  EXPECT_EQ(principal_short_name("alice@EXAMPLE.COM"), "alice");
  EXPECT_EQ(principal_short_name("oozie/gw1.example.com@EXAMPLE.COM"), "oozie");
  EXPECT_EQ(principal_short_name("bob"), "bob");
}

} // namespace
} // namespace tony::yarn
