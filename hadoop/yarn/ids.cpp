#include "hadoop/yarn/ids.hpp"

#include <limits>
#include <vector>

namespace tony::yarn {

namespace {

using hadoop::error;
using hadoop::error_code;

std::string padded(int64_t x, size_t digits) {
  auto text = std::to_string(x < 0 ? -x : x);
  if (text.size() < digits)
    text.insert(0, digits - text.size(), '0');
  return x < 0 ? "-" + text : text;
}

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    auto end = text.find('_', start);
    parts.push_back(
        text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos)
      return parts;
    start = end + 1;
  }
}

bool parse_number(std::string_view text, int64_t max, int64_t& out) {
  if (text.empty() || text.size() > 19)
    return false;
  int64_t value = 0;
  for (auto c : text) {
    if (c < '0' || c > '9')
      return false;
    auto digit = c - '0';
    if (value > (max - digit) / 10)
      return false;
    value = value * 10 + digit;
  }
  out = value;
  return true;
}

error invalid(const char* kind, std::string_view text, const char* example) {
  return error{error_code::invalid_input, "invalid " + std::string{kind} + " '" +
                                              std::string{text} + "' (expected e.g. " +
                                              example + ")"};
}

constexpr int64_t int32_max = std::numeric_limits<int32_t>::max();
constexpr int64_t int64_max = std::numeric_limits<int64_t>::max();

} // namespace

bool operator==(const application_id& x, const application_id& y) {
  return x.cluster_timestamp == y.cluster_timestamp && x.id == y.id;
}

bool operator==(const application_attempt_id& x, const application_attempt_id& y) {
  return x.app == y.app && x.attempt == y.attempt;
}

bool operator==(const container_id& x, const container_id& y) {
  return x.attempt == y.attempt && x.id == y.id;
}

std::string to_string(const application_id& x) {
  return "application_" + std::to_string(x.cluster_timestamp) + "_" + padded(x.id, 4);
}

std::string to_string(const application_attempt_id& x) {
  return "appattempt_" + std::to_string(x.app.cluster_timestamp) + "_" +
         padded(x.app.id, 4) + "_" + padded(x.attempt, 6);
}

std::string to_string(const container_id& x) {
  std::string result = "container_";
  if (x.epoch() > 0)
    result += "e" + padded(x.epoch(), 2) + "_";
  result += std::to_string(x.attempt.app.cluster_timestamp) + "_" +
            padded(x.attempt.app.id, 4) + "_" + padded(x.attempt.attempt, 2) + "_" +
            padded(x.sequence(), 6);
  return result;
}

expected<application_id> parse_application_id(std::string_view text) {
  constexpr auto example = "application_1700000000000_0001";
  auto parts = split(text);
  int64_t ts = 0;
  int64_t id = 0;
  if (parts.size() != 3 || parts[0] != "application" ||
      !parse_number(parts[1], int64_max, ts) || !parse_number(parts[2], int32_max, id))
    return invalid("application id", text, example);
  return application_id{ts, static_cast<int32_t>(id)};
}

expected<application_attempt_id> parse_application_attempt_id(std::string_view text) {
  constexpr auto example = "appattempt_1700000000000_0001_000001";
  auto parts = split(text);
  int64_t ts = 0;
  int64_t id = 0;
  int64_t attempt = 0;
  if (parts.size() != 4 || parts[0] != "appattempt" ||
      !parse_number(parts[1], int64_max, ts) || !parse_number(parts[2], int32_max, id) ||
      !parse_number(parts[3], int32_max, attempt))
    return invalid("application attempt id", text, example);
  return application_attempt_id{{ts, static_cast<int32_t>(id)},
                                static_cast<int32_t>(attempt)};
}

expected<container_id> parse_container_id(std::string_view text) {
  constexpr auto example = "container_1700000000000_0001_01_000002";
  auto parts = split(text);
  if (parts.empty() || parts[0] != "container")
    return invalid("container id", text, example);
  int64_t epoch = 0;
  size_t i = 1;
  if (parts.size() == 6) {
    if (parts[1].empty() || parts[1][0] != 'e' ||
        !parse_number(parts[1].substr(1), (int64_t{1} << 23) - 1, epoch))
      return invalid("container id", text, example);
    i = 2;
  } else if (parts.size() != 5) {
    return invalid("container id", text, example);
  }
  int64_t ts = 0;
  int64_t app = 0;
  int64_t attempt = 0;
  int64_t seq = 0;
  if (!parse_number(parts[i], int64_max, ts) ||
      !parse_number(parts[i + 1], int32_max, app) ||
      !parse_number(parts[i + 2], int32_max, attempt) ||
      !parse_number(parts[i + 3], (int64_t{1} << 40) - 1, seq))
    return invalid("container id", text, example);
  container_id result;
  result.attempt = {{ts, static_cast<int32_t>(app)}, static_cast<int32_t>(attempt)};
  result.id = (epoch << 40) | seq;
  return result;
}

} // namespace tony::yarn
