#pragma once

// HDFS HA nameservices as a client configuration names them (Hadoop's
// DFSUtil): an hdfs:// authority is a nameservice, not a host, when it has
// no port and is one of dfs.nameservices; its NameNodes are the ids of
// dfs.ha.namenodes.<ns>, each with its addresses under
// dfs.namenode.<kind>.<ns>.<id>. The one reading of these keys for the
// RPC clients (hadoop/hdfs/token_plan.hpp), WebHDFS (hadoop/webhdfs.hpp)
// and tony-submit's shipping of hdfs:// files (submit/shipping.hpp); what
// a missing key means to the user is each caller's to say.

#include <optional>
#include <string>
#include <vector>

#include "hadoop/configuration.hpp"

namespace tony::hdfs {

/// True when `authority` (the host[:port] of an hdfs:// URI) names an HA
/// nameservice: it has no port and is one of the comma-separated names of
/// dfs.nameservices (spaces ignored). With a port it is a host, as in
/// Hadoop ("prod:8020" is a host called prod).
bool is_nameservice(const hadoop::configuration& conf, const std::string& authority);

/// One NameNode of a nameservice.
struct ha_namenode {
  std::string id;      // as dfs.ha.namenodes.<ns> lists it
  std::string key;     // dfs.namenode.<kind>.<ns>.<id>
  std::string address; // its value as written (no default port, 0.0.0.0 kept)
};

/// A key a nameservice's NameNodes need that is unset (or empty).
struct unset_key {
  std::string key; // dfs.ha.namenodes.<ns>, or dfs.namenode.<kind>.<ns>.<id>
  std::string id;  // the NameNode `key` is of; empty for dfs.ha.namenodes.<ns>
  /// `key`, or for a NameNode's key "<key> (NameNode <id>'s <what>)".
  std::string named(const std::string& what) const;
};

/// What the configuration says of a nameservice's NameNodes: all of them,
/// or the first key that is missing.
struct nameservice_namenodes {
  std::vector<ha_namenode> namenodes; // in dfs.ha.namenodes.<ns> order
  std::optional<unset_key> unset;     // set: `namenodes` is not to be used
};

/// The NameNodes of nameservice `ns` with their dfs.namenode.<kind>.<ns>.<id>
/// (`kind`: "rpc-address", "http-address" or "https-address"). The ids are
/// dfs.ha.namenodes.<ns>, comma-separated, spaces ignored, empty ones
/// skipped; none at all is dfs.ha.namenodes.<ns> missing, and the first
/// NameNode whose key is unset or empty is its key missing.
nameservice_namenodes namenodes_of(const hadoop::configuration& conf,
                                   const std::string& ns, const std::string& kind);

} // namespace tony::hdfs
