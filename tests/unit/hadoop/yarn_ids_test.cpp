// YARN id text forms: padding, epochs, and rejection of malformed ids.

#include <gtest/gtest.h>

#include "hadoop/yarn/ids.hpp"

namespace tony::yarn {
namespace {

TEST(yarn_ids, application_id_round_trips_with_four_digit_padding) {
  application_id id{1700000000000, 1};
  EXPECT_EQ(to_string(id), "application_1700000000000_0001");
  auto back = parse_application_id("application_1700000000000_0001");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, id);
  EXPECT_EQ(to_string(application_id{1, 123456}), "application_1_123456");
  EXPECT_EQ(parse_application_id("application_1_123456")->id, 123456);
}

TEST(yarn_ids, attempt_id_pads_the_attempt_to_six_digits) {
  application_attempt_id id{{1700000000000, 42}, 2};
  EXPECT_EQ(to_string(id), "appattempt_1700000000000_0042_000002");
  auto back = parse_application_attempt_id("appattempt_1700000000000_0042_000002");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, id);
}

TEST(yarn_ids, container_id_without_epoch) {
  auto id = parse_container_id("container_1700000000000_0001_01_000002");
  ASSERT_TRUE(id) << id.error().message();
  EXPECT_EQ(id->attempt.app.cluster_timestamp, 1700000000000);
  EXPECT_EQ(id->attempt.app.id, 1);
  EXPECT_EQ(id->attempt.attempt, 1);
  EXPECT_EQ(id->id, 2);
  EXPECT_EQ(id->epoch(), 0);
  EXPECT_EQ(to_string(*id), "container_1700000000000_0001_01_000002");
}

TEST(yarn_ids, container_id_with_epoch_keeps_it_in_the_high_bits) {
  auto id = parse_container_id("container_e17_1700000000000_0001_01_000002");
  ASSERT_TRUE(id) << id.error().message();
  EXPECT_EQ(id->epoch(), 17);
  EXPECT_EQ(id->sequence(), 2);
  EXPECT_EQ(id->id, (int64_t{17} << 40) | 2);
  EXPECT_EQ(to_string(*id), "container_e17_1700000000000_0001_01_000002");
  container_id small;
  small.attempt = {{5, 3}, 1};
  small.id = (int64_t{1} << 40) | 1234567;
  EXPECT_EQ(to_string(small), "container_e01_5_0003_01_1234567");
}

TEST(yarn_ids, malformed_ids_are_rejected_with_an_example) {
  for (auto bad : {"", "container", "container_1_2_3", "container_x_1_01_000001",
                   "container_e_1_0001_01_000001", "container_1_0001_01_00000a",
                   "application_1", "application_1_2_3", "app_1_2", "application_-1_0001",
                   "container_1_0001_01_000001_"}) {
    EXPECT_FALSE(parse_container_id(bad)) << bad;
  }
  auto err = parse_application_id("application_x_1");
  ASSERT_FALSE(err);
  EXPECT_NE(err.error().message().find("application_1700000000000_0001"),
            std::string::npos);
  EXPECT_FALSE(parse_application_id("application_1_99999999999"));
  EXPECT_FALSE(parse_application_attempt_id("appattempt_1_0001"));
}

} // namespace
} // namespace tony::yarn
