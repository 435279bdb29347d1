#include <gtest/gtest.h>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "messages/error.hpp"
#include "messages/registration.hpp"
#include "messages/type_ids.hpp"

namespace {

struct config : caf::actor_system_config {
  config() { tony::add_message_types(*this); }
};

template <class T>
T roundtrip(caf::actor_system& sys, T x) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  EXPECT_FALSE(sink(x));
  T y;
  caf::binary_deserializer source{sys, buf};
  EXPECT_FALSE(source(y));
  return y;
}

TEST(messages, job_status_survives_serialization) {
  config cfg;
  caf::actor_system sys{cfg};
  tony::job_status st;
  st.app_id = "application_1_0001";
  st.state = "RUNNING";
  tony::task_status t;
  t.task = {"worker", 1};
  t.host = "127.0.0.1";
  t.port = 4242;
  st.tasks.push_back(t);
  auto back = roundtrip(sys, st);
  EXPECT_EQ(back.app_id, st.app_id);
  ASSERT_EQ(back.tasks.size(), 1u);
  EXPECT_EQ(back.tasks[0].task, (tony::task_id{"worker", 1}));
  EXPECT_EQ(back.tasks[0].port, 4242);
}

TEST(messages, cluster_spec_keeps_order_per_type) {
  config cfg;
  caf::actor_system sys{cfg};
  tony::cluster_spec spec;
  spec.attempt = 2;
  spec.cluster["worker"] = {"h1:1", "h2:2"};
  spec.cluster["ps"] = {"h3:3"};
  auto back = roundtrip(sys, spec);
  EXPECT_EQ(back.attempt, 2);
  EXPECT_EQ(back.cluster, spec.cluster);
}

TEST(messages, errors_carry_their_context_text) {
  auto err = tony::make_error(tony::errc::bad_secret, "wrong job secret from worker:0");
  EXPECT_EQ(tony::describe(err), "wrong job secret from worker:0");
  EXPECT_EQ(err.category(), tony::errc_category);
}

TEST(messages, task_ids_print_as_type_colon_index) {
  EXPECT_EQ(tony::to_string(tony::task_id{"ps", 0}), "ps:0");
  EXPECT_TRUE(tony::fits({1024, 1, 0}, {2048, 2, 0}));
  EXPECT_FALSE(tony::fits({1024, 1, 1}, {2048, 2, 0}));
}

} // namespace
