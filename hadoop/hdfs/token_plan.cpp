#include "hadoop/hdfs/token_plan.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "hadoop/client_security.hpp"
#include "hadoop/hdfs/namenode_client.hpp"

namespace tony::hdfs {

namespace {

hadoop::error invalid(std::string text) {
  return hadoop::error{hadoop::error_code::invalid_input, std::move(text)};
}

// "hdfs://host[:port][/path]" -> its RPC address (8020 by default).
hadoop::expected<hadoop::endpoint> namenode_address(const std::string& uri) {
  if (uri.rfind("hdfs://", 0) != 0)
    return invalid(uri + " is not an hdfs:// URI");
  auto authority = uri.substr(7, uri.find('/', 7) - 7);
  if (authority.empty())
    return invalid(uri + " names no NameNode host");
  auto address = hadoop::parse_endpoint(authority, 8020);
  if (!address)
    return invalid(uri + ": " + address.error().message());
  return *address;
}

hadoop::expected<std::string> renewer_of(const hadoop::configuration& conf) {
  const std::string key = "yarn.resourcemanager.principal";
  auto principal = conf.get_or(key, "");
  if (principal.empty())
    return invalid(key + " is not set in the client configuration: the ResourceManager "
                         "renews the job's HDFS delegation tokens and must be named as "
                         "their renewer (copy the cluster's yarn-site.xml)");
  auto rm = hadoop::parse_endpoint(conf.get_or("yarn.resourcemanager.address", ""), 8032);
  if (!rm)
    return invalid("yarn.resourcemanager.address (" +
                   conf.origin("yarn.resourcemanager.address") +
                   "): " + rm.error().message());
  return hadoop::substitute_host(principal, rm->host);
}

// An HA nameservice is a logical name, not a host: its tokens are filed
// under "ha-hdfs:<name>" and fetched from the active NameNode, which tony
// does not resolve (yet).
bool is_nameservice(const hadoop::configuration& conf, const hadoop::endpoint& address) {
  auto names = "," + conf.get_or("dfs.nameservices", "") + ",";
  return names.find("," + address.host + ",") != std::string::npos;
}

} // namespace

hadoop::expected<token_plan> plan_tokens(const hadoop::configuration& conf,
                                         const std::vector<std::string>& file_systems) {
  token_plan plan;
  auto renewer = renewer_of(conf);
  if (!renewer)
    return renewer.error();
  plan.renewer = *renewer;
  auto security = hadoop::client_security_from(conf);
  if (!security)
    return security.error();
  plan.protection = security->protection;
  std::vector<std::string> uris;
  auto default_fs = conf.get_or("fs.defaultFS", "file:///");
  if (default_fs.rfind("hdfs://", 0) == 0)
    uris.push_back(default_fs);
  uris.insert(uris.end(), file_systems.begin(), file_systems.end());
  for (auto& uri : uris) {
    auto address = namenode_address(uri);
    if (!address)
      return address.error();
    if (is_nameservice(conf, *address))
      return invalid(uri + " names the HA nameservice " + address->host +
                     " (dfs.nameservices): tony gets delegation tokens from a NameNode "
                     "address only; name the active NameNode as hdfs://host:port");
    auto same = [&](const namenode_target& x) { return x.address == *address; };
    if (std::any_of(plan.namenodes.begin(), plan.namenodes.end(), same))
      continue;
    auto name = uri;
    while (name.size() > 7 && name.back() == '/')
      name.pop_back();
    plan.namenodes.push_back(
        {name, *address, hadoop::service_from(conf, namenode_principal_key)});
  }
  return plan;
}

hadoop::expected<std::vector<obtained_token>>
obtain_tokens(const std::shared_ptr<hadoop::ipc_client>& ipc, const token_plan& plan,
              const std::shared_ptr<const hadoop::kerberos_credentials>& kerberos,
              hadoop::deadline until, const std::string& proxy_user) {
  std::vector<obtained_token> result;
  for (auto& nn : plan.namenodes) {
    namenode_client client{ipc,      nn.uri,    nn.address, nn.principal, plan.protection,
                           kerberos, proxy_user};
    auto token = client.get_delegation_token(plan.renewer, until);
    if (!token)
      return token.error().with_context("cannot get an HDFS delegation token from " +
                                        nn.uri);
    auto identity = parse_identifier(token->identifier);
    if (!identity)
      return identity.error().with_context("the delegation token of " + nn.uri);
    result.push_back({nn.uri, std::move(*token), std::move(*identity)});
  }
  return result;
}

hadoop::credentials to_credentials(const std::vector<obtained_token>& tokens) {
  hadoop::credentials creds;
  for (auto& t : tokens)
    creds.add_token(t.token.service, t.token);
  return creds;
}

hadoop::expected<std::chrono::milliseconds>
renewal_interval(const std::shared_ptr<hadoop::ipc_client>& ipc, const token_plan& plan,
                 const std::shared_ptr<const hadoop::kerberos_credentials>& kerberos,
                 hadoop::deadline until) {
  if (plan.namenodes.empty())
    return invalid("no NameNode to measure a token's renew interval on");
  auto& nn = plan.namenodes.front();
  namenode_client client{ipc,          nn.uri,          nn.address,
                         nn.principal, plan.protection, kerberos};
  auto probe = client.get_delegation_token(kerberos->principal(), until);
  if (!probe)
    return probe.error().with_context("cannot get a probe token from " + nn.uri);
  auto identity = parse_identifier(probe->identifier);
  if (!identity)
    return identity.error().with_context("the probe token of " + nn.uri);
  auto expiry = client.renew_delegation_token(*probe, until);
  // The probe has served either way; a cancel that fails leaves a token
  // that expires on its own.
  (void)client.cancel_delegation_token(*probe, until);
  if (!expiry)
    return expiry.error().with_context("cannot renew a probe token at " + nn.uri);
  return std::chrono::milliseconds{
      std::max<int64_t>(*expiry - identity->issue_date_ms, 0)};
}

std::chrono::milliseconds refresh_delay(const std::vector<obtained_token>& tokens,
                                        std::chrono::milliseconds interval,
                                        int64_t now_ms, double ratio,
                                        std::chrono::milliseconds floor) {
  int64_t first_expiry = 0;
  for (auto& t : tokens) {
    auto expiry =
        std::min(t.identity.issue_date_ms + interval.count(), t.identity.max_date_ms);
    if (first_expiry == 0 || expiry < first_expiry)
      first_expiry = expiry;
  }
  auto delay = static_cast<int64_t>(static_cast<double>(first_expiry - now_ms) * ratio);
  return std::max(std::chrono::milliseconds{delay}, floor);
}

std::string to_json(const renewal_plan& x) {
  auto namenodes = nlohmann::json::array();
  for (auto& nn : x.tokens.namenodes)
    namenodes.push_back({{"uri", nn.uri},
                         {"host", nn.address.host},
                         {"port", nn.address.port},
                         {"principal_key", nn.principal.key},
                         {"principal", nn.principal.principal},
                         {"pattern", nn.principal.pattern}});
  nlohmann::json j{{"principal", x.principal},
                   {"keytab", x.keytab},
                   {"renewer", x.tokens.renewer},
                   {"protection", x.tokens.protection.bits()},
                   {"namenodes", namenodes}};
  return j.dump();
}

hadoop::expected<renewal_plan> renewal_plan_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object())
    return invalid("the token renewal plan is not a JSON object");
  auto str = [&](const nlohmann::json& o, const char* key) {
    auto i = o.find(key);
    return i != o.end() && i->is_string() ? i->get<std::string>() : std::string{};
  };
  renewal_plan plan;
  plan.principal = str(j, "principal");
  plan.keytab = str(j, "keytab");
  plan.tokens.renewer = str(j, "renewer");
  if (plan.principal.empty() || plan.keytab.empty() || plan.tokens.renewer.empty())
    return invalid("the token renewal plan lacks its principal, keytab or renewer");
  auto bits = j.value("protection", 7);
  if (bits < 1 || bits > 7)
    return invalid("the token renewal plan's protection " + std::to_string(bits) +
                   " is not a set of QOPs");
  plan.tokens.protection = hadoop::qop_set{static_cast<uint8_t>(bits)};
  auto nns = j.find("namenodes");
  if (nns == j.end() || !nns->is_array() || nns->empty())
    return invalid("the token renewal plan names no NameNode");
  for (auto& nn : *nns) {
    if (!nn.is_object())
      return invalid("a NameNode of the token renewal plan is not an object");
    namenode_target target;
    target.uri = str(nn, "uri");
    target.address.host = str(nn, "host");
    auto port = nn.value("port", 0);
    if (target.uri.empty() || target.address.host.empty() || port <= 0 || port > 65535)
      return invalid("a NameNode of the token renewal plan lacks its uri, host or port");
    target.address.port = static_cast<uint16_t>(port);
    target.principal = {str(nn, "principal_key"), str(nn, "principal"),
                        str(nn, "pattern")};
    plan.tokens.namenodes.push_back(std::move(target));
  }
  return plan;
}

std::vector<hadoop::token> hdfs_tokens(const hadoop::credentials& creds) {
  return creds.find_all(delegation_token_kind);
}

} // namespace tony::hdfs
