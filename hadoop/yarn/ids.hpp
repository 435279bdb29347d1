#pragma once

// YARN's identifiers and their text forms, as YARN prints them:
//
//   application_<clusterTs>_<app:4+ digits>
//   appattempt_<clusterTs>_<app:4+>_<attempt:6+>
//   container_[e<epoch:2+>_]<clusterTs>_<app:4+>_<attempt:2+>_<seq:6+>
//
// A container id's 64-bit number holds the RM epoch in bits 40..63 and the
// sequence number in bits 0..39.

#include <cstdint>
#include <string>
#include <string_view>

#include "hadoop/expected.hpp"

namespace tony::yarn {

using hadoop::expected;

struct application_id {
  int64_t cluster_timestamp = 0;
  int32_t id = 0;
};

struct application_attempt_id {
  application_id app;
  int32_t attempt = 0;
};

struct container_id {
  application_attempt_id attempt;
  int64_t id = 0;

  int64_t epoch() const noexcept { return id >> 40; }
  int64_t sequence() const noexcept { return id & ((int64_t{1} << 40) - 1); }
};

bool operator==(const application_id& x, const application_id& y);
bool operator==(const application_attempt_id& x, const application_attempt_id& y);
bool operator==(const container_id& x, const container_id& y);
inline bool operator!=(const application_id& x, const application_id& y) {
  return !(x == y);
}
inline bool operator!=(const container_id& x, const container_id& y) {
  return !(x == y);
}

std::string to_string(const application_id& x);
std::string to_string(const application_attempt_id& x);
std::string to_string(const container_id& x);

expected<application_id> parse_application_id(std::string_view text);
expected<application_attempt_id> parse_application_attempt_id(std::string_view text);
expected<container_id> parse_container_id(std::string_view text);

} // namespace tony::yarn
