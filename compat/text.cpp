#include "compat/text.hpp"

namespace tony::compat {

std::string trim(const std::string& s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::vector<std::string> split_commas(const std::string& value, bool keep_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    auto end = value.find(',', start);
    if (end == std::string::npos)
      end = value.size();
    auto item = trim(value.substr(start, end - start));
    if (keep_empty || !item.empty())
      out.push_back(std::move(item));
    start = end + 1;
  }
  return out;
}

} // namespace tony::compat
