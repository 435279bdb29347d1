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
  st.state = tony::job_state::running;
  tony::task_status t;
  t.task = {"worker", 1};
  t.host = "127.0.0.1";
  t.port = 4242;
  t.state = tony::task_state::lost;
  st.tasks.push_back(t);
  auto back = roundtrip(sys, st);
  EXPECT_EQ(back.app_id, st.app_id);
  EXPECT_EQ(back.state, tony::job_state::running);
  ASSERT_EQ(back.tasks.size(), 1u);
  EXPECT_EQ(back.tasks[0].task, (tony::task_id{"worker", 1}));
  EXPECT_EQ(back.tasks[0].port, 4242);
  EXPECT_EQ(back.tasks[0].state, tony::task_state::lost);
}

TEST(messages, every_state_reads_back_from_its_name) {
  using tony::job_state;
  using tony::task_state;
  for (auto x : {job_state::fresh, job_state::allocating, job_state::registering,
                 job_state::running, job_state::succeeded, job_state::failed,
                 job_state::killed, job_state::lost})
    EXPECT_EQ(tony::job_state_named(to_string(x)), x) << to_string(x);
  for (auto x :
       {task_state::requested, task_state::allocated, task_state::launched,
        task_state::registered, task_state::running, task_state::restarting,
        task_state::succeeded, task_state::failed, task_state::killed, task_state::lost})
    EXPECT_EQ(tony::task_state_named(to_string(x)), x) << to_string(x);
  EXPECT_STREQ(to_string(job_state::fresh), "NEW");
  // YARN's names and other spellings are not tony's states.
  EXPECT_EQ(tony::job_state_named("ACCEPTED"), std::nullopt);
  EXPECT_EQ(tony::task_state_named("running"), std::nullopt);
  EXPECT_EQ(tony::task_state_named(""), std::nullopt);
  EXPECT_TRUE(is_final(job_state::killed));
  EXPECT_FALSE(is_final(job_state::lost)); // a client's view, not the AM's word
  EXPECT_TRUE(is_final(task_state::lost));
  EXPECT_TRUE(is_failure(task_state::lost));
  EXPECT_FALSE(is_failure(task_state::killed));
}

TEST(messages, cluster_spec_keeps_order_per_type) {
  config cfg;
  caf::actor_system sys{cfg};
  tony::cluster_map cluster;
  cluster["worker"] = {"h1:1", "h2:2", "h1:3"};
  cluster["ps"] = {"h3:3"};
  tony::cluster_spec spec{2, tony::encode_cluster(cluster)};
  auto back = roundtrip(sys, spec);
  EXPECT_EQ(back.attempt, 2);
  auto decoded = tony::decode_cluster(back.encoded);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, cluster);
}

TEST(messages, the_encoded_cluster_names_each_host_once) {
  tony::cluster_map cluster;
  for (int i = 0; i < 100; ++i)
    cluster["worker"].push_back("node-with-a-long-name.example.com:" +
                                std::to_string(4000 + i));
  auto text = tony::encode_cluster(cluster);
  EXPECT_EQ(text.find("node-with-a-long-name"), text.rfind("node-with-a-long-name"));
  EXPECT_LT(text.size(), 1000u);
  EXPECT_EQ(*tony::decode_cluster(text), cluster);
}

TEST(messages, ipv6_hosts_and_empty_slots_survive_encoding) {
  tony::cluster_map cluster;
  cluster["chief"] = {"[::1]:2222"};
  cluster["worker"] = {"", "10.0.0.2:80"};
  EXPECT_EQ(*tony::decode_cluster(tony::encode_cluster(cluster)), cluster);
  EXPECT_EQ(*tony::decode_cluster(tony::encode_cluster({})), tony::cluster_map{});
}

TEST(messages, garbage_is_no_cluster) {
  for (std::string bad : {"", "h0", "h0\nworker 1:80\n", "h0\nworker 0:\n",
                          "h0\nworker x:80\n", "h0\nworker 0:8a\n", "h0\n 0:80\n",
                          "h0\nworker 0:80\nworker 0:81\n", "\nworker :80\n"})
    EXPECT_FALSE(tony::decode_cluster(bad)) << bad;
}

TEST(messages, a_spec_channel_frame_is_the_attempt_and_the_encoded_map) {
  tony::cluster_map cluster;
  cluster["worker"] = {"h1:1", "h2:2"};
  tony::cluster_spec spec{7, tony::encode_cluster(cluster)};
  auto frame = tony::to_channel_frame(spec);
  EXPECT_EQ(frame, "7\nh1 h2\nworker 0:1 1:2\n");
  auto back = tony::from_channel_frame(frame);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->attempt, 7);
  EXPECT_EQ(*tony::decode_cluster(back->encoded), cluster);
  for (std::string bad : {"", "7", "\nh1\n", "x\nh1\n", "-1\nh1\n", "99999999999\nh\n"})
    EXPECT_FALSE(tony::from_channel_frame(bad)) << bad;
}

TEST(messages, errors_carry_their_context_text) {
  auto err = tony::make_error(tony::errc::bad_secret, "wrong job secret from worker:0");
  EXPECT_EQ(tony::describe(err), "wrong job secret from worker:0");
  EXPECT_EQ(err.code(), tony::errc::bad_secret);
  auto caf_err = tony::to_caf(err);
  EXPECT_EQ(caf_err.category(), tony::errc_category);
  EXPECT_EQ(tony::describe(caf_err), "wrong job secret from worker:0");
  EXPECT_EQ(tony::from_caf(caf_err), err);
}

TEST(messages, an_error_is_a_code_and_a_text) {
  tony::error none;
  EXPECT_FALSE(none);
  EXPECT_EQ(none.code(), tony::errc::none);
  EXPECT_EQ(tony::describe(none), "no error");
  auto bare = tony::make_error(tony::errc::timeout);
  EXPECT_TRUE(bare);
  EXPECT_EQ(tony::describe(bare), "timeout");
  EXPECT_EQ(tony::describe(tony::to_caf(bare)), "timeout");
  EXPECT_EQ(tony::from_caf(tony::to_caf(bare)), bare);
  EXPECT_FALSE(tony::to_caf(none));
  EXPECT_EQ(tony::to_string(tony::make_error(tony::errc::protocol, "garbage")),
            "protocol (garbage)");
  EXPECT_NE(bare, tony::make_error(tony::errc::timeout, "late"));
  EXPECT_EQ(tony::describe(tony::make_error(tony::errc::timeout, "")), "");
  EXPECT_EQ(tony::from_caf(tony::caf_error(tony::errc::timeout)), bare);
}

TEST(messages, a_caf_error_of_another_category_keeps_its_words) {
  caf::error err = caf::sec::request_timeout;
  auto back = tony::from_caf(err);
  EXPECT_EQ(back.code(), tony::errc::infrastructure);
  EXPECT_EQ(tony::describe(back), tony::describe(err));
}

TEST(messages, expected_holds_a_value_or_an_error) {
  tony::expected<std::string> value = std::string{"x"};
  ASSERT_TRUE(value);
  EXPECT_EQ(*value, "x");
  tony::expected<std::string> failed = tony::make_error(tony::errc::stopped, "stop");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().text(), "stop");
  tony::expected<void> done = tony::ok;
  EXPECT_TRUE(done);
  tony::expected<void> refused = tony::make_error(tony::errc::bad_secret, "no");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), tony::errc::bad_secret);
}

TEST(messages, task_ids_print_as_type_colon_index) {
  EXPECT_EQ(tony::to_string(tony::task_id{"ps", 0}), "ps:0");
  EXPECT_TRUE(tony::fits({1024, 1, 0}, {2048, 2, 0}));
  EXPECT_FALSE(tony::fits({1024, 1, 1}, {2048, 2, 0}));
}

} // namespace
