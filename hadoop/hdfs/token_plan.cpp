#include "hadoop/hdfs/token_plan.hpp"

#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "hadoop/client_security.hpp"
#include "hadoop/hdfs/namenode_client.hpp"
#include "hadoop/hdfs/nameservice.hpp"
#include "hadoop/webhdfs.hpp"

namespace tony::hdfs {

namespace {

hadoop::error invalid(std::string text) {
  return hadoop::error{hadoop::error_code::invalid_input, std::move(text)};
}

// "hdfs://host[:port][/path]" -> "host[:port]".
std::string authority_of(const std::string& uri) {
  return uri.substr(7, uri.find('/', 7) - 7);
}

// "hdfs://host[:port][/path]" -> its RPC address (8020 by default).
hadoop::expected<hadoop::endpoint> namenode_address(const std::string& uri) {
  if (uri.rfind("hdfs://", 0) != 0)
    return invalid(uri + " is not an hdfs:// URI");
  auto authority = authority_of(uri);
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

// The RPC addresses of a nameservice's NameNodes, in dfs.ha.namenodes order.
hadoop::expected<std::vector<hadoop::endpoint>>
nameservice_addresses(const hadoop::configuration& conf, const std::string& ns) {
  auto found = namenodes_of(conf, ns, "rpc-address");
  if (found.unset)
    return invalid("hdfs://" + ns + " is an HA nameservice but " +
                   found.unset->named("RPC address") +
                   " is not set in the client configuration: copy the cluster's "
                   "hdfs-site.xml");
  std::vector<hadoop::endpoint> out;
  for (auto& nn : found.namenodes) {
    auto address = hadoop::parse_endpoint(nn.address, 8020);
    if (!address)
      return invalid(nn.key + ": " + address.error().message());
    out.push_back(*address);
  }
  return out;
}

// `call` on each NameNode of `nn` in turn (one, or a nameservice's) until
// one answers as the active: a standby (StandbyException) or a NameNode
// that cannot be reached within 1 s is passed over, as Hadoop's failover
// proxies fail over rather than retry; anything else ends it. As WebHDFS
// calls do (webhdfs::failover_rounds), a nameservice gets rounds with
// pauses from 200 ms doubling to 2 s between them, which outlast an
// automatic failover, until `until`; the error names every NameNode and
// what it said last.
template <class T, class Call>
hadoop::expected<T>
at_active(const std::shared_ptr<hadoop::ipc_client>& ipc, const namenode_target& nn,
          hadoop::qop_set protection,
          const std::shared_ptr<const hadoop::kerberos_credentials>& kerberos,
          const std::string& proxy_user, hadoop::deadline until, Call call) {
  if (nn.nameservice.empty()) {
    namenode_client client{ipc,        nn.uri,   nn.address, nn.principal,
                           protection, kerberos, proxy_user};
    return call(client);
  }
  std::vector<std::string> said(nn.ha_addresses.size(), "not tried before the deadline");
  auto pause = std::chrono::milliseconds{200};
  int rounds = 0;
  for (; rounds < webhdfs::failover_rounds; ++rounds) {
    if (rounds > 0) {
      if (hadoop::remaining(until) <= pause)
        break;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds{2000});
    }
    for (size_t i = 0; i < nn.ha_addresses.size(); ++i) {
      if (hadoop::expired(until))
        break;
      namenode_client client{ipc,        nn.uri,   nn.ha_addresses[i], nn.principal,
                             protection, kerberos, proxy_user};
      client.set_connect_timeout(std::chrono::seconds(1));
      auto result = call(client);
      if (result)
        return result;
      auto& e = result.error();
      bool standby = e.is_remote("StandbyException") || e.is_remote("RetriableException");
      if (!standby && e.code() != hadoop::error_code::connect_failed &&
          e.code() != hadoop::error_code::connection_closed &&
          e.code() != hadoop::error_code::timeout)
        return result;
      // A call cut short by the deadline says nothing of the NameNode.
      if (e.code() == hadoop::error_code::timeout && hadoop::expired(until))
        break;
      said[i] = standby ? std::string{"standby"} : e.message();
    }
  }
  std::string text = "no NameNode answered as active (" + std::to_string(rounds) +
                     (rounds == 1 ? " round" : " rounds") + "): ";
  for (size_t i = 0; i < said.size(); ++i)
    text += (i ? "; " : "") + nn.ha_addresses[i].host + ":" +
            std::to_string(nn.ha_addresses[i].port) + ": " + said[i];
  return hadoop::error{hadoop::error_code::connect_failed, text};
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
    namenode_target target;
    if (is_nameservice(conf, authority_of(uri))) {
      auto members = nameservice_addresses(conf, address->host);
      if (!members)
        return members.error();
      target.nameservice = address->host;
      target.ha_addresses = *members;
      *address = members->front();
    }
    auto same = [&](const namenode_target& x) {
      return x.address == *address && x.nameservice == target.nameservice;
    };
    if (std::any_of(plan.namenodes.begin(), plan.namenodes.end(), same))
      continue;
    target.uri = uri;
    while (target.uri.size() > 7 && target.uri.back() == '/')
      target.uri.pop_back();
    target.address = *address;
    target.principal = hadoop::service_from(conf, namenode_principal_key);
    plan.namenodes.push_back(std::move(target));
  }
  return plan;
}

hadoop::expected<std::vector<obtained_token>>
obtain_tokens(const std::shared_ptr<hadoop::ipc_client>& ipc, const token_plan& plan,
              const std::shared_ptr<const hadoop::kerberos_credentials>& kerberos,
              hadoop::deadline until, const std::string& proxy_user) {
  std::vector<obtained_token> result;
  for (auto& nn : plan.namenodes) {
    auto token = at_active<hadoop::token>(ipc, nn, plan.protection, kerberos, proxy_user,
                                          until, [&](namenode_client& client) {
                                            return client.get_delegation_token(
                                                plan.renewer, until);
                                          });
    if (!token)
      return token.error().with_context("cannot get an HDFS delegation token from " +
                                        nn.uri);
    if (!nn.nameservice.empty())
      token->service = ha_token_service(nn.nameservice);
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
  // Get, renew and cancel on the same (active) NameNode.
  return at_active<std::chrono::milliseconds>(
      ipc, nn, plan.protection, kerberos, {}, until,
      [&](namenode_client& client) -> hadoop::expected<std::chrono::milliseconds> {
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
      });
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

namespace {

nlohmann::json ha_addresses_json(const std::vector<hadoop::endpoint>& xs) {
  auto out = nlohmann::json::array();
  for (auto& a : xs)
    out.push_back(a.host + ":" + std::to_string(a.port));
  return out;
}

} // namespace

std::string to_json(const renewal_plan& x) {
  auto namenodes = nlohmann::json::array();
  for (auto& nn : x.tokens.namenodes)
    namenodes.push_back({{"uri", nn.uri},
                         {"host", nn.address.host},
                         {"port", nn.address.port},
                         {"principal_key", nn.principal.key},
                         {"principal", nn.principal.principal},
                         {"pattern", nn.principal.pattern},
                         {"nameservice", nn.nameservice},
                         {"ha_addresses", ha_addresses_json(nn.ha_addresses)}});
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
    target.nameservice = str(nn, "nameservice");
    if (auto has = nn.find("ha_addresses"); has != nn.end() && has->is_array())
      for (auto& a : *has) {
        auto at = a.is_string()
                      ? hadoop::parse_endpoint(a.get<std::string>(), 8020)
                      : hadoop::expected<hadoop::endpoint>{invalid("not a string")};
        if (!at)
          return invalid("a NameNode address of the token renewal plan is not host:port");
        target.ha_addresses.push_back(*at);
      }
    if (!target.nameservice.empty() && target.ha_addresses.empty())
      return invalid("the nameservice " + target.nameservice +
                     " of the token renewal plan lists no NameNode");
    plan.tokens.namenodes.push_back(std::move(target));
  }
  return plan;
}

std::vector<hadoop::token> hdfs_tokens(const hadoop::credentials& creds) {
  return creds.find_all(delegation_token_kind);
}

} // namespace tony::hdfs
