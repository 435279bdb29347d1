#pragma once

// The three YARN protocols tony speaks and where their servers are.

#include <string>
#include <vector>

#include "hadoop/configuration.hpp"
#include "hadoop/endpoint.hpp"
#include "hadoop/expected.hpp"

namespace tony::yarn {

/// Client -> ResourceManager (yarn.resourcemanager.address, port 8032).
constexpr const char* application_client_protocol =
    "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";

/// ApplicationMaster -> ResourceManager scheduler
/// (yarn.resourcemanager.scheduler.address, port 8030). Always TOKEN auth.
constexpr const char* application_master_protocol =
    "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB";

/// ApplicationMaster -> NodeManager (yarn.nodemanager.address). Always
/// TOKEN auth with the NMToken of that node.
constexpr const char* container_management_protocol =
    "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB";

/// The ResourceManager's Kerberos principal (e.g. rm/_HOST@EXAMPLE.COM).
constexpr const char* rm_principal_key = "yarn.resourcemanager.principal";

/// The GPU resource name in ResourceProto.resource_value_map.
constexpr const char* gpu_resource = "yarn.io/gpu";

/// The address in property `key` of `conf`, with errors naming the key and
/// the file that set it.
hadoop::expected<hadoop::endpoint> address_of(const hadoop::configuration& conf,
                                              const char* key);

/// yarn.resourcemanager.address.
hadoop::expected<hadoop::endpoint> rm_address(const hadoop::configuration& conf);

/// yarn.resourcemanager.scheduler.address.
hadoop::expected<hadoop::endpoint> scheduler_address(const hadoop::configuration& conf);

/// yarn.resourcemanager.webapp.address.
hadoop::expected<hadoop::endpoint> webapp_address(const hadoop::configuration& conf);

/// One ResourceManager of the cluster: its HA id (empty without HA) and the
/// address of one of its protocols.
struct rm_peer {
  std::string id;
  hadoop::endpoint address;
};

/// The ids of yarn.resourcemanager.ha.rm-ids when
/// yarn.resourcemanager.ha.enabled is true, else none.
std::vector<std::string> ha_rm_ids(const hadoop::configuration& conf);

/// Every ResourceManager serving the protocol whose address is in `key`
/// (e.g. yarn.resourcemanager.address): without HA the one in `key`; with HA
/// one per rm-id, from `key`.<id> or else yarn.resourcemanager.hostname.<id>
/// and `default_port` (Hadoop's HAUtil.getConfKeyForRMInstance). Errors name
/// the key and the file that set it.
hadoop::expected<std::vector<rm_peer>> rm_peers(const hadoop::configuration& conf,
                                                const char* key, uint16_t default_port);

/// The peers as one line: "host:port" without HA, "rm1=host:port,rm2=..."
/// with it (TONY_RM_SCHEDULER).
std::string format_rm_peers(const std::vector<rm_peer>& peers);

/// The inverse of format_rm_peers; `default_port` where a port is missing.
hadoop::expected<std::vector<rm_peer>> parse_rm_peers(const std::string& text,
                                                      uint16_t default_port);

/// The web proxies an AM's page may be reached through, as "scheme://host:port"
/// (Hadoop's WebAppUtils.getProxyHostsAndPortsForAmFilter with the scheme of
/// yarn.http.policy): yarn.web-proxy.address when set; else with RM HA the web
/// address of every RM id; else yarn.resourcemanager.webapp(.https).address.
/// As Hadoop's getResolvedAddress does, a wildcard or loopback host becomes
/// this machine's canonical name (local_canonical_hostname): the name the RM
/// itself puts in its proxy URLs, and the address its proxy connects from.
std::vector<std::string> web_proxies(const hadoop::configuration& conf);

/// Java's InetAddress.getLocalHost().getCanonicalHostName(): this machine's
/// name, resolved and resolved back ("localhost" where the host name maps to
/// 127.0.0.1 after localhost in /etc/hosts).
std::string local_canonical_hostname();

} // namespace tony::yarn
