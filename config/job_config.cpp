#include "config/job_config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <system_error>

#include <unistd.h>

#include <toml++/toml.h>

#include "config/job_toml.hpp"
#include "config/task_env.hpp"
#include "config/units.hpp"

namespace tony {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view override_prefix = "--set ";

// -- small text helpers -------------------------------------------------------

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

// User text echoed in a message: escaped and cut so one bad value cannot
// flood the terminal or hide in control characters.
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

// Same, inside single quotes, for names (keys, task types).
std::string quote_name(std::string_view s) {
  auto q = quote_text(s);
  q.front() = '\'';
  q.back() = '\'';
  return q;
}

std::string join(const std::vector<std::string>& xs, std::string_view sep) {
  std::string out;
  for (auto& x : xs) {
    if (!out.empty())
      out += sep;
    out += x;
  }
  return out;
}

std::string join(std::initializer_list<std::string_view> xs, std::string_view sep) {
  std::string out;
  for (auto x : xs) {
    if (!out.empty())
      out += sep;
    out += x;
  }
  return out;
}

// The closest candidate within a typo's reach, or empty.
template <class Candidates>
std::string closest(std::string_view word, const Candidates& candidates) {
  std::string best;
  size_t best_d = std::string::npos;
  for (auto& c : candidates) {
    auto d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = std::string{c};
    }
  }
  size_t reach = word.size() >= 5 ? 2 : 1;
  return best_d <= reach ? best : std::string{};
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

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  });
}

// 1-based line and column of byte `offset` in `text`.
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

// Offset of the first byte that breaks UTF-8, or npos.
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

std::string expand_user(const std::string& path) {
  if (path == "~" || path.rfind("~/", 0) == 0) {
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
      return std::string{home} + path.substr(1);
  }
  return path;
}

// `path` made absolute against `base`, with "~/" expanded; no symlinks are
// resolved, so the user recognizes the path in messages.
std::string absolute_path(const std::string& path, const std::string& base) {
  fs::path p{expand_user(path)};
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

// primary[/instance][@REALM]: no blanks or control characters, no empty
// part, one '@' at most.
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

// Why `uri` is not an hdfs://host[:port] namenode URI ("" when it is).
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

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// "zip" or "tar" for the archives YARN unpacks (FSDownload), else empty.
std::string archive_kind(std::string_view path) {
  auto name = lower(path);
  if (ends_with(name, ".zip") || ends_with(name, ".jar"))
    return "zip";
  if (ends_with(name, ".tar.gz") || ends_with(name, ".tgz") || ends_with(name, ".tar"))
    return "tar";
  return {};
}

// -- the reader ---------------------------------------------------------------

// Walks the merged TOML document into a job_spec, collecting errors. Each
// error is placed by the source region of the offending node: the job file
// with line and column, or the `--set` item the node came from.
class job_reader {
public:
  job_reader(std::string file, std::string base_dir)
      : file_(std::move(file))
      , base_dir_(std::move(base_dir)) {
    // Empty source paths would make overrides and file indistinguishable.
    if (file_.empty())
      file_ = "job.toml";
  }

  // -- entry points -----------------------------------------------------------

  load_result load(std::string_view text, const std::vector<job_override>& overrides) {
    if (text.size() > max_job_file_size) {
      file_error("the file is larger than 1 MiB; a job file is a few KiB of TOML "
                 "text. Is this the right file?");
      return finish();
    }
    if (auto nul = text.find('\0'); nul != std::string_view::npos) {
      auto [line, col] = position_of(text, nul);
      errors_.push_back({file_, line, col,
                         "the file contains a NUL byte; is it a binary file? A job "
                         "file is UTF-8 TOML text"});
      return finish();
    }
    if (auto bad = first_invalid_utf8(text); bad != std::string_view::npos) {
      auto [line, col] = position_of(text, bad);
      char buf[64];
      std::snprintf(buf, sizeof(buf), "the file is not valid UTF-8 (byte 0x%02x)",
                    static_cast<unsigned char>(text[bad]));
      errors_.push_back(
          {file_, line, col, std::string{buf} + "; a job file is UTF-8 TOML text"});
      return finish();
    }
    toml::table root;
    try {
      root = toml::parse(text, std::string_view{file_});
    } catch (const toml::parse_error& e) {
      auto& src = e.source();
      errors_.push_back({file_, static_cast<int>(src.begin.line),
                         static_cast<int>(src.begin.column),
                         "TOML syntax error: " + std::string{e.description()}});
      return finish();
    } catch (const std::exception& e) {
      file_error(std::string{"cannot parse the file: "} + e.what());
      return finish();
    }
    if (root.empty() && overrides.empty()) {
      file_error("the file is empty; a job needs at least [code] command and one "
                 "[tasks.<type>] table");
      return finish();
    }
    for (auto& o : overrides)
      apply_override(root, o.item, o.label);
    read_root(root);
    return finish();
  }

private:
  // -- error reporting --------------------------------------------------------

  bool from_override(const toml::source_region& src) const {
    return src.path && *src.path != file_ && is_override_label(*src.path);
  }

  bool is_override_label(const std::string& label) const {
    return std::find(override_labels_.begin(), override_labels_.end(), label) !=
           override_labels_.end();
  }

  // Position of an override's label on the command line, for ordering.
  size_t override_index(const std::string& label) const {
    auto it = std::find(override_labels_.begin(), override_labels_.end(), label);
    return static_cast<size_t>(it - override_labels_.begin());
  }

  void error(const toml::source_region& src, std::string msg) {
    if (from_override(src))
      errors_.push_back({*src.path, 0, 0, std::move(msg)});
    else
      errors_.push_back({file_, static_cast<int>(src.begin.line),
                         static_cast<int>(src.begin.column), std::move(msg)});
  }

  void error(const toml::node& n, std::string msg) { error(n.source(), std::move(msg)); }

  void file_error(std::string msg) { errors_.push_back({file_, 0, 0, std::move(msg)}); }

  load_result finish() {
    if (errors_.empty())
      return std::move(spec_);
    // File errors in reading order, then those without a place, then the
    // overrides in command-line order.
    auto group = [&](const config_error& e) {
      if (e.file != file_ && is_override_label(e.file))
        return 2;
      return e.line > 0 ? 0 : 1;
    };
    std::stable_sort(errors_.begin(), errors_.end(),
                     [&](const config_error& x, const config_error& y) {
                       auto gx = group(x);
                       auto gy = group(y);
                       if (gx != gy)
                         return gx < gy;
                       if (gx == 2)
                         return override_index(x.file) < override_index(y.file);
                       if (gx != 0)
                         return false;
                       return std::pair{x.line, x.col} < std::pair{y.line, y.col};
                     });
    if (errors_.size() > max_reported_errors) {
      auto rest = errors_.size() - max_reported_errors;
      errors_.resize(max_reported_errors);
      errors_.push_back(
          {"", 0, 0,
           "... and " + std::to_string(rest) + " more error" + (rest == 1 ? "" : "s")});
    }
    return std::move(errors_);
  }

  // -- overrides --------------------------------------------------------------

  // Parses "KEY=VALUE" as the TOML line `KEY = VALUE`, or, when VALUE is not
  // a TOML value, as `KEY = "VALUE"`, and merges it into `root`. The parsed
  // nodes keep "--set KEY=VALUE" as their source, so later errors about them
  // name the override.
  void apply_override(toml::table& root, const std::string& item,
                      const std::string& label) {
    override_labels_.push_back(label);
    auto eq = item.find('=');
    if (eq == std::string::npos || trim(std::string_view{item}.substr(0, eq)).empty()) {
      errors_.push_back(
          {label, 0, 0, "expected KEY=VALUE, e.g. --set tasks.worker.instances=4"});
      return;
    }
    std::string key{trim(std::string_view{item}.substr(0, eq))};
    std::string value = item.substr(eq + 1);
    if (key.find('\n') != std::string::npos) {
      errors_.push_back({label, 0, 0, "the key must be on one line"});
      return;
    }
    auto parse_one = [&](const std::string& rhs) -> std::optional<toml::table> {
      try {
        auto doc = toml::parse(key + " = " + rhs, std::string_view{label});
        if (single_chain(doc))
          return doc;
      } catch (const toml::parse_error&) {
        // Not TOML: the caller falls back to a string.
      }
      return std::nullopt;
    };
    auto doc = parse_one(value);
    if (!doc)
      doc = parse_one(toml_quote(value));
    if (!doc) {
      errors_.push_back({label, 0, 0,
                         quote_name(key) + " is not a key path; use dotted names like "
                                           "tasks.worker.instances or env.MY_VAR"});
      return;
    }
    merge(root, std::move(*doc), label, "");
  }

  // True if `t` holds exactly one dotted path to one value, as `a.b.c = v`
  // parses; anything else means VALUE smuggled in more TOML.
  static bool single_chain(const toml::table& t) {
    if (t.size() != 1)
      return false;
    auto& node = t.cbegin()->second;
    if (auto* sub = node.as_table(); sub != nullptr && !sub->is_inline())
      return single_chain(*sub);
    return true;
  }

  void merge(toml::table& into, toml::table&& from, const std::string& label,
             const std::string& path) {
    auto it = from.begin();
    toml::key key{it->first};
    toml::node& node = it->second;
    std::string here =
        path.empty() ? std::string{key.str()} : path + "." + std::string{key.str()};
    auto* existing = into.get(key.str());
    if (auto* sub = node.as_table(); sub != nullptr && !sub->is_inline()) {
      if (existing == nullptr) {
        into.insert_or_assign(std::move(key), std::move(*sub));
      } else if (auto* existing_table = existing->as_table()) {
        merge(*existing_table, std::move(*sub), label, here);
      } else {
        errors_.push_back(
            {label, 0, 0,
             "cannot set a key inside " + quote_name(here) + ": it is " +
                 (existing->is_integer() || existing->is_array() ? "an " : "a ") +
                 type_name(existing->type()) + ", not a table"});
      }
      return;
    }
    into.insert_or_assign(std::move(key), std::move(node));
  }

  // -- typed access -----------------------------------------------------------

  // Reports keys of `t` outside `known`, suggesting the closest one.
  void check_keys(const toml::table& t, const std::string& where,
                  std::initializer_list<std::string_view> known) {
    for (auto&& [k, v] : t) {
      auto name = k.str();
      if (std::find(known.begin(), known.end(), name) != known.end())
        continue;
      std::string msg = "unknown key " + quote_name(name) +
                        (where.empty() ? " at the top level" : " in " + where);
      if (auto hint = closest(name, known); !hint.empty())
        msg += "; did you mean '" + hint + "'?";
      else if (where.empty() && v.is_table() && is_valid_task_type_name(name))
        msg += "; task types go in [tasks." + std::string{name} + "]";
      else
        msg += "; known keys: " + join(known, ", ");
      error(k.source(), std::move(msg));
    }
  }

  void type_error(const toml::node& n, std::string_view key, std::string_view expected) {
    error(n, "'" + std::string{key} + "' must be " + std::string{expected} + ", got " +
                 type_name(n.type()));
  }

  std::optional<std::string> read_string(const toml::table& t, std::string_view key) {
    auto* n = t.get(key);
    if (n == nullptr)
      return std::nullopt;
    auto* s = n->as_string();
    if (s == nullptr) {
      type_error(*n, key, "a string");
      return std::nullopt;
    }
    if (s->get().find('\0') != std::string::npos) {
      error(*n, "'" + std::string{key} + "' contains a NUL character");
      return std::nullopt;
    }
    return s->get();
  }

  std::optional<bool> read_bool(const toml::table& t, std::string_view key) {
    auto* n = t.get(key);
    if (n == nullptr)
      return std::nullopt;
    if (auto* b = n->as_boolean())
      return b->get();
    type_error(*n, key, "a boolean (true or false)");
    return std::nullopt;
  }

  std::optional<int64_t> read_int(const toml::table& t, std::string_view key, int64_t lo,
                                  int64_t hi) {
    auto* n = t.get(key);
    if (n == nullptr)
      return std::nullopt;
    auto* i = n->as_integer();
    if (i == nullptr) {
      type_error(*n, key, "an integer");
      return std::nullopt;
    }
    auto v = i->get();
    if (v < lo || v > hi) {
      error(*n, "'" + std::string{key} + "' must be between " + std::to_string(lo) +
                    " and " + std::to_string(hi) + ", got " + std::to_string(v));
      return std::nullopt;
    }
    return v;
  }

  std::optional<int64_t> read_memory(const toml::table& t, std::string_view key) {
    auto* n = t.get(key);
    if (n == nullptr)
      return std::nullopt;
    std::string k{key};
    int64_t mb = 0;
    std::string shown;
    if (auto* i = n->as_integer()) {
      mb = i->get();
      shown = std::to_string(mb);
    } else if (auto* s = n->as_string()) {
      auto parsed = parse_memory_mb(s->get());
      if (!parsed) {
        error(*n, "'" + k + "' = " + quote_text(s->get()) + " " + parsed.error());
        return std::nullopt;
      }
      mb = *parsed;
      shown = quote_text(s->get());
    } else {
      type_error(*n, key, "an integer (MiB) or a string like \"2g\"");
      return std::nullopt;
    }
    if (mb <= 0) {
      error(*n, "'" + k + "' must be positive, got " + shown);
      return std::nullopt;
    }
    if (mb > max_memory_mb) {
      error(*n, "'" + k + "' must be at most 1t (" + std::to_string(max_memory_mb) +
                    " MiB), got " + shown);
      return std::nullopt;
    }
    return mb;
  }

  std::optional<int64_t> read_duration(const toml::table& t, std::string_view key,
                                       bool allow_zero) {
    auto* n = t.get(key);
    if (n == nullptr)
      return std::nullopt;
    std::string k{key};
    int64_t ms = 0;
    std::string shown;
    if (auto* i = n->as_integer()) {
      auto secs = i->get();
      ms = secs > max_duration_ms / 1000    ? max_duration_ms + 1
           : secs < -max_duration_ms / 1000 ? -max_duration_ms
                                            : secs * 1000;
      shown = std::to_string(secs);
    } else if (auto* s = n->as_string()) {
      auto parsed = parse_duration_ms(s->get());
      if (!parsed) {
        error(*n, "'" + k + "' = " + quote_text(s->get()) + " " + parsed.error());
        return std::nullopt;
      }
      ms = *parsed;
      shown = quote_text(s->get());
    } else {
      type_error(*n, key, "an integer of seconds or a string like \"30m\"");
      return std::nullopt;
    }
    if (ms < 0) {
      error(*n, "'" + k + "' must not be negative, got " + shown);
      return std::nullopt;
    }
    if (ms == 0 && !allow_zero) {
      error(*n, "'" + k + "' must be positive, got " + shown);
      return std::nullopt;
    }
    if (ms > max_duration_ms) {
      error(*n, "'" + k + "' must be at most " + format_duration(max_duration_ms) +
                    ", got " + shown);
      return std::nullopt;
    }
    return ms;
  }

  std::optional<std::vector<std::string>> read_strings(const toml::table& t,
                                                       std::string_view key) {
    auto* n = t.get(key);
    if (n == nullptr)
      return std::nullopt;
    auto* arr = n->as_array();
    if (arr == nullptr) {
      type_error(*n, key, "an array of strings");
      return std::nullopt;
    }
    std::vector<std::string> out;
    bool ok = true;
    for (size_t i = 0; i < arr->size(); ++i) {
      auto& elem = *arr->get(i);
      auto* s = elem.as_string();
      if (s == nullptr) {
        type_error(elem, std::string{key} + "[" + std::to_string(i) + "]", "a string");
        ok = false;
      } else {
        out.push_back(s->get());
      }
    }
    if (!ok)
      return std::nullopt;
    return out;
  }

  // The sub-table `key` of `t`, nullptr when absent or not a table.
  const toml::table* read_table(const toml::table& t, std::string_view key,
                                const std::string& name) {
    auto* n = t.get(key);
    if (n == nullptr)
      return nullptr;
    if (auto* sub = n->as_table())
      return sub;
    error(*n, name + " must be a table, got " + type_name(n->type()));
    return nullptr;
  }

  // An environment table: names checked, values strings, integers, floats or
  // booleans (rendered as TOML writes them).
  std::map<std::string, std::string> read_env(const toml::table& t,
                                              const std::string& where) {
    std::map<std::string, std::string> out;
    for (auto&& [k, v] : t) {
      std::string name{k.str()};
      if (!is_valid_env_name(name)) {
        error(k.source(), "invalid environment variable name " + quote_name(name) +
                              " in " + where +
                              "; use letters, digits and '_', not starting with a digit");
        continue;
      }
      std::string value;
      if (auto* s = v.as_string()) {
        value = s->get();
      } else if (auto* i = v.as_integer()) {
        value = std::to_string(i->get());
      } else if (auto* b = v.as_boolean()) {
        value = b->get() ? "true" : "false";
      } else if (auto* f = v.as_floating_point()) {
        char buf[64];
        auto res = std::to_chars(buf, buf + sizeof(buf), f->get());
        value.assign(buf, res.ptr);
      } else {
        error(v, "'" + name + "' in " + where +
                     " must be a string, number or boolean, got " + type_name(v.type()));
        continue;
      }
      if (value.find('\0') != std::string::npos) {
        error(v, "'" + name + "' in " + where + " contains a NUL character");
        continue;
      }
      out.emplace(std::move(name), std::move(value));
    }
    return out;
  }

  // -- shipped files ------------------------------------------------------------

  // `files` and `archives` of [code] or of a task type: each a path (local,
  // or an hdfs:// / viewfs:// URI) or a table { source = "...", name = "..." }.
  std::vector<shipped_file> read_shipped(const toml::table& t, const std::string& where) {
    std::vector<shipped_file> out;
    for (bool archive : {false, true}) {
      const char* key = archive ? "archives" : "files";
      auto* n = t.get(key);
      if (n == nullptr)
        continue;
      auto* arr = n->as_array();
      if (arr == nullptr) {
        type_error(*n, key, "an array of paths or { source = ..., name = ... } tables");
        continue;
      }
      for (size_t i = 0; i < arr->size(); ++i) {
        auto label = std::string{key} + "[" + std::to_string(i) + "] in " + where;
        // (*arr)[i], not *arr->get(i): get() may return null, and GCC's
        // -Wnull-dereference at -O2 says so (a release build failed).
        if (auto f = read_shipped_entry((*arr)[i], label, archive))
          out.push_back(std::move(*f));
      }
    }
    return out;
  }

  std::optional<shipped_file> read_shipped_entry(const toml::node& n,
                                                 const std::string& label, bool archive) {
    shipped_file f;
    f.archive = archive;
    if (auto* str = n.as_string()) {
      f.source = str->get();
    } else if (auto* tab = n.as_table()) {
      check_keys(*tab, label, {"source", "name"});
      auto source = read_string(*tab, "source");
      if (!source) {
        if (tab->get("source") == nullptr)
          error(n, label + " needs 'source', the path or URI to ship");
        return std::nullopt;
      }
      f.source = *source;
      if (auto name = read_string(*tab, "name"))
        f.name = *name;
    } else {
      error(n, label + " must be a path or a table { source = ..., name = ... }, got " +
                   type_name(n.type()));
      return std::nullopt;
    }
    if (!resolve_shipped_source(n, label, f))
      return std::nullopt;
    if (f.name.empty())
      f.name = base_name(f.source);
    if (auto why = bad_file_name(f.name); !why.empty()) {
      error(n, label + ": " + why);
      return std::nullopt;
    }
    return f;
  }

  // Makes a local source absolute and checks it; keeps a URI as written.
  bool resolve_shipped_source(const toml::node& n, const std::string& label,
                              shipped_file& f) {
    if (f.source.empty() || f.source.find('\0') != std::string::npos) {
      error(n, label + " must not be empty");
      return false;
    }
    if (f.source.rfind("file://", 0) == 0)
      f.source = f.source.substr(7);
    if (has_uri_scheme(f.source)) {
      auto scheme = lower(f.source.substr(0, f.source.find("://")));
      if (scheme != "hdfs" && scheme != "viewfs") {
        error(n, label + " " + quote_text(f.source) +
                     ": tony ships local paths and hdfs:// or viewfs:// URIs");
        return false;
      }
      if (archive_kind(f.source).empty() && f.archive) {
        error(n, label + " " + quote_text(f.source) + " " + archive_suffix_hint);
        return false;
      }
      return true;
    }
    auto abs = absolute_path(f.source, base_dir_);
    std::error_code ec;
    auto st = fs::status(abs, ec);
    if (!fs::exists(st)) {
      error(n, label + " " + quote_text(f.source) + " does not exist (resolved to " +
                   abs + ")");
      return false;
    }
    if (f.archive && (!fs::is_regular_file(st) || archive_kind(abs).empty())) {
      error(n, label + " " + quote_text(f.source) + " " + archive_suffix_hint +
                   " (resolved to " + abs + ")");
      return false;
    }
    if (!f.archive && !fs::is_regular_file(st) && !fs::is_directory(st)) {
      error(n, label + " " + quote_text(f.source) +
                   " is neither a file nor a directory (resolved to " + abs + ")");
      return false;
    }
    f.source = abs;
    return true;
  }

  static constexpr const char* archive_suffix_hint =
      "must be an archive: .zip, .tar.gz, .tgz, .tar or .jar";

  static std::string base_name(const std::string& source) {
    auto path = source;
    if (auto scheme = path.find("://"); scheme != std::string::npos) {
      auto slash = path.find('/', scheme + 3);
      path = slash == std::string::npos ? std::string{} : path.substr(slash);
    }
    while (path.size() > 1 && path.back() == '/')
      path.pop_back();
    return fs::path{path}.filename().string();
  }

  // Why `name` cannot name a shipped file, or empty.
  static std::string bad_file_name(const std::string& name) {
    if (name.empty() || name == "." || name == "..")
      return "the name " + quote_text(name) + " is not a file name";
    if (name.find('/') != std::string::npos || has_control_chars(name))
      return "the name " + quote_text(name) +
             " must be a plain file name (no '/' or control characters)";
    if (is_reserved_file_name(name))
      return "the name " + quote_text(name) +
             " is taken by tony or YARN in the working directory; give the entry "
             "another name with { source = ..., name = ... }";
    return {};
  }

  // -- sections ---------------------------------------------------------------

  void read_root(const toml::table& root) {
    check_keys(root, "",
               {"name", "framework", "queue", "timeout", "tags", "node_label", "code",
                "env", "data", "tasks", "tensorboard", "docker", "am", "policy",
                "cluster", "security"});
    read_identity(root);
    if (auto label = read_string(root, "node_label"))
      spec_.node_label = read_node_label(*root.get("node_label"), *label);
    if (auto* docker = read_table(root, "docker", "'docker'"))
      read_docker(*docker);
    if (auto* code = read_table(root, "code", "'code'"))
      read_code(*code);
    else if (root.get("code") != nullptr)
      default_command_broken_ = true;
    if (auto* env = read_table(root, "env", "'env'"))
      spec_.env = read_env(*env, "[env]");
    if (auto* data = read_table(root, "data", "'data'"))
      read_data(*data);
    if (auto* tb = read_table(root, "tensorboard", "'tensorboard'")) {
      tensorboard_table_ = tb;
      read_tensorboard(*tb);
    }
    if (auto* am = read_table(root, "am", "'am'"))
      read_am(*am);
    if (auto* policy = read_table(root, "policy", "'policy'"))
      read_policy(*policy);
    if (auto* cluster = read_table(root, "cluster", "'cluster'"))
      read_cluster(*cluster);
    if (auto* security = read_table(root, "security", "'security'"))
      read_security(*security);
    auto* tasks = read_table(root, "tasks", "'tasks'");
    if (tasks != nullptr)
      read_tasks(*tasks);
    else if (root.get("tasks") == nullptr)
      file_error("no task types; add a [tasks.<type>] table, e.g. [tasks.worker] with "
                 "instances = 1");
    resolve_code(root.get("code") != nullptr ? root.get("code")->as_table() : nullptr);
    resolve_tensorboard();
    resolve_rendezvous();
    check_job();
  }

  void read_identity(const toml::table& root) {
    if (auto name = read_string(root, "name")) {
      if (name->empty())
        error(*root.get("name"), "'name' must not be empty");
      else if (has_control_chars(*name))
        error(*root.get("name"),
              "'name' must be printable text, got " + quote_text(*name));
      else
        spec_.name = *name;
    }
    if (spec_.name.empty()) {
      spec_.name = fs::path{file_}.stem().string();
      if (spec_.name.empty() || has_control_chars(spec_.name))
        spec_.name = "job";
    }
    if (auto fw = read_string(root, "framework")) {
      auto& known = known_frameworks();
      if (std::find(known.begin(), known.end(), *fw) == known.end()) {
        std::string msg =
            "unknown framework " + quote_name(*fw) + "; use one of " + join(known, ", ");
        if (auto hint = closest(*fw, known); !hint.empty())
          msg += "; did you mean '" + hint + "'?";
        error(*root.get("framework"), std::move(msg));
      } else {
        spec_.framework = *fw;
      }
    }
    if (auto queue = read_string(root, "queue")) {
      bool bad = queue->empty() ||
                 std::any_of(queue->begin(), queue->end(),
                             [](char c) { return c == ' ' || c == '\t'; }) ||
                 has_control_chars(*queue);
      if (bad)
        error(*root.get("queue"),
              "'queue' must be a YARN queue name without spaces, got " +
                  quote_text(*queue));
      else
        spec_.queue = *queue;
    }
    if (auto timeout = read_duration(root, "timeout", true))
      spec_.timeout_ms = *timeout;
    if (auto tags = read_strings(root, "tags")) {
      auto& node = *root.get("tags");
      // YARN's own limits (YarnConfiguration.APPLICATION_MAX_TAGS and
      // APPLICATION_MAX_TAG_LENGTH), checked here rather than at submission.
      bool ok = true;
      if (tags->size() > 10) {
        error(node, "'tags' has " + std::to_string(tags->size()) +
                        " tags; YARN accepts at most 10");
        ok = false;
      }
      for (auto& tag : *tags) {
        bool ascii = std::all_of(tag.begin(), tag.end(), [](char c) {
          return static_cast<unsigned char>(c) >= 0x20 &&
                 static_cast<unsigned char>(c) < 0x7f;
        });
        if (tag.empty() || tag.size() > 100 || !ascii) {
          error(node, "tag " + quote_text(tag) +
                          " must be 1 to 100 printable ASCII characters (a YARN limit)");
          ok = false;
        }
      }
      if (ok)
        spec_.tags = std::move(*tags);
    }
  }

  void read_code(const toml::table& t) {
    check_keys(
        t, "[code]",
        {"src_dir", "command", "python_venv", "python_binary_path", "files", "archives"});
    if (auto cmd = read_string(t, "command")) {
      if (is_blank(*cmd))
        error(*t.get("command"), "'command' in [code] must not be empty");
      else
        spec_.command = *cmd;
    }
    default_command_broken_ = t.get("command") != nullptr && spec_.command.empty();
    if (auto* b = t.get_as<bool>("src_dir")) {
      // false: ship no directory (a job of shipped files, or code on the nodes).
      if (b->get())
        error(*b, "'src_dir' = true means nothing; give a directory, or false to ship "
                  "none");
      else
        no_src_dir_ = true;
    } else if (auto dir = read_string(t, "src_dir")) {
      if (dir->empty())
        error(*t.get("src_dir"), "'src_dir' must not be empty; leave it out to ship "
                                 "the job file's directory");
      else
        src_dir_given_ = *dir;
    }
    if (auto venv = read_string(t, "python_venv")) {
      if (venv->empty())
        error(*t.get("python_venv"), "'python_venv' must not be empty");
      else
        venv_given_ = *venv;
    }
    if (auto python = read_string(t, "python_binary_path")) {
      if (is_blank(*python) || has_control_chars(*python))
        error(*t.get("python_binary_path"),
              "'python_binary_path' must be a path (relative to the unpacked "
              "python_venv, or absolute), got " +
                  quote_text(*python));
      else
        spec_.python_binary_path = *python;
    }
    spec_.files = read_shipped(t, "[code]");
  }

  void read_docker(const toml::table& t) {
    check_keys(t, "[docker]", {"image", "mounts", "network", "run_options"});
    if (auto image = read_string(t, "image"))
      spec_.docker_image = read_docker_image(*t.get("image"), "image", *image);
    if (auto mounts = read_strings(t, "mounts"))
      for (auto& m : *mounts) {
        if (auto why = docker_mount_problem(m); !why.empty())
          error(*t.get("mounts"), "'mounts' entry " + quote_text(m) + " " + why);
        else
          spec_.docker_mounts.push_back(m);
      }
    if (auto network = read_string(t, "network")) {
      bool ok = !network->empty() && network->size() <= 64 &&
                std::all_of(network->begin(), network->end(), [](char c) {
                  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                         c == '_' || c == '.';
                });
      if (ok)
        spec_.docker_network = *network;
      else
        error(*t.get("network"), "'network' in [docker] is " + quote_text(*network) +
                                     "; name a Docker network: host (the default), "
                                     "bridge, none or one of your own");
    }
    if (auto options = read_strings(t, "run_options"))
      for (auto& o : *options) {
        if (o.empty() || o[0] != '-' || o.find('\n') != std::string::npos)
          error(*t.get("run_options"),
                "'run_options' entry " + quote_text(o) +
                    " is not an option of `docker run`; write one option per entry, "
                    "e.g. \"--shm-size=1g\"");
        else
          spec_.docker_run_options.push_back(o);
      }
  }

  // "host path:container path[:ro|rw]": both absolute, no ',' (YARN's
  // separator of mounts). Empty when fine, else what is wrong.
  static std::string docker_mount_problem(const std::string& m) {
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
      auto end = m.find(':', start);
      parts.push_back(m.substr(start, end - start));
      if (end == std::string::npos)
        break;
      start = end + 1;
    }
    bool shape = (parts.size() == 2 || parts.size() == 3) && !parts[0].empty() &&
                 parts[0][0] == '/' && !parts[1].empty() && parts[1][0] == '/';
    if (!shape || m.find(',') != std::string::npos || has_control_chars(m))
      return "is not \"/host/path:/container/path\" with an optional \":ro\" or "
             "\":rw\"";
    if (parts.size() == 3 && parts[2] != "ro" && parts[2] != "rw")
      return "has the mode " + quote_text(parts[2]) + "; use ro or rw";
    return {};
  }

  std::string read_docker_image(const toml::node& n, std::string_view key,
                                const std::string& image) {
    if (is_valid_docker_image(image))
      return image;
    error(n, "'" + std::string{key} + "' " + quote_text(image) +
                 " is not a Docker image name; write [registry[:port]/]name[:tag] with a "
                 "lower-case name, e.g. \"tensorflow/tensorflow:2.15.0\"");
    return {};
  }

  std::string read_node_label(const toml::node& n, const std::string& label) {
    if (label.empty() || is_valid_node_label(label))
      return label;
    error(n, "'node_label' " + quote_text(label) +
                 " is not a YARN node label; use letters, digits, '-' and '_', starting "
                 "with a letter or digit");
    return {};
  }

  void read_data(const toml::table& t) {
    check_keys(t, "[data]", {"input_path", "output_path"});
    if (auto in = read_string(t, "input_path"))
      spec_.input_path = *in;
    if (auto out = read_string(t, "output_path"))
      spec_.output_path = *out;
  }

  void read_tensorboard(const toml::table& t) {
    check_keys(t, "[tensorboard]", {"enabled", "log_dir", "on"});
    if (auto on = read_string(t, "on")) {
      static const std::vector<std::string> places{"sidecar", "chief"};
      if (std::find(places.begin(), places.end(), *on) == places.end()) {
        std::string msg = "'on' in [tensorboard] is " + quote_text(*on) +
                          "; use \"sidecar\" (a task of its own) or \"chief\" (the chief "
                          "starts it on TB_PORT)";
        if (auto hint = closest(*on, places); !hint.empty())
          msg += "; did you mean '" + hint + "'?";
        error(*t.get("on"), std::move(msg));
      } else {
        spec_.tensorboard.on = *on;
        spec_.tensorboard.enabled = true; // naming a place asks for it
      }
    }
    if (auto enabled = read_bool(t, "enabled"))
      spec_.tensorboard.enabled = *enabled;
    if (auto dir = read_string(t, "log_dir"))
      spec_.tensorboard.log_dir = *dir;
  }

  void read_am(const toml::table& t) {
    check_keys(t, "[am]", {"memory", "vcores", "max_app_attempts", "reconnect_timeout"});
    if (auto mb = read_memory(t, "memory"))
      spec_.am.capability.memory_mb = *mb;
    if (auto vcores = read_int(t, "vcores", 1, max_vcores))
      spec_.am.capability.vcores = static_cast<int32_t>(*vcores);
    if (auto attempts = read_int(t, "max_app_attempts", 1, max_app_attempts))
      spec_.am.max_app_attempts = static_cast<int32_t>(*attempts);
    if (auto ms = read_duration(t, "reconnect_timeout", false))
      spec_.am.reconnect_timeout_ms = *ms;
  }

  void read_policy(const toml::table& t) {
    check_keys(t, "[policy]",
               {"max_attempts", "allocation_timeout", "registration_timeout",
                "heartbeat_interval", "heartbeat_timeout", "stop_grace",
                "tolerated_failures"});
    auto& p = spec_.policy;
    if (auto v = read_int(t, "max_attempts", 1, max_job_attempts))
      p.max_attempts = static_cast<int32_t>(*v);
    if (auto v = read_int(t, "tolerated_failures", 0, max_tolerated_failures))
      p.tolerated_failures = static_cast<int32_t>(*v);
    if (auto v = read_duration(t, "allocation_timeout", true))
      p.allocation_timeout_ms = *v;
    if (auto v = read_duration(t, "registration_timeout", true))
      p.registration_timeout_ms = *v;
    bool interval_ok = true;
    if (auto v = read_duration(t, "heartbeat_interval", false))
      p.heartbeat_interval_ms = *v;
    else
      interval_ok = t.get("heartbeat_interval") == nullptr;
    auto timeout = read_duration(t, "heartbeat_timeout", false);
    if (timeout)
      p.heartbeat_timeout_ms = *timeout;
    bool timeout_ok = timeout.has_value() || t.get("heartbeat_timeout") == nullptr;
    if (interval_ok && timeout_ok && p.heartbeat_timeout_ms <= p.heartbeat_interval_ms) {
      auto* where = t.get("heartbeat_timeout") != nullptr ? t.get("heartbeat_timeout")
                                                          : t.get("heartbeat_interval");
      error(*where, "'heartbeat_timeout' (" + format_duration(p.heartbeat_timeout_ms) +
                        ") must be longer than 'heartbeat_interval' (" +
                        format_duration(p.heartbeat_interval_ms) + ")");
    }
    if (auto v = read_duration(t, "stop_grace", true))
      p.stop_grace_ms = *v;
  }

  void read_cluster(const toml::table& t) {
    check_keys(t, "[cluster]",
               {"backend", "hadoop_conf", "install_dir", "staging_dir", "jobs_dir",
                "history_dir", "local"});
    auto& c = spec_.cluster;
    if (auto backend = read_string(t, "backend")) {
      auto& known = known_backends();
      if (std::find(known.begin(), known.end(), *backend) == known.end()) {
        std::string msg = "unknown backend " + quote_name(*backend) +
                          " in [cluster]; use one of " + join(known, ", ");
        if (auto hint = closest(*backend, known); !hint.empty())
          msg += "; did you mean '" + hint + "'?";
        error(*t.get("backend"), std::move(msg));
      } else {
        c.backend = *backend;
      }
    }
    if (auto conf = read_string(t, "hadoop_conf"); conf && !conf->empty()) {
      auto abs = absolute_path(*conf, base_dir_);
      std::error_code ec;
      if (!fs::is_directory(abs, ec))
        error(*t.get("hadoop_conf"), "'hadoop_conf' " + quote_text(*conf) +
                                         " is not a directory (resolved to " + abs + ")");
      else
        c.hadoop_conf = abs;
    }
    if (auto dir = read_string(t, "install_dir"); dir && !dir->empty()) {
      // A path on the nodes, not here: nothing to resolve or check locally.
      if ((*dir)[0] != '/')
        error(*t.get("install_dir"),
              "'install_dir' must be an absolute path on the nodes, got " +
                  quote_text(*dir));
      else
        c.install_dir = *dir;
    }
    if (auto dir = read_string(t, "staging_dir"); dir && !dir->empty())
      c.staging_dir = has_uri_scheme(*dir) ? *dir : absolute_path(*dir, base_dir_);
    if (auto dir = read_string(t, "jobs_dir"); dir && !dir->empty())
      c.jobs_dir = absolute_path(*dir, base_dir_);
    if (auto dir = read_string(t, "history_dir"); dir && !dir->empty())
      c.history_dir = has_uri_scheme(*dir) ? *dir : absolute_path(*dir, base_dir_);
    if (auto* local = read_table(t, "local", "'cluster.local'")) {
      check_keys(*local, "[cluster.local]", {"memory", "vcores", "gpus"});
      if (auto mb = read_memory(*local, "memory"))
        c.local.memory_mb = *mb;
      if (auto vcores = read_int(*local, "vcores", 1, max_pool_vcores))
        c.local.vcores = static_cast<int32_t>(*vcores);
      if (auto gpus = read_int(*local, "gpus", 0, max_gpus))
        c.local.gpus = static_cast<int32_t>(*gpus);
    }
  }

  void read_security(const toml::table& t) {
    check_keys(t, "[security]", {"principal", "keytab", "file_systems", "ca_file"});
    auto& s = spec_.security;
    if (auto principal = read_string(t, "principal")) {
      if (!is_kerberos_principal(*principal))
        error(*t.get("principal"),
              "'principal' must be a Kerberos principal such as alice@EXAMPLE.COM or "
              "alice/host@EXAMPLE.COM, got " +
                  quote_text(*principal));
      else
        s.principal = *principal;
    }
    if (auto keytab = read_string(t, "keytab")) {
      auto abs = keytab->empty() ? std::string{} : absolute_path(*keytab, base_dir_);
      std::error_code ec;
      if (keytab->empty())
        error(*t.get("keytab"), "'keytab' must not be empty; leave it out to use the "
                                "ticket cache (kinit)");
      else if (!fs::is_regular_file(abs, ec))
        error(*t.get("keytab"), "'keytab' " + quote_text(*keytab) +
                                    " is not a file (resolved to " + abs + ")");
      else if (::access(abs.c_str(), R_OK) != 0)
        error(*t.get("keytab"),
              "'keytab' " + abs + " cannot be read: " + std::strerror(errno));
      else if (t.get("principal") == nullptr)
        error(*t.get("keytab"), "'keytab' needs 'principal' in [security]: the principal "
                                "whose keys the keytab holds (klist -kt " +
                                    abs + " lists them)");
      else
        s.keytab = abs;
    }
    if (auto ca = read_string(t, "ca_file")) {
      auto abs = ca->empty() ? std::string{} : absolute_path(*ca, base_dir_);
      std::error_code ec;
      if (ca->empty())
        error(*t.get("ca_file"), "'ca_file' must not be empty; leave it out to trust the "
                                 "system's CA bundle");
      else if (!fs::is_regular_file(abs, ec))
        error(*t.get("ca_file"), "'ca_file' " + quote_text(*ca) +
                                     " is not a file (resolved to " + abs + ")");
      else if (::access(abs.c_str(), R_OK) != 0)
        error(*t.get("ca_file"),
              "'ca_file' " + abs + " cannot be read: " + std::strerror(errno));
      else
        s.ca_file = abs;
    }
    if (auto fss = read_strings(t, "file_systems")) {
      auto& node = *t.get("file_systems");
      for (auto& uri : *fss) {
        auto why = file_system_problem(uri);
        if (!why.empty())
          error(node, "'file_systems' entry " + quote_text(uri) + " " + why);
        else if (std::find(s.file_systems.begin(), s.file_systems.end(), uri) !=
                 s.file_systems.end())
          error(node, "'file_systems' lists " + quote_text(uri) + " twice");
        else
          s.file_systems.push_back(uri);
      }
    }
  }

  // -- tasks ------------------------------------------------------------------

  struct task_entry {
    task_type_spec spec;
    const toml::table* table = nullptr;
    bool has_command = false;
    std::optional<bool> tracked;
    std::optional<bool> sidecar;
    bool docker_image_given = false;
    std::optional<restart_policy> restart;
    std::optional<int32_t> max_restarts;
    const toml::node* elastic = nullptr; // the elastic table, when valid
  };

  void read_tasks(const toml::table& tasks) {
    if (tasks.empty()) {
      error(tasks, "no task types; add a [tasks.<type>] table, e.g. [tasks.worker] with "
                   "instances = 1");
      return;
    }
    for (auto&& [k, v] : tasks) {
      std::string name{k.str()};
      std::string where = "[tasks." + name + "]";
      if (!is_valid_task_type_name(name)) {
        error(k.source(), "invalid task type name " + quote_name(name) + " in [tasks." +
                              name +
                              "]; use lower-case letters, digits, '_' and '-', starting "
                              "with a letter (at most 64)");
        continue;
      }
      auto* t = v.as_table();
      if (t == nullptr) {
        error(v, "'tasks." + name + "' must be a table, got " + type_name(v.type()) +
                     "; write [tasks." + name + "] with instances = ...");
        continue;
      }
      entries_.push_back(read_task(name, *t, where));
    }
  }

  task_entry read_task(const std::string& name, const toml::table& t,
                       const std::string& where) {
    check_keys(t, where,
               {"instances", "memory", "vcores", "gpus", "command", "tracked", "sidecar",
                "node_label", "env", "files", "archives", "docker_image", "index",
                "restart", "max_restarts", "restart_backoff", "tolerated_failures",
                "elastic", "spec_signal"});
    task_entry e;
    e.table = &t;
    auto& s = e.spec;
    s.name = name;
    if (auto n = read_int(t, "instances", 1, max_instances))
      s.instances = static_cast<int32_t>(*n);
    if (auto mb = read_memory(t, "memory"))
      s.capability.memory_mb = *mb;
    if (auto vcores = read_int(t, "vcores", 1, max_vcores))
      s.capability.vcores = static_cast<int32_t>(*vcores);
    if (auto gpus = read_int(t, "gpus", 0, max_gpus))
      s.capability.gpus = static_cast<int32_t>(*gpus);
    if (auto cmd = read_string(t, "command")) {
      if (is_blank(*cmd)) {
        error(*t.get("command"), "'command' in " + where + " must not be empty");
        e.has_command = true; // reported; don't also report it missing
      } else {
        s.command = *cmd;
        e.has_command = true;
      }
    }
    e.tracked = read_bool(t, "tracked");
    e.sidecar = read_bool(t, "sidecar");
    if (auto label = read_string(t, "node_label"))
      s.node_label = read_node_label(*t.get("node_label"), *label);
    if (auto* env = read_table(t, "env", "'env' in " + where))
      s.env = read_env(*env, "[tasks." + name + ".env]");
    s.files = read_shipped(t, where);
    if (auto image = read_string(t, "docker_image"))
      s.docker_image = read_docker_image(*t.get("docker_image"), "docker_image", *image);
    e.docker_image_given = t.get("docker_image") != nullptr;
    if (auto* index = read_table(t, "index", "'index' in " + where))
      read_task_indexes(*index, s, where);
    read_task_policy(t, where, e);
    return e;
  }

  // [tasks.<type>.index.<i>]: the capability of single tasks, each key
  // defaulting to the type's own.
  void read_task_indexes(const toml::table& t, task_type_spec& s,
                         const std::string& where) {
    for (auto&& [k, v] : t) {
      std::string key{k.str()};
      auto place = "[tasks." + s.name + ".index." + key + "]";
      int32_t index = -1;
      auto res = std::from_chars(key.data(), key.data() + key.size(), index);
      if (res.ec != std::errc{} || res.ptr != key.data() + key.size() || index < 0 ||
          index >= s.instances) {
        error(k.source(), "'index' keys in " + where + " are task indexes from 0 to " +
                              std::to_string(s.instances - 1) + ", got " +
                              quote_name(key));
        continue;
      }
      auto* sub = v.as_table();
      if (sub == nullptr) {
        error(v, place + " must be a table with memory, vcores or gpus, got " +
                     type_name(v.type()));
        continue;
      }
      check_keys(*sub, place, {"memory", "vcores", "gpus"});
      resource r = s.capability;
      if (auto mb = read_memory(*sub, "memory"))
        r.memory_mb = *mb;
      if (auto vcores = read_int(*sub, "vcores", 1, max_vcores))
        r.vcores = static_cast<int32_t>(*vcores);
      if (auto gpus = read_int(*sub, "gpus", 0, max_gpus))
        r.gpus = static_cast<int32_t>(*gpus);
      if (!(r == s.capability))
        s.index_capability[index] = r;
    }
  }

  // restart, max_restarts, restart_backoff, tolerated_failures, elastic,
  // spec_signal: what happens when a task of the type fails (resolved with
  // the whole job in resolve_policy).
  void read_task_policy(const toml::table& t, const std::string& where, task_entry& e) {
    auto& s = e.spec;
    if (auto r = read_string(t, "restart")) {
      if (*r == "never")
        e.restart = restart_policy::never;
      else if (*r == "on-failure")
        e.restart = restart_policy::on_failure;
      else
        error(*t.get("restart"), "'restart' in " + where +
                                     " must be \"never\" or \"on-failure\", got " +
                                     quote_text(*r));
    }
    if (auto n = read_int(t, "max_restarts", 0, max_restarts))
      e.max_restarts = static_cast<int32_t>(*n);
    if (auto ms = read_duration(t, "restart_backoff", true))
      s.restart_backoff_ms = *ms;
    if (auto n = read_int(t, "tolerated_failures", 0, max_tolerated_failures))
      s.tolerated_failures = static_cast<int32_t>(*n);
    if (auto* el = read_table(t, "elastic", "'elastic' in " + where)) {
      check_keys(*el, where + " elastic", {"min", "max"});
      auto lo = read_int(*el, "min", 1, max_instances);
      auto hi = read_int(*el, "max", 1, max_instances);
      if (el->get("min") == nullptr || el->get("max") == nullptr)
        error(*t.get("elastic"), "'elastic' in " + where +
                                     " needs both 'min' and 'max', e.g. elastic = "
                                     "{ min = 2, max = 4 }");
      else if (lo && hi && *lo > *hi)
        error(*t.get("elastic"), "'elastic' in " + where + ": 'min' (" +
                                     std::to_string(*lo) + ") is larger than 'max' (" +
                                     std::to_string(*hi) + ")");
      else if (lo && hi) {
        s.elastic_min = static_cast<int32_t>(*lo);
        s.elastic_max = static_cast<int32_t>(*hi);
        e.elastic = t.get("elastic");
      }
    }
    if (auto sig = read_string(t, "spec_signal")) {
      auto number = signal_number(*sig);
      if (number == 0)
        error(*t.get("spec_signal"), "'spec_signal' in " + where + " must be one of " +
                                         "HUP, USR1, USR2, got " + quote_text(*sig));
      s.spec_signal = number;
    }
  }

  static int32_t signal_number(const std::string& name) {
    auto bare = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
    if (bare == "HUP")
      return SIGHUP;
    if (bare == "USR1")
      return SIGUSR1;
    if (bare == "USR2")
      return SIGUSR2;
    return 0;
  }

  // -- resolution ---------------------------------------------------------------

  void resolve_code(const toml::table* code) {
    spec_.job_file = absolute_path(fs::path{file_}.filename().string(), base_dir_);
    if (no_src_dir_) {
      spec_.src_dir.clear();
    } else if (src_dir_given_) {
      auto abs = absolute_path(*src_dir_given_, base_dir_);
      std::error_code ec;
      auto& node = *code->get("src_dir");
      if (!fs::exists(abs, ec))
        error(node, "'src_dir' " + quote_text(*src_dir_given_) +
                        " does not exist (resolved to " + abs + ")");
      else if (!fs::is_directory(abs, ec))
        error(node, "'src_dir' " + quote_text(*src_dir_given_) +
                        " is not a directory (resolved to " + abs + ")");
      else
        spec_.src_dir = abs;
    } else {
      spec_.src_dir = absolute_path(".", base_dir_);
      std::error_code ec;
      if (!fs::is_directory(spec_.src_dir, ec))
        file_error("the job's directory " + spec_.src_dir +
                   " does not exist; set [code] src_dir");
    }
    if (venv_given_)
      resolve_venv(*code->get("python_venv"), *venv_given_);
    if (spec_.cluster.jobs_dir.empty()) {
      if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
        spec_.cluster.jobs_dir = absolute_path(std::string{home} + "/.tony/jobs", "/");
    }
  }

  void resolve_venv(const toml::node& node, const std::string& given) {
    auto venv = given.rfind("file://", 0) == 0 ? given.substr(7) : given;
    auto kind = lower(venv);
    bool pex = ends_with(kind, ".pex");
    if (!pex && !ends_with(kind, ".zip") && !ends_with(kind, ".tar.gz") &&
        !ends_with(kind, ".tgz")) {
      error(node, "'python_venv' " + quote_text(given) +
                      " must be a .zip, .tar.gz or .tgz archive");
      return;
    }
    if (has_uri_scheme(venv)) {
      auto scheme = lower(venv.substr(0, venv.find("://")));
      if (scheme == "hdfs" || scheme == "viewfs")
        spec_.python_venv = venv;
      else
        error(node, "'python_venv' " + quote_text(given) +
                        ": tony ships local paths and hdfs:// or viewfs:// URIs");
      return;
    }
    auto abs = absolute_path(venv, base_dir_);
    std::error_code ec;
    if (!fs::exists(abs, ec))
      error(node, "'python_venv' " + quote_text(given) + " does not exist (resolved to " +
                      abs + ")");
    else if (!fs::is_regular_file(abs, ec))
      error(node, "'python_venv' " + quote_text(given) + " is not a file (resolved to " +
                      abs + ")");
    else
      spec_.python_venv = abs;
  }

  // [tensorboard] enabled adds a sidecar task type running TensorBoard on its
  // reserved port, unless the job declares [tasks.tensorboard] itself.
  void resolve_tensorboard() {
    bool declared = std::any_of(entries_.begin(), entries_.end(),
                                [](auto& e) { return e.spec.name == "tensorboard"; });
    if (spec_.tensorboard.on_chief()) {
      resolve_chief_tensorboard(declared);
      return;
    }
    if (declared) {
      spec_.tensorboard.enabled = true;
      return;
    }
    if (!spec_.tensorboard.enabled)
      return;
    auto log_dir = spec_.tensorboard.log_dir;
    if (log_dir.empty())
      log_dir = spec_.output_path;
    if (log_dir.empty()) {
      if (tensorboard_table_ != nullptr)
        error(*tensorboard_table_, "[tensorboard] enabled needs 'log_dir' (or [data] "
                                   "output_path) to know what to show");
      return;
    }
    spec_.tensorboard.log_dir = log_dir;
    task_entry e;
    e.spec.name = "tensorboard";
    e.spec.instances = 1;
    e.spec.capability = resource{2048, 1, 0};
    e.spec.command = "tensorboard --logdir " + shell_quote(log_dir) +
                     " --host 0.0.0.0 --port \"$TONY_TASK_PORT\"";
    e.has_command = true;
    entries_.push_back(std::move(e));
  }

  // [tensorboard] on = "chief": no task of its own; the chief's executor
  // reserves TB_PORT and the chief's command starts TensorBoard there.
  void resolve_chief_tensorboard(bool declared) {
    auto where = [this](std::string msg) {
      if (tensorboard_table_ != nullptr)
        error(*tensorboard_table_, std::move(msg));
      else
        file_error(std::move(msg));
    };
    if (declared) {
      where("[tensorboard] on = \"chief\" and a [tasks.tensorboard] type both ask for "
            "TensorBoard; keep one");
      return;
    }
    std::vector<std::string> types;
    for (auto& e : entries_)
      types.push_back(e.spec.name);
    if (!types.empty() && !world_chief(types))
      where("[tensorboard] on = \"chief\" needs a chief, but no task type trains (a "
            "chief, master or worker type); use on = \"sidecar\"");
    if (spec_.tensorboard.log_dir.empty())
      spec_.tensorboard.log_dir = spec_.output_path;
  }

  // An elastic job's nodes meet at a c10d store (torchrun's c10d rendezvous
  // backend) served by a task of its own, so that any node may go: the
  // `rendezvous` type, unless the job declares [tasks.rendezvous] itself.
  void resolve_rendezvous() {
    auto elastic = std::any_of(entries_.begin(), entries_.end(),
                               [](auto& e) { return e.elastic != nullptr; });
    auto declared = std::any_of(entries_.begin(), entries_.end(),
                                [](auto& e) { return e.spec.name == rendezvous_type; });
    if (!elastic || declared)
      return;
    task_entry e;
    e.spec.name = rendezvous_type;
    e.spec.instances = 1;
    e.spec.capability = resource{512, 1, 0};
    e.spec.command =
        "exec python3 -c 'import datetime, os, time\n"
        "from torch.distributed import TCPStore\n"
        "port = int(os.environ[\"TONY_TASK_PORT\"])\n"
        "store = TCPStore(\"0.0.0.0\", port, is_master=True, wait_for_workers=False,\n"
        "                 timeout=datetime.timedelta(days=1))\n"
        "print(\"tony: c10d rendezvous store on port\", port, flush=True)\n"
        "while True:\n"
        "    time.sleep(3600)'";
    e.has_command = true;
    entries_.push_back(std::move(e));
  }

  // restart, max_restarts and elastic resolved for one type: defaults, and
  // what cannot work.
  void resolve_policy(task_entry& e, const std::string& where) {
    auto& s = e.spec;
    auto& fw = spec_.framework;
    bool elastic = e.elastic != nullptr;
    if (elastic) {
      if (fw != "pytorch")
        error(*e.elastic, "'elastic' in " + where +
                              " needs framework = \"pytorch\" (its nodes meet in "
                              "torchrun's rendezvous); this job's framework is '" +
                              fw + "'");
      auto* n = e.table != nullptr ? e.table->get("instances") : nullptr;
      if (n == nullptr)
        s.instances = s.elastic_max;
      else if (s.instances < s.elastic_min || s.instances > s.elastic_max)
        error(*n,
              "'instances' in " + where + " must be within its elastic min and max (" +
                  std::to_string(s.elastic_min) + " to " + std::to_string(s.elastic_max) +
                  "), got " + std::to_string(s.instances));
    }
    s.restart =
        e.restart.value_or(elastic ? restart_policy::on_failure : restart_policy::never);
    if (s.restart == restart_policy::never) {
      if (e.max_restarts && *e.max_restarts > 0 && e.table != nullptr)
        error(*e.table->get("max_restarts"),
              "'max_restarts' in " + where + " needs restart = \"on-failure\"");
      s.max_restarts = 0;
      return;
    }
    s.max_restarts = e.max_restarts.value_or(3);
    bool fixed_world =
        !elastic && (fw == "pytorch" || fw == "horovod") && is_world_type(s.name);
    if (fixed_world && e.table != nullptr && e.table->get("restart") != nullptr)
      error(*e.table->get("restart"),
            where + " cannot restart one task of a fixed " + fw +
                " world: the other ranks' process group would hang without it; "
                "restart every task with [policy] max_attempts, or make the type "
                "elastic = { min = ..., max = ... }");
  }

  // Rules over the whole job: the chief is never restarted, and an elastic
  // job trains one elastic type.
  void check_lifecycle() {
    std::vector<std::string> names;
    for (auto& e : entries_)
      names.push_back(e.spec.name);
    auto chief = world_chief(names);
    const task_entry* elastic = nullptr;
    for (auto& e : entries_) {
      auto where = "[tasks." + e.spec.name + "]";
      auto* restart = e.table != nullptr ? e.table->get("restart") : nullptr;
      if (chief && e.spec.name == chief->type && e.spec.instances == 1 &&
          e.elastic == nullptr && restart != nullptr &&
          e.spec.restart == restart_policy::on_failure)
        error(*restart, where + " is the job's chief, which is never restarted: its "
                                "failure fails the job (or starts a new attempt with "
                                "[policy] max_attempts)");
      if (e.elastic == nullptr)
        continue;
      if (elastic != nullptr)
        error(*e.elastic, "only one task type can be elastic; [tasks." +
                              elastic->spec.name + "] is already");
      elastic = &e;
    }
    if (elastic == nullptr)
      return;
    for (auto& e : entries_)
      if (e.elastic == nullptr && is_world_type(e.spec.name) && e.table != nullptr)
        error(*e.table, "[tasks." + e.spec.name +
                            "] would train beside the elastic world of [tasks." +
                            elastic->spec.name +
                            "], not in it (torchrun's rendezvous is the world); train in "
                            "one type, or make this one a ps or evaluator");
  }

  static std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += "'";
    return out;
  }

  static int order_rank(const std::string& name) {
    if (name == "chief")
      return 0;
    if (name == "master")
      return 1;
    if (name == "worker")
      return 2;
    return 3;
  }

  void check_job() {
    std::stable_sort(entries_.begin(), entries_.end(), [](auto& x, auto& y) {
      auto rx = order_rank(x.spec.name);
      auto ry = order_rank(y.spec.name);
      return rx != ry ? rx < ry : x.spec.name < y.spec.name;
    });
    bool any_tracked = false;
    bool any_world = false;
    // "a-b" and "a_b" would both export DTF_A_B_HOSTS (doc/task-environment.md).
    std::map<std::string, std::string> dtf_names;
    for (auto& e : entries_) {
      std::string dtf = e.spec.name;
      for (auto& c : dtf)
        c = c == '-' ? '_'
                     : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      auto [it, added] = dtf_names.emplace(dtf, e.spec.name);
      if (!added && e.table != nullptr)
        error(*e.table, "task types '" + it->second + "' and '" + e.spec.name +
                            "' would both export DTF_" + dtf + "_HOSTS; rename one");
    }
    for (auto& e : entries_) {
      auto& s = e.spec;
      std::string where = "[tasks." + s.name + "]";
      bool untracked_by_default =
          s.name == "ps" || s.name == "tensorboard" || s.name == rendezvous_type;
      // Explicit settings beat defaults: `tracked = true` alone makes a
      // tensorboard task an ordinary one. A sidecar's failure is ignored, so
      // by default the job does not wait for it either.
      bool sidecar =
          e.sidecar.value_or(s.name == "tensorboard" && !e.tracked.value_or(false));
      bool tracked = e.tracked.value_or(!untracked_by_default && !sidecar);
      if (sidecar && tracked && e.table != nullptr) {
        error(*e.table->get("sidecar"),
              where + " cannot be both a sidecar and tracked: the job would wait for a "
                      "task whose failure it ignores; remove one of them");
      }
      s.sidecar = sidecar;
      s.tracked = tracked;
      resolve_policy(e, where);
      any_tracked = any_tracked || tracked;
      any_world = any_world || is_world_type(s.name);
      if (!e.has_command) {
        if (spec_.command.empty()) {
          // A broken [code] command was reported already.
          if (e.table != nullptr && !default_command_broken_)
            error(*e.table, where + " has no command; set 'command' there or a default "
                                    "'command' in [code]");
        } else {
          s.command = spec_.command;
        }
      }
      if (spec_.framework == "tensorflow" && s.name == "chief" && s.instances > 1 &&
          e.table != nullptr) {
        error(
            *e.table->get("instances"),
            "TensorFlow allows one chief; 'instances' in [tasks.chief] must be 1, got " +
                std::to_string(s.instances));
      }
    }
    check_lifecycle();
    if (!entries_.empty() && !any_tracked)
      file_error("no task type is tracked, so the job would succeed at once; set "
                 "'tracked = true' on at least one [tasks.<type>]");
    if (!entries_.empty() && !any_world &&
        (spec_.framework == "pytorch" || spec_.framework == "horovod"))
      file_error("framework '" + spec_.framework +
                 "' needs a task type that trains: chief, master, worker, or any type "
                 "other than ps, tensorboard and evaluator");
    for (auto& e : entries_) {
      if (!e.docker_image_given)
        e.spec.docker_image = spec_.docker_image;
      check_file_names(e);
    }
    assign_priorities();
  }

  // Every task type's files, its own and the job's, appear side by side in
  // its working directory: their names must differ.
  void check_file_names(const task_entry& e) {
    std::map<std::string, std::string> seen;
    auto where_of = [&](bool own) {
      return own ? "[tasks." + e.spec.name + "]" : std::string{"[code]"};
    };
    for (bool own : {false, true}) {
      for (auto& f : own ? e.spec.files : spec_.files) {
        auto [it, added] = seen.emplace(f.name, where_of(own));
        if (added)
          continue;
        if (own || &e == &entries_.front())
          file_error("two shipped files are named " + quote_text(f.name) + " (in " +
                     it->second + " and " + where_of(own) +
                     "); give one another name with { source = ..., name = ... }");
      }
    }
  }

  // Each type asks with its own priority (its position + 1); the tasks of a
  // type whose [tasks.<type>.index.<i>] capability differs ask with further
  // priorities after every type's, one per distinct capability, because
  // YARN hands out one capability per priority.
  void assign_priorities() {
    int32_t priority = 1;
    for (auto& e : entries_)
      e.spec.priority = priority++;
    for (auto& e : entries_) {
      std::vector<std::pair<resource, int32_t>> groups;
      for (auto& [index, cap] : e.spec.index_capability) {
        auto same = std::find_if(groups.begin(), groups.end(),
                                 [&](auto& g) { return g.first == cap; });
        if (same == groups.end())
          same = groups.insert(groups.end(), {cap, priority++});
        e.spec.index_priority[index] = same->second;
      }
    }
    for (auto& e : entries_)
      spec_.tasks.push_back(std::move(e.spec));
  }

  // -- state ------------------------------------------------------------------

  std::string file_;
  std::string base_dir_;
  std::vector<config_error> errors_;
  std::vector<std::string> override_labels_;
  job_spec spec_;
  std::vector<task_entry> entries_;
  bool default_command_broken_ = false;
  std::optional<std::string> src_dir_given_;
  std::optional<std::string> venv_given_;
  bool no_src_dir_ = false;
  const toml::table* tensorboard_table_ = nullptr;
};

} // namespace

const std::vector<std::string>& known_frameworks() {
  static const std::vector<std::string> xs{"tensorflow", "pytorch", "horovod",
                                           "standalone"};
  return xs;
}

const std::vector<std::string>& known_backends() {
  static const std::vector<std::string> xs{"local", "yarn"};
  return xs;
}

bool is_valid_docker_image(std::string_view image) {
  // Docker's reference grammar (distribution/reference): an optional
  // registry, lower-case path components, a tag, a digest.
  static const std::regex component{"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"};
  static const std::regex domain{
      "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
      "(?:\\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*"
      "(?::[0-9]+)?"};
  static const std::regex tag{"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"};
  static const std::regex digest{"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:"
                                 "[0-9a-fA-F]{32,}"};
  std::string rest{image};
  if (rest.empty() || rest.size() > 512)
    return false;
  if (auto at = rest.find('@'); at != std::string::npos) {
    if (!std::regex_match(rest.substr(at + 1), digest))
      return false;
    rest.resize(at);
  }
  // A ':' after the last '/' starts the tag; one before it is a port.
  auto slash = rest.rfind('/');
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    if (!std::regex_match(rest.substr(colon + 1), tag))
      return false;
    rest.resize(colon);
  }
  if (rest.empty() || rest.size() > 255)
    return false;
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    auto end = rest.find('/', start);
    parts.push_back(rest.substr(start, end - start));
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  size_t first = 0;
  auto& head = parts.front();
  bool is_domain = parts.size() > 1 && (head.find_first_of(".:") != std::string::npos ||
                                        head == "localhost" ||
                                        std::any_of(head.begin(), head.end(), [](char c) {
                                          return c >= 'A' && c <= 'Z';
                                        }));
  if (is_domain) {
    if (!std::regex_match(head, domain))
      return false;
    first = 1;
  }
  for (size_t i = first; i < parts.size(); ++i)
    if (!std::regex_match(parts[i], component))
      return false;
  return true;
}

bool is_reserved_file_name(std::string_view name) {
  static const std::vector<std::string_view> reserved{
      "src",
      "venv",
      "venv.pex",
      "tony-executor",
      "tony-guard",
      "tony-am",
      "job.json",
      ".tony-bin",
      "stdout",
      "stderr",
      "executor.log",
      "launch_container.sh",
      "container_tokens",
      "tmp",
      "default_container_executor.sh",
      "default_container_executor_session.sh"};
  return std::find(reserved.begin(), reserved.end(), name) != reserved.end();
}

std::vector<unsupported_feature> unsupported_features(const job_spec& job) {
  std::vector<unsupported_feature> out;
  // YARN's Docker runtime takes an image, mounts and a network, nothing
  // like `docker run`'s own options.
  bool images = !job.docker_image.empty() ||
                std::any_of(job.tasks.begin(), job.tasks.end(),
                            [](auto& t) { return !t.docker_image.empty(); });
  if (images && job.cluster.backend == "yarn" && !job.docker_run_options.empty())
    out.push_back({"docker.run_options",
                   "[docker] run_options = [" + quote_text(job.docker_run_options[0]) +
                       (job.docker_run_options.size() > 1 ? ", ..." : "") +
                       "]: YARN's Docker runtime takes an image, mounts and a network, "
                       "no other `docker run` options; remove run_options to run on "
                       "YARN (they apply on the local backend)"});
  return out;
}

bool is_valid_task_type_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] < 'a' || name[0] > 'z')
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::vector<job_override> set_overrides(const std::vector<std::string>& items) {
  std::vector<job_override> out;
  for (auto& item : items)
    out.push_back({item, std::string{override_prefix} + item});
  return out;
}

load_result load_job_text_from(std::string_view text, const std::string& file_name,
                               const std::string& base_dir,
                               const std::vector<job_override>& overrides) {
  try {
    std::error_code ec;
    auto base = fs::absolute(base_dir.empty() ? fs::path{"."} : fs::path{base_dir}, ec);
    job_reader reader{file_name, base.lexically_normal().string()};
    return reader.load(text, overrides);
  } catch (const std::exception& e) {
    // Only allocation failures can get here; keep the no-throw promise.
    return std::vector<config_error>{
        {file_name, 0, 0, std::string{"cannot load the job: "} + e.what()}};
  }
}

load_result load_job_text(std::string_view text, const std::string& file_name,
                          const std::string& base_dir,
                          const std::vector<std::string>& overrides) {
  return load_job_text_from(text, file_name, base_dir, set_overrides(overrides));
}

load_result load_job_from(const std::string& path,
                          const std::vector<job_override>& overrides) {
  auto fail = [&](std::string msg) {
    return load_result{std::vector<config_error>{{path, 0, 0, std::move(msg)}}};
  };
  std::error_code ec;
  if (path.empty())
    return fail("no job file given");
  if (fs::is_directory(path, ec))
    return fail("is a directory; give the path of a job file (job.toml)");
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return fail(std::string{"cannot read the file: "} + std::strerror(errno));
  std::string text;
  // Read one byte past the limit so oversized files are told apart.
  text.resize(max_job_file_size + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad())
    return fail(std::string{"cannot read the file: "} + std::strerror(errno));
  auto abs = fs::absolute(fs::path{path}, ec);
  auto dir = abs.parent_path().string();
  try {
    job_reader reader{path, fs::path{dir}.lexically_normal().string()};
    return reader.load(text, overrides);
  } catch (const std::exception& e) {
    return fail(std::string{"cannot load the job: "} + e.what());
  }
}

load_result load_job(const std::string& path, const std::vector<std::string>& overrides) {
  return load_job_from(path, set_overrides(overrides));
}

} // namespace tony
