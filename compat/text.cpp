#include "compat/text.hpp"

#include "base/text.hpp"

namespace tony::compat {

std::vector<std::string> split_commas(const std::string& value, bool keep_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    auto end = value.find(',', start);
    if (end == std::string::npos)
      end = value.size();
    auto item = base::trim(value.substr(start, end - start));
    if (keep_empty || !item.empty())
      out.push_back(std::move(item));
    start = end + 1;
  }
  return out;
}

} // namespace tony::compat
