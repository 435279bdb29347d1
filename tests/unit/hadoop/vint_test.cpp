// Hadoop vints (WritableUtils.writeVLong / readVLong): one-byte range,
// marker bytes, negative values as one's complement, round trips.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "hadoop/byte_reader.hpp"
#include "hadoop/vint.hpp"

namespace tony::hadoop {
namespace {

std::string bytes(std::initializer_list<int> xs) {
  std::string out;
  for (auto x : xs)
    out.push_back(static_cast<char>(x));
  return out;
}

std::string encode(int64_t x) {
  std::string out;
  append_vlong(out, x);
  return out;
}

TEST(hadoop_vint, values_from_minus_112_to_127_take_one_byte) {
  EXPECT_EQ(encode(0), bytes({0x00}));
  EXPECT_EQ(encode(1), bytes({0x01}));
  EXPECT_EQ(encode(127), bytes({0x7F}));
  EXPECT_EQ(encode(-1), bytes({0xFF}));
  EXPECT_EQ(encode(-112), bytes({0x90}));
}

TEST(hadoop_vint, larger_positive_values_get_a_marker_and_big_endian_bytes) {
  // Marker -113 (0x8F) announces one byte, -114 two, ..., -120 eight.
  EXPECT_EQ(encode(128), bytes({0x8F, 0x80}));
  EXPECT_EQ(encode(255), bytes({0x8F, 0xFF}));
  EXPECT_EQ(encode(256), bytes({0x8E, 0x01, 0x00}));
  EXPECT_EQ(encode(1000), bytes({0x8E, 0x03, 0xE8}));
  EXPECT_EQ(encode(std::numeric_limits<int64_t>::max()),
            bytes({0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}));
}

TEST(hadoop_vint, negative_values_store_their_ones_complement) {
  // Marker -121 (0x87) announces one byte of ~x, ..., -128 eight.
  EXPECT_EQ(encode(-113), bytes({0x87, 0x70}));
  EXPECT_EQ(encode(-129), bytes({0x87, 0x80}));
  EXPECT_EQ(encode(-256), bytes({0x87, 0xFF}));
  EXPECT_EQ(encode(-257), bytes({0x86, 0x01, 0x00}));
  EXPECT_EQ(encode(std::numeric_limits<int64_t>::min()),
            bytes({0x80, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}));
}

TEST(hadoop_vint, size_and_sign_follow_from_the_first_byte) {
  EXPECT_EQ(vlong_size(0x7F), 1u);
  EXPECT_EQ(vlong_size(-112), 1u);
  EXPECT_EQ(vlong_size(-113), 2u);
  EXPECT_EQ(vlong_size(-120), 9u);
  EXPECT_EQ(vlong_size(-121), 2u);
  EXPECT_EQ(vlong_size(-128), 9u);
  EXPECT_TRUE(vlong_is_negative(-1));
  EXPECT_FALSE(vlong_is_negative(-113));
  EXPECT_TRUE(vlong_is_negative(-121));
}

TEST(hadoop_vint, every_encoding_reads_back) {
  const int64_t samples[] = {0,
                             1,
                             -1,
                             127,
                             128,
                             -112,
                             -113,
                             255,
                             256,
                             -256,
                             -257,
                             65535,
                             65536,
                             1 << 20,
                             -(1 << 20),
                             1LL << 40,
                             -(1LL << 40),
                             std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int32_t>::min(),
                             std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min()};
  for (auto x : samples) {
    auto enc = encode(x);
    byte_reader in{enc};
    auto back = in.read_vlong("sample");
    ASSERT_TRUE(back) << x;
    EXPECT_EQ(*back, x);
    EXPECT_TRUE(in.at_end()) << x;
  }
}

TEST(hadoop_vint, truncated_input_is_an_error_that_names_the_field) {
  auto enc = bytes({0x8E, 0x03});
  byte_reader in{enc};
  auto x = in.read_vlong("token count");
  ASSERT_FALSE(x);
  EXPECT_NE(x.error().message().find("token count"), std::string::npos);
  EXPECT_EQ(in.position(), 0u);
}

TEST(hadoop_vint, read_vint_rejects_values_beyond_32_bits) {
  auto enc = encode(1LL << 40);
  byte_reader in{enc};
  auto x = in.read_vint("length");
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error().code(), error_code::invalid_input);
}

} // namespace
} // namespace tony::hadoop
