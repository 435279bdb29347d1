// Text helpers of the job.toml reader: quoting, names, paths, UTF-8.

#include "config/toml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "base/files.hpp"

namespace tony::config_detail {

namespace fs = std::filesystem;

const char* type_name(toml::node_type t) {
  switch (t) {
  case toml::node_type::string:
    return "string";
  case toml::node_type::integer:
    return "integer";
  case toml::node_type::floating_point:
    return "float";
  case toml::node_type::boolean:
    return "boolean";
  case toml::node_type::array:
    return "array";
  case toml::node_type::table:
    return "table";
  case toml::node_type::date:
    return "date";
  case toml::node_type::time:
    return "time";
  case toml::node_type::date_time:
    return "date-time";
  default:
    return "nothing";
  }
}

std::string quote_text(std::string_view s) {
  std::string out = "\"";
  size_t n = 0;
  for (char c : s) {
    if (++n > 60) {
      out += "...";
      break;
    }
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string quote_name(std::string_view s) {
  auto q = quote_text(s);
  q.front() = '\'';
  q.back() = '\'';
  return q;
}

bool has_control_chars(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

bool is_valid_env_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
  });
}

bool is_valid_node_label(std::string_view s) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (s.empty() || s.size() > 255 || !alnum(s[0]))
    return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '_'; });
}

bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  });
}

std::pair<int, int> position_of(std::string_view text, size_t offset) {
  int line = 1;
  int col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > s.size())
      return i;
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80)
        return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid too.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
        (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string absolute_path(const std::string& path, const std::string& base) {
  fs::path p{base::expand_home(path)};
  if (p.is_relative())
    p = fs::path{base} / p;
  auto out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/')
    out.pop_back();
  return out;
}

bool has_uri_scheme(std::string_view s) {
  auto pos = s.find("://");
  if (pos == std::string_view::npos || pos == 0)
    return false;
  return std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(pos), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '+' || c == '-' || c == '.';
  });
}

bool is_kerberos_principal(std::string_view s) {
  if (s.empty() || has_control_chars(s) ||
      std::any_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t'; }))
    return false;
  auto at = s.find('@');
  if (at != std::string_view::npos &&
      (at + 1 == s.size() || s.find('@', at + 1) != std::string_view::npos))
    return false;
  auto name = s.substr(0, at);
  if (name.empty() || name.front() == '/' || name.back() == '/')
    return false;
  return std::count(name.begin(), name.end(), '/') <= 1;
}

std::string file_system_problem(std::string_view uri) {
  if (uri.rfind("hdfs://", 0) != 0)
    return "must be an hdfs://host:port URI of a NameNode";
  auto rest = uri.substr(7);
  if (!rest.empty() && rest.back() == '/')
    rest.remove_suffix(1);
  if (rest.find_first_of("/?#@ ") != std::string_view::npos)
    return "must name a NameNode only (hdfs://host:port, no path, user or query)";
  auto colon = rest.rfind(':');
  auto host = rest.substr(0, colon);
  if (host.empty() || has_control_chars(host))
    return "has no host (hdfs://host:port)";
  if (colon != std::string_view::npos) {
    auto port = rest.substr(colon + 1);
    int value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc{} || end != port.data() + port.size() ||
        value < 1 || value > 65535)
      return "has an invalid port (1 to 65535)";
  }
  return "";
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string archive_kind(std::string_view path) {
  auto name = lower(path);
  if (ends_with(name, ".zip") || ends_with(name, ".jar"))
    return "zip";
  if (ends_with(name, ".tar.gz") || ends_with(name, ".tgz") || ends_with(name, ".tar"))
    return "tar";
  return {};
}

} // namespace tony::config_detail
