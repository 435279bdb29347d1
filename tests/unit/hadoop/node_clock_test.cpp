// A NodeManager whose clock is ahead refuses container tokens as expired:
// what tony reads of its message and of the token, and the diagnostic.

#include <gtest/gtest.h>

#include "hadoop/token.hpp"
#include "hadoop/yarn/node_clock.hpp"
#include "hadoop/yarn/proto/yarn.pb.h"

namespace tony::yarn {
namespace {

// As Hadoop 3.4's ContainerManagerImpl words it.
constexpr const char* refusal =
    "Unauthorized request to start container.\n"
    "This token is expired. current time is 1700003600123 found 1700000600456\n"
    "Note: System times on machines may be out of sync. Check system time and time "
    "zones.";

// A container token as the ResourceManager writes it: Hadoop's identifier
// has more fields than tony reads (container id, node address, ...).
std::string container_token(int64_t created, int64_t expiry) {
  proto::ContainerTokenIdentifierProto times;
  times.set_expirytimestamp(expiry);
  if (created > 0)
    times.set_creationtime(created);
  // Field 2 (nmHostAddr, a string) first, as Hadoop's own bytes have it.
  std::string id =
      std::string{"\x12\x0f"} + "127.0.0.3:45454" + times.SerializeAsString();
  return hadoop::serialize_token_proto({id, "pw", "ContainerToken", "127.0.0.3:45454"});
}

TEST(node_clock, reads_the_node_time_and_the_expiry_of_yarn_refusal) {
  auto x = parse_expired_token(refusal);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->node_now_ms, 1700003600123);
  EXPECT_EQ(x->expiry_ms, 1700000600456);
}

TEST(node_clock, other_refusals_say_nothing_about_the_clock) {
  EXPECT_FALSE(parse_expired_token("Unauthorized request to start container.\n"
                                   " Attempt to relaunch the same container with id x."));
  EXPECT_FALSE(parse_expired_token("This token is expired. current time is  found 1"));
  EXPECT_FALSE(parse_expired_token("This token is expired. current time is 12 found x"));
  EXPECT_FALSE(parse_expired_token(""));
}

TEST(node_clock, reads_the_creation_and_expiry_of_a_container_token) {
  auto t = token_times(container_token(1700000000000, 1700000600000));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->created_ms, 1700000000000);
  EXPECT_EQ(t->expiry_ms, 1700000600000);
  auto old = token_times(container_token(0, 1700000600000));
  ASSERT_TRUE(old);
  EXPECT_EQ(old->created_ms, 0);
  EXPECT_FALSE(token_times(hadoop::serialize_token_proto({"x", "pw", "NMToken", ""})));
  EXPECT_FALSE(token_times("not a token"));
}

TEST(node_clock, names_the_node_and_how_far_ahead_of_the_resource_manager_it_is) {
  auto x = *parse_expired_token(refusal);
  // Created by the RM's clock one hour and 0.1 s before the node's "now".
  auto text = describe_clock_ahead(
      "127.0.0.3", x, token_times(container_token(1700000000000, 1700000600456)));
  EXPECT_NE(text.find("node 127.0.0.3's clock is about 1 h 0 min (3600 s) ahead of the "
                      "ResourceManager's"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("This token is expired. current time is 1700003600123 found "
                      "1700000600456"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("NTP"), std::string::npos) << text;
}

TEST(node_clock, without_the_creation_time_says_how_long_the_token_had_expired) {
  auto x = *parse_expired_token(refusal);
  auto text = describe_clock_ahead("h", x, std::nullopt);
  EXPECT_NE(text.find("node h's clock is ahead of the ResourceManager's by more than the "
                      "container token lifetime"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("and 50 min 0 s (3000 s)"), std::string::npos) << text;
}

TEST(node_clock, an_am_the_resource_manager_could_not_start_is_said_in_plain_words) {
  // What the RM's application report says when its AMLauncher was refused.
  auto diag =
      std::string{"Application application_1_0001 failed 1 times (global limit =2; "
                  "local limit is =1) due to Error launching "
                  "appattempt_1_0001_000001. Got exception: "
                  "org.apache.hadoop.yarn.exceptions.YarnException: "} +
      refusal +
      "\n\tat java.base/Thread.run(Thread.java:840)\n. Failing the "
      "application.";
  // The application failed 660 s before the node's "now".
  auto text = describe_am_clock_ahead(diag, 1700003600123 - 660'000);
  ASSERT_TRUE(text);
  EXPECT_NE(
      text->find("the ResourceManager could not start the AM: the clock of the node it "
                 "chose is about 11 min 0 s (660 s) ahead of the ResourceManager's"),
      std::string::npos)
      << *text;
  EXPECT_NE(text->find("NTP"), std::string::npos);
  EXPECT_TRUE(describe_am_clock_ahead(diag, 0));
  // A task's launch (the AM's own words) or another AM failure: nothing.
  EXPECT_FALSE(describe_am_clock_ahead(refusal, 1700000000000));
  EXPECT_FALSE(describe_am_clock_ahead("Error launching appattempt_1_0001_000001. Got "
                                       "exception: java.net.ConnectException",
                                       1700000000000));
}

TEST(node_clock, durations_read_in_hours_minutes_and_seconds) {
  EXPECT_EQ(describe_duration(45'000), "45 s");
  EXPECT_EQ(describe_duration(725'000), "12 min 5 s (725 s)");
  EXPECT_EQ(describe_duration(2 * 86'400'000 + 60'000), "48 h 1 min (172860 s)");
}

} // namespace
} // namespace tony::yarn
