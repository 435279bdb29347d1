#include "config/units.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

#include "base/text.hpp"

namespace tony {

namespace {

constexpr int64_t int64_max = std::numeric_limits<int64_t>::max();

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Reads digits at `pos`, saturating at `cap` so absurd inputs cannot wrap.
// Returns false when there is no digit.
bool read_digits(std::string_view s, size_t& pos, int64_t cap, int64_t& out,
                 size_t* count = nullptr) {
  size_t start = pos;
  out = 0;
  while (pos < s.size() && is_digit(s[pos])) {
    if (out <= cap)
      out = out * 10 + (s[pos] - '0');
    ++pos;
  }
  if (count != nullptr)
    *count = pos - start;
  return pos > start;
}

} // namespace

result<int64_t, std::string> parse_memory_mb(std::string_view text) {
  static const std::string not_a_size =
      "is not a size; write MiB as an integer or a number with a k, m, g or t "
      "suffix, e.g. \"2g\"";
  auto s = base::trim(text);
  size_t pos = 0;
  bool negative = false;
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) {
    negative = s[pos] == '-';
    ++pos;
  }
  // Any amount above 2^30 is beyond 1 TiB whatever the unit (the smallest is
  // KiB), so capping there keeps every product below in int64 range.
  constexpr int64_t cap = int64_t{1} << 30;
  int64_t whole = 0;
  if (!read_digits(s, pos, cap, whole))
    return not_a_size;
  int64_t frac = 0;
  size_t frac_digits = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    if (!read_digits(s, pos, int64_max / 100, frac, &frac_digits))
      return not_a_size;
    if (frac_digits > 6)
      return std::string{"has more decimals than any size needs"};
  }
  while (pos < s.size() && s[pos] == ' ')
    ++pos;
  int64_t factor_kib = 1024; // no unit: MiB
  if (pos < s.size()) {
    switch (lower(s[pos])) {
    case 'k':
      factor_kib = 1;
      break;
    case 'm':
      factor_kib = 1024;
      break;
    case 'g':
      factor_kib = int64_t{1024} * 1024;
      break;
    case 't':
      factor_kib = int64_t{1024} * 1024 * 1024;
      break;
    default:
      return not_a_size;
    }
    ++pos;
    auto rest = s.substr(pos);
    std::string suffix;
    for (char c : rest)
      suffix += lower(c);
    if (!suffix.empty() && suffix != "b" && suffix != "ib")
      return not_a_size;
  }
  if (whole > cap)
    return negative ? -int64_max : int64_max;
  int64_t pow10 = 1;
  for (size_t i = 0; i < frac_digits; ++i)
    pow10 *= 10;
  // KiB = whole * factor + frac * factor / 10^digits, which must be exact and
  // a multiple of 1024.
  int64_t frac_kib_num = frac * factor_kib;
  if (frac_kib_num % pow10 != 0)
    return std::string{"is not a whole number of MiB"};
  int64_t kib = whole * factor_kib + frac_kib_num / pow10;
  if (kib % 1024 != 0)
    return std::string{"is not a whole number of MiB"};
  int64_t mb = kib / 1024;
  return negative ? -mb : mb;
}

result<int64_t, std::string> parse_duration_ms(std::string_view text) {
  static const std::string not_a_duration =
      "is not a duration; write e.g. \"90s\", \"30m\", \"2h\", \"1h30m\", "
      "\"500ms\" or an integer of seconds";
  auto s = base::trim(text);
  size_t pos = 0;
  bool negative = false;
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) {
    negative = s[pos] == '-';
    ++pos;
  }
  constexpr int64_t cap = int64_t{1} << 40;
  auto sign = [&](int64_t v) { return negative ? -v : v; };
  // A bare number is seconds, like the integer form.
  {
    size_t p = pos;
    int64_t n = 0;
    if (read_digits(s, p, cap, n) && p == s.size())
      return sign(n > max_duration_ms / 1000 ? int64_max : n * 1000);
  }
  int64_t total = 0;
  bool any = false;
  while (pos < s.size()) {
    int64_t n = 0;
    if (!read_digits(s, pos, cap, n))
      return not_a_duration;
    int64_t unit_ms = 0;
    if (s.substr(pos, 2) == "ms") {
      unit_ms = 1;
      pos += 2;
    } else if (pos < s.size()) {
      switch (s[pos]) {
      case 's':
        unit_ms = 1000;
        break;
      case 'm':
        unit_ms = 60 * 1000;
        break;
      case 'h':
        unit_ms = 3600 * 1000;
        break;
      case 'd':
        unit_ms = 24 * 3600 * 1000;
        break;
      default:
        return not_a_duration;
      }
      ++pos;
    } else {
      return not_a_duration;
    }
    // Saturate: anything past max_duration_ms is out of range anyway.
    if (total == int64_max || n > cap || n * unit_ms > max_duration_ms)
      total = int64_max;
    else if ((total += n * unit_ms) > max_duration_ms)
      total = int64_max;
    any = true;
    while (pos < s.size() && s[pos] == ' ')
      ++pos;
  }
  if (!any)
    return not_a_duration;
  return sign(total);
}

std::string format_memory(int64_t mb) {
  if (mb != 0 && mb % (1024 * 1024) == 0)
    return std::to_string(mb / (1024 * 1024)) + "t";
  if (mb != 0 && mb % 1024 == 0)
    return std::to_string(mb / 1024) + "g";
  return std::to_string(mb) + "m";
}

std::string format_duration(int64_t ms) {
  if (ms == 0)
    return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  struct unit {
    int64_t ms;
    const char* name;
  };
  static constexpr unit units[] = {{24 * 3600 * 1000, "d"},
                                   {3600 * 1000, "h"},
                                   {60 * 1000, "m"},
                                   {1000, "s"},
                                   {1, "ms"}};
  for (auto& u : units) {
    if (ms >= u.ms) {
      out += std::to_string(ms / u.ms);
      out += u.name;
      ms %= u.ms;
    }
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  const size_t m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

} // namespace tony
