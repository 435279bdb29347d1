#include "hadoop/error.hpp"

namespace tony::hadoop {

const char* to_string(error_code x) {
  switch (x) {
  case error_code::connect_failed:
    return "connect_failed";
  case error_code::timeout:
    return "timeout";
  case error_code::connection_closed:
    return "connection_closed";
  case error_code::protocol:
    return "protocol";
  case error_code::auth:
    return "auth";
  case error_code::remote:
    return "remote";
  case error_code::invalid_input:
    return "invalid_input";
  case error_code::io:
    return "io";
  case error_code::not_found:
    return "not_found";
  case error_code::cancelled:
    return "cancelled";
  }
  return "unknown";
}

bool error::is_remote(const std::string& simple_name) const {
  if (remote_class_.size() < simple_name.size())
    return false;
  auto pos = remote_class_.size() - simple_name.size();
  if (remote_class_.compare(pos, simple_name.size(), simple_name) != 0)
    return false;
  return pos == 0 || remote_class_[pos - 1] == '.' || remote_class_[pos - 1] == '$';
}

error error::with_context(const std::string& context) const {
  error result = *this;
  result.message_ = context + ": " + message_;
  return result;
}

} // namespace tony::hadoop
