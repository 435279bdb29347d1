// The job.toml reader: loading, positions of errors, --set overrides, typed
// reads (see toml_reader.hpp).

#include "config/toml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "config/job_toml.hpp"

namespace tony::config_detail {

namespace fs = std::filesystem;

load_result job_reader::load(std::string_view text,
                             const std::vector<job_override>& overrides) {
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

bool job_reader::from_override(const toml::source_region& src) const {
  return src.path && *src.path != file_ && is_override_label(*src.path);
}

bool job_reader::is_override_label(const std::string& label) const {
  return std::find(override_labels_.begin(), override_labels_.end(), label) !=
         override_labels_.end();
}

// Position of an override's label on the command line, for ordering.
size_t job_reader::override_index(const std::string& label) const {
  auto it = std::find(override_labels_.begin(), override_labels_.end(), label);
  return static_cast<size_t>(it - override_labels_.begin());
}

void job_reader::error(const toml::source_region& src, std::string msg) {
  if (from_override(src))
    errors_.push_back({*src.path, 0, 0, std::move(msg)});
  else
    errors_.push_back({file_, static_cast<int>(src.begin.line),
                       static_cast<int>(src.begin.column), std::move(msg)});
}

load_result job_reader::finish() {
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

// Parses "KEY=VALUE" as the TOML line `KEY = VALUE`, or, when VALUE is not
// a TOML value, as `KEY = "VALUE"`, and merges it into `root`. The parsed
// nodes keep "--set KEY=VALUE" as their source, so later errors about them
// name the override.
void job_reader::apply_override(toml::table& root, const std::string& item,
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
bool job_reader::single_chain(const toml::table& t) {
  if (t.size() != 1)
    return false;
  auto& node = t.cbegin()->second;
  if (auto* sub = node.as_table(); sub != nullptr && !sub->is_inline())
    return single_chain(*sub);
  return true;
}

void job_reader::merge(toml::table& into, toml::table&& from, const std::string& label,
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

// Reports keys of `t` outside `known`, suggesting the closest one.
void job_reader::check_keys(const toml::table& t, const std::string& where,
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
      msg += "; known keys: " +
             join(std::vector<std::string>(known.begin(), known.end()), ", ");
    error(k.source(), std::move(msg));
  }
}

void job_reader::type_error(const toml::node& n, std::string_view key,
                            std::string_view expected) {
  error(n, "'" + std::string{key} + "' must be " + std::string{expected} + ", got " +
               type_name(n.type()));
}

std::optional<std::string> job_reader::read_string(const toml::table& t,
                                                   std::string_view key) {
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

std::optional<bool> job_reader::read_bool(const toml::table& t, std::string_view key) {
  auto* n = t.get(key);
  if (n == nullptr)
    return std::nullopt;
  if (auto* b = n->as_boolean())
    return b->get();
  type_error(*n, key, "a boolean (true or false)");
  return std::nullopt;
}

std::optional<int64_t> job_reader::read_int(const toml::table& t, std::string_view key,
                                            bounds range) {
  auto* n = t.get(key);
  if (n == nullptr)
    return std::nullopt;
  auto* i = n->as_integer();
  if (i == nullptr) {
    type_error(*n, key, "an integer");
    return std::nullopt;
  }
  auto v = i->get();
  if (!range.contains(v)) {
    error(*n, "'" + std::string{key} + "' must be between " + std::to_string(range.lo) +
                  " and " + std::to_string(range.hi) + ", got " + std::to_string(v));
    return std::nullopt;
  }
  return v;
}

std::optional<int64_t> job_reader::read_memory(const toml::table& t,
                                               std::string_view key) {
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
  // memory_mb_bounds: 1 MiB to 1t.
  if (mb < memory_mb_bounds.lo) {
    error(*n, "'" + k + "' must be positive, got " + shown);
    return std::nullopt;
  }
  if (mb > memory_mb_bounds.hi) {
    error(*n, "'" + k + "' must be at most 1t (" + std::to_string(memory_mb_bounds.hi) +
                  " MiB), got " + shown);
    return std::nullopt;
  }
  return mb;
}

std::optional<int64_t> job_reader::read_duration(const toml::table& t,
                                                 std::string_view key, bounds range) {
  auto* n = t.get(key);
  if (n == nullptr)
    return std::nullopt;
  std::string k{key};
  int64_t ms = 0;
  std::string shown;
  if (auto* i = n->as_integer()) {
    auto secs = i->get();
    ms = secs > range.hi / 1000    ? range.hi + 1
         : secs < -range.hi / 1000 ? -range.hi
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
  // Durations' bounds start at 0 ("none") or at 1 ms.
  if (ms < range.lo) {
    error(*n, "'" + k + "' must be positive, got " + shown);
    return std::nullopt;
  }
  if (ms > range.hi) {
    error(*n,
          "'" + k + "' must be at most " + format_duration(range.hi) + ", got " + shown);
    return std::nullopt;
  }
  return ms;
}

std::optional<std::vector<std::string>> job_reader::read_strings(const toml::table& t,
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
const toml::table* job_reader::read_table(const toml::table& t, std::string_view key,
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
std::map<std::string, std::string> job_reader::read_env(const toml::table& t,
                                                        const std::string& where) {
  std::map<std::string, std::string> out;
  for (auto&& [k, v] : t) {
    std::string name{k.str()};
    if (!is_valid_env_name(name)) {
      error(k.source(), "invalid environment variable name " + quote_name(name) + " in " +
                            where +
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

} // namespace tony::config_detail
