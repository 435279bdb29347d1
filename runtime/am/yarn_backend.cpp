#include <cstdlib>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "messages/error.hpp"
#include "runtime/am/backend.hpp"
#include "runtime/am/yarn_env.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/hadoop/credentials.hpp"
#include "runtime/hadoop/endpoint.hpp"
#include "runtime/hadoop/ipc_client.hpp"
#include "runtime/process/process.hpp"
#include "runtime/staging/stager.hpp"
#include "runtime/yarn/amrm_client.hpp"
#include "runtime/yarn/nm_client.hpp"
#include "runtime/yarn/yarn_nm_actor.hpp"
#include "runtime/yarn/yarn_rm_actor.hpp"

namespace tony {

caf::expected<am_backend> make_yarn_backend(caf::actor_system& sys, const job_spec& job,
                                            const am_endpoint& am) {
  auto env = process::current_environment();
  auto get = [&](const char* key) {
    auto i = env.find(key);
    return i == env.end() ? std::string{} : i->second;
  };
  auto creds = hadoop::credentials_from_environment();
  if (!creds)
    return make_error(errc::infrastructure,
                      "cannot read the container's tokens: " + creds.error().message());
  auto token = yarn::amrm_client::find_amrm_token(*creds);
  if (!token)
    return make_error(errc::infrastructure, token.error().message());
  auto scheduler = hadoop::parse_endpoint(get(yarn_env::scheduler), 8030);
  if (!scheduler)
    return make_error(errc::invalid_config, std::string{yarn_env::scheduler} +
                                                " is not host:port ('" +
                                                get(yarn_env::scheduler) +
                                                "'): " + scheduler.error().message());
  auto resources = parse_resources(get(yarn_env::executor_resources));
  if (!resources)
    return resources.error();
  auto type_resources = parse_type_resources(get(yarn_env::type_resources));
  if (!type_resources)
    return type_resources.error();
  auto ipc = std::make_shared<hadoop::ipc_client>();
  auto tokens = std::make_shared<yarn::nm_token_cache>();
  auto amrm = std::make_shared<yarn::amrm_client>(ipc, *scheduler, *token, tokens);
  amrm->set_places(parse_nodes(get(yarn_env::nodes)));
  auto nm = std::make_shared<yarn::nm_client>(ipc, tokens);
  std::chrono::milliseconds call_timeout{8000};
  am_backend result;
  result.rm = yarn::spawn_yarn_rm(sys, amrm, call_timeout);
  result.nm = yarn::spawn_yarn_nm(sys, nm, call_timeout);
  auto executor_resources = *resources;
  auto install_dir = get(yarn_env::install_dir);
  auto executor = install_dir.empty() ? std::string{"./tony-executor"}
                                      : install_dir + "/tony-executor";
  result.make_launch = [job, am, executor_resources, by_type = *type_resources, executor](
                           const task_id& task, int32_t attempt, const container& c) {
    launch_spec spec;
    spec.target = c;
    // The job secret travels in the container's tokens, not in its launch
    // script (runtime/gate/job_secret.hpp).
    auto without_secret = am;
    without_secret.secret.clear();
    spec.env = escape_env(executor_env(job, task, attempt, without_secret));
    spec.tokens = gate::credentials_with_secret(am.secret);
    spec.command = {"exec", executor, "1><LOG_DIR>/executor.log", "2>&1"};
    spec.resources = executor_resources;
    if (auto own = by_type.find(task.type); own != by_type.end())
      spec.resources.insert(spec.resources.end(), own->second.begin(), own->second.end());
    return spec;
  };
  auto user = get("USER");
  result.log_dir_of = [user](const container& c) {
    if (c.http_address.empty())
      return std::string{};
    return "http://" + c.http_address + "/node/containerlogs/" + c.id + "/" + user;
  };
  auto staging_uri = get(yarn_env::staging_uri);
  auto webhdfs = get(yarn_env::webhdfs_address);
  result.on_end = [staging_uri, webhdfs, user](const job_status&) {
    if (staging_uri.empty())
      return;
    auto stager = staging::make_stager(staging_uri, webhdfs, user);
    if (stager) {
      if (auto ok = (*stager)->remove_all(); !ok)
        spdlog::warn("tony-am: could not remove the staging dir {}: {}", staging_uri,
                     describe(ok.error()));
    }
  };
  result.keep_alive = ipc;
  return result;
}

caf::expected<std::vector<local_resource>> parse_resources(const std::string& text) {
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

caf::expected<std::map<std::string, std::vector<local_resource>>>
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
