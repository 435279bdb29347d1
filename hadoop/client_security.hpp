#pragma once

// How a client authenticates, as the cluster's client configuration
// (core-site.xml of HADOOP_CONF_DIR) says, with Hadoop's keys and defaults:
//
//   hadoop.security.authentication               simple (default) | kerberos
//   hadoop.rpc.protection                        the QOPs accepted; unset:
//                                                whatever the server asks
//   ipc.client.fallback-to-simple-auth-allowed   false: a Kerberos client
//                                                refuses a SIMPLE server

#include "hadoop/configuration.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/sasl_qop.hpp"

namespace tony::hadoop {

struct client_security {
  bool kerberos = false;
  qop_set protection = qop_set::all();
  bool fallback_to_simple = false;
};

/// Reads the three keys; invalid_input (naming the key and the file that
/// set it) for values Hadoop would reject.
expected<client_security> client_security_from(const configuration& conf);

} // namespace tony::hadoop
