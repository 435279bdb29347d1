#include "runtime/yarn/am_env.hpp"

#include <nlohmann/json.hpp>

#include "messages/error.hpp"

namespace tony {

expected<std::vector<local_resource>> parse_resources(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array())
    return make_error(errc::invalid_config,
                      std::string{yarn_env::executor_resources} +
                          " is not a JSON list of resources; was the AM started by "
                          "tony-submit?");
  std::vector<local_resource> result;
  for (auto& r : j) {
    if (!r.is_object())
      continue;
    local_resource res;
    res.name = r.value("name", "");
    res.url = r.value("url", "");
    res.size = r.value("size", int64_t{0});
    res.timestamp = r.value("timestamp", int64_t{0});
    res.archive = r.value("archive", false);
    res.visibility = r.value("visibility", std::string{"APPLICATION"});
    result.push_back(std::move(res));
  }
  return result;
}

std::vector<yarn::node_place> parse_nodes(const std::string& text) {
  std::vector<yarn::node_place> result;
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    auto item = text.substr(start, end - start);
    auto eq = item.find('=');
    if (eq != std::string::npos && eq > 0)
      result.push_back({item.substr(0, eq), item.substr(eq + 1)});
    start = end + 1;
  }
  return result;
}

std::string escape_env_value(const std::string& value) {
  std::string result;
  result.reserve(value.size());
  for (auto ch : value) {
    if (ch == '\\' || ch == '"' || ch == '$' || ch == '`')
      result += '\\';
    result += ch;
  }
  return result;
}

std::map<std::string, std::string> escape_env(std::map<std::string, std::string> env) {
  for (auto& [k, v] : env)
    v = escape_env_value(v);
  return env;
}

namespace {

nlohmann::json resources_json(const std::vector<local_resource>& resources) {
  auto j = nlohmann::json::array();
  for (auto& r : resources)
    j.push_back({{"name", r.name},
                 {"url", r.url},
                 {"size", r.size},
                 {"timestamp", r.timestamp},
                 {"archive", r.archive},
                 {"visibility", r.visibility}});
  return j;
}

} // namespace

std::string resources_to_json(const std::vector<local_resource>& resources) {
  return resources_json(resources).dump();
}

std::string type_resources_to_json(
    const std::map<std::string, std::vector<local_resource>>& by_type) {
  auto j = nlohmann::json::object();
  for (auto& [type, resources] : by_type)
    j[type] = resources_json(resources);
  return j.dump();
}

expected<std::map<std::string, std::vector<local_resource>>>
parse_type_resources(const std::string& text) {
  std::map<std::string, std::vector<local_resource>> out;
  if (text.empty())
    return out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object())
    return make_error(errc::invalid_config,
                      std::string{yarn_env::type_resources} +
                          " is not a JSON object of resource lists");
  for (auto& [type, list] : j.items()) {
    auto resources = parse_resources(list.dump());
    if (!resources)
      return resources.error();
    out.emplace(type, std::move(*resources));
  }
  return out;
}

} // namespace tony
