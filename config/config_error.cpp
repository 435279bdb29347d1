#include "config/config_error.hpp"

#include "messages/error.hpp"

namespace tony {

std::string config_error::to_string() const {
  std::string out;
  if (!file.empty()) {
    out = file;
    if (line > 0) {
      out += ':';
      out += std::to_string(line);
      if (col > 0) {
        out += ':';
        out += std::to_string(col);
      }
    }
    out += ": ";
  }
  out += message;
  return out;
}

std::string to_string(const std::vector<config_error>& errors) {
  std::string out;
  for (auto& e : errors) {
    out += e.to_string();
    out += '\n';
  }
  return out;
}

error to_error(const std::vector<config_error>& errors) {
  auto text = to_string(errors);
  if (!text.empty() && text.back() == '\n')
    text.pop_back();
  return make_error(errc::invalid_config, std::move(text));
}

} // namespace tony
