#include "compat/text.hpp"

#include <algorithm>
#include <cstdlib>

#include "base/text.hpp"
#include "config/job_toml.hpp"

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

bool is_integer(const std::string& s) {
  auto t = base::trim(s);
  size_t i = !t.empty() && (t[0] == '-' || t[0] == '+') ? 1 : 0;
  return i < t.size() && std::all_of(t.begin() + static_cast<std::ptrdiff_t>(i), t.end(),
                                     [](char c) { return c >= '0' && c <= '9'; });
}

std::string int_or_string(const std::string& s) {
  return is_integer(s) ? std::to_string(std::atoll(base::trim(s).c_str()))
                       : toml_quote(s);
}

std::string string_array(const std::vector<std::string>& xs) {
  std::string out = "[";
  for (auto& x : xs)
    out += (out.size() > 1 ? ", " : "") + toml_quote(x);
  return out + "]";
}

} // namespace tony::compat
