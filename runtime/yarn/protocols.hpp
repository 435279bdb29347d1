#pragma once

// The three YARN protocols tony speaks and where their servers are.

#include <string>
#include <vector>

#include "runtime/hadoop/configuration.hpp"
#include "runtime/hadoop/endpoint.hpp"
#include "runtime/hadoop/expected.hpp"

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
