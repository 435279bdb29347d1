#include "hadoop/yarn/records.hpp"

#include <algorithm>
#include <cctype>

namespace tony::yarn {

const char* to_string(application_state x) {
  switch (x) {
  case application_state::new_app:
    return "NEW";
  case application_state::new_saving:
    return "NEW_SAVING";
  case application_state::submitted:
    return "SUBMITTED";
  case application_state::accepted:
    return "ACCEPTED";
  case application_state::running:
    return "RUNNING";
  case application_state::finished:
    return "FINISHED";
  case application_state::failed:
    return "FAILED";
  case application_state::killed:
    return "KILLED";
  default:
    return "UNKNOWN";
  }
}

bool is_terminal(application_state x) {
  return x == application_state::finished || x == application_state::failed ||
         x == application_state::killed;
}

bool is_final(log_aggregation_state x) {
  return x == log_aggregation_state::disabled || x == log_aggregation_state::succeeded ||
         x == log_aggregation_state::failed || x == log_aggregation_state::timed_out;
}

const char* to_string(final_status x) {
  switch (x) {
  case final_status::undefined:
    return "UNDEFINED";
  case final_status::succeeded:
    return "SUCCEEDED";
  case final_status::failed:
    return "FAILED";
  case final_status::killed:
    return "KILLED";
  case final_status::ended:
    return "ENDED";
  }
  return "UNDEFINED";
}

hadoop::expected<final_status> parse_final_status(std::string_view text) {
  std::string upper{text};
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (auto x : {final_status::undefined, final_status::succeeded, final_status::failed,
                 final_status::killed, final_status::ended})
    if (upper == to_string(x))
      return x;
  return hadoop::error{hadoop::error_code::invalid_input,
                       "unknown final status '" + std::string{text} +
                           "' (expected SUCCEEDED, FAILED or KILLED)"};
}

} // namespace tony::yarn
