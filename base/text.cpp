#include "base/text.hpp"

namespace tony::base {

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string trim(std::string_view s) {
  constexpr std::string_view space = " \t\r\n";
  auto first = s.find_first_not_of(space);
  if (first == std::string_view::npos)
    return {};
  return std::string{s.substr(first, s.find_last_not_of(space) - first + 1)};
}

std::string join(const std::vector<std::string>& xs, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0)
      out += sep;
    out += xs[i];
  }
  return out;
}

std::string plural(int64_t n, std::string_view word) {
  auto out = std::to_string(n);
  out += ' ';
  out += word;
  if (n != 1)
    out += 's';
  return out;
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

} // namespace tony::base
