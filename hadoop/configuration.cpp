#include "hadoop/configuration.hpp"

#include "base/text.hpp"
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include <pugixml.hpp>

namespace tony::hadoop {

namespace {

// Hadoop's own limit on nested substitutions (Configuration.MAX_SUBST).
constexpr int max_substitutions = 20;

struct default_property {
  const char* key;
  const char* value;
};

// Only what tony reads; everything else comes from the site files.
constexpr default_property defaults[] = {
    {"fs.defaultFS", "file:///"},
    {"hadoop.security.authentication", "simple"},
    {"hadoop.rpc.protection", "authentication"},
    {"yarn.resourcemanager.hostname", "0.0.0.0"},
    {"yarn.resourcemanager.address", "${yarn.resourcemanager.hostname}:8032"},
    {"yarn.resourcemanager.scheduler.address", "${yarn.resourcemanager.hostname}:8030"},
    {"yarn.resourcemanager.webapp.address", "${yarn.resourcemanager.hostname}:8088"},
    {"yarn.nodemanager.hostname", "0.0.0.0"},
    {"yarn.nodemanager.address", "${yarn.nodemanager.hostname}:0"},
};

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// pugixml reports byte offsets; people read lines.
std::string position(std::string_view text, ptrdiff_t offset) {
  if (offset < 0)
    offset = 0;
  auto end = std::min(static_cast<size_t>(offset), text.size());
  size_t line = 1;
  size_t col = 1;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

} // namespace

const std::vector<std::string>& configuration::site_files() {
  static const std::vector<std::string> files{"core-site.xml", "yarn-site.xml"};
  return files;
}

configuration::configuration() {
  for (auto& d : defaults)
    props_[d.key] = entry{d.value, "default", false};
}

expected<configuration> configuration::load_dir(const std::string& dir) {
  if (!is_directory(dir))
    return error{error_code::io, "Hadoop configuration directory " + dir +
                                     " does not exist (check HADOOP_CONF_DIR)"};
  configuration result;
  for (auto& name : site_files()) {
    auto path = dir + "/" + name;
    if (!is_file(path))
      continue;
    if (auto ok = result.add_file(path); !ok)
      return ok.error();
  }
  result.sources_.push_back(dir);
  return result;
}

expected<configuration> configuration::from_environment() {
  for (auto* var : {"HADOOP_CONF_DIR", "YARN_CONF_DIR"}) {
    auto* dir = std::getenv(var);
    if (dir != nullptr && *dir != '\0') {
      auto result = load_dir(dir);
      if (!result)
        return result.error().with_context(std::string{var} + "=" + dir);
      return result;
    }
  }
  return configuration{};
}

expected<void> configuration::add_hdfs_site() {
  if (sources_.empty())
    return {};
  auto path = sources_.front() + "/hdfs-site.xml";
  return is_file(path) ? add_file(path) : expected<void>{};
}

expected<void> configuration::add_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return error{error_code::io, "cannot read Hadoop configuration file " + path};
  std::ostringstream buf;
  buf << in.rdbuf();
  return add_xml(buf.str(), path);
}

expected<void> configuration::add_xml(std::string_view text, const std::string& origin) {
  pugi::xml_document doc;
  auto parsed = doc.load_buffer(text.data(), text.size(),
                                pugi::parse_default | pugi::parse_ws_pcdata_single);
  if (!parsed)
    return error{error_code::invalid_input,
                 origin + ":" + position(text, parsed.offset) +
                     ": malformed XML: " + parsed.description()};
  auto root = doc.document_element();
  if (std::string_view{root.name()} != "configuration")
    return error{error_code::invalid_input, origin + ": root element is <" +
                                                std::string{root.name()} +
                                                ">, expected <configuration>"};
  for (auto prop : root.children("property")) {
    // offset_debug() points at the element name; people look for its '<'.
    auto where = origin + ":" + position(text, prop.offset_debug() - 1);
    std::string name = prop.attribute("name").value();
    std::string value = prop.attribute("value").value();
    bool has_value = !prop.attribute("value").empty();
    bool final = std::string_view{prop.attribute("final").value()} == "true";
    if (auto n = prop.child("name"))
      name = n.child_value();
    if (auto v = prop.child("value")) {
      value = v.child_value();
      has_value = true;
    }
    if (auto f = prop.child("final"))
      final = base::trim(f.child_value()) == "true";
    name = base::trim(name);
    if (name.empty())
      return error{error_code::invalid_input, where + ": <property> without a <name>"};
    if (!has_value)
      continue; // Hadoop ignores a property without a value.
    put(name, base::trim(value), where, final);
  }
  return {};
}

void configuration::put(const std::string& key, std::string value, std::string origin,
                        bool final) {
  auto i = props_.find(key);
  if (i != props_.end() && i->second.final)
    return;
  props_[key] = entry{std::move(value), std::move(origin), final};
}

void configuration::set(const std::string& key, std::string value) {
  put(key, std::move(value), "set()", false);
}

const std::string* configuration::raw(const std::string& key) const {
  auto i = props_.find(key);
  return i == props_.end() ? nullptr : &i->second.value;
}

std::vector<std::string> configuration::keys() const {
  std::vector<std::string> out;
  for (auto& [key, e] : props_)
    out.push_back(key);
  return out;
}

std::string configuration::origin(const std::string& key) const {
  auto i = props_.find(key);
  return i == props_.end() ? std::string{} : i->second.origin;
}

expected<std::string> configuration::get(const std::string& key) const {
  auto value = raw(key);
  if (value == nullptr)
    return error{error_code::not_found, "property " + key + " is not set"};
  auto result = expand(*value);
  if (!result)
    return result.error().with_context(key + " (" + origin(key) + ")");
  return result;
}

std::string configuration::get_or(const std::string& key,
                                  const std::string& fallback) const {
  auto result = get(key);
  return result ? *result : fallback;
}

expected<std::string> configuration::expand(const std::string& text) const {
  std::string current = text;
  for (int round = 0; round < max_substitutions; ++round) {
    // Find the first ${name} whose name has no '$', '}' or space, as Hadoop does.
    size_t start = 0;
    size_t open = std::string::npos;
    size_t close = std::string::npos;
    while ((open = current.find("${", start)) != std::string::npos) {
      close = open + 2;
      while (close < current.size() && current[close] != '}' && current[close] != '$' &&
             current[close] != ' ')
        ++close;
      if (close < current.size() && current[close] == '}' && close > open + 2)
        break;
      start = open + 2;
      open = std::string::npos;
    }
    if (open == std::string::npos)
      return current;
    auto name = current.substr(open + 2, close - open - 2);
    std::optional<std::string> value;
    if (name.compare(0, 4, "env.") == 0) {
      auto var = name.substr(4);
      std::optional<std::string> fallback;
      auto dash = var.find(":-");
      bool empty_counts = false;
      if (dash != std::string::npos) {
        fallback = var.substr(dash + 2);
        var = var.substr(0, dash);
        empty_counts = true;
      } else if ((dash = var.find('-')) != std::string::npos) {
        fallback = var.substr(dash + 1);
        var = var.substr(0, dash);
      }
      auto* env = std::getenv(var.c_str());
      if (env != nullptr && !(empty_counts && *env == '\0'))
        value = env;
      else
        value = fallback;
    } else if (auto* r = raw(name)) {
      value = *r;
    }
    if (!value) {
      // Unresolvable references stay as they are (Hadoop's behaviour).
      return current;
    }
    if (*value == "${" + name + "}")
      return current;
    current = current.substr(0, open) + *value + current.substr(close + 1);
  }
  return error{error_code::invalid_input,
               "variable substitution depth too large (more than " +
                   std::to_string(max_substitutions) + " in '" + text +
                   "'; is there a cycle?)"};
}

} // namespace tony::hadoop
