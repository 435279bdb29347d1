#pragma once

// How tony-history meets a secure cluster, from its Hadoop configuration
// ($HADOOP_CONF_DIR) and the flags that override it (doc/tracking.md,
// "On a secure cluster"):
//
//   reading hdfs:// history dirs   hadoop.security.authentication=kerberos:
//                                  the user's Kerberos login (ticket cache,
//                                  or --principal/--keytab), SPNEGO to
//                                  WebHDFS, as tony-submit does
//   serving pages (serve)          hadoop.http.authentication.type=kerberos
//                                  or --auth kerberos: SPNEGO with
//                                  hadoop.http.authentication.kerberos.
//                                  principal (_HOST made this server's
//                                  name) and .keytab, as Hadoop's daemons
//   which jobs a visitor sees      yarn.acl.enable: the job's owner, its
//                                  view ACL and yarn.admin.acl, as the RM

#include <memory>
#include <optional>
#include <string>

#include "base/access_list.hpp"
#include "base/result.hpp"
#include "hadoop/configuration.hpp"
#include "web/spnego.hpp"

namespace tony::history {

struct auth_flags {
  std::string auth;             // "kerberos", "none"; empty: the cluster's
  std::string spnego_principal; // empty: core-site's, else HTTP/_HOST@<realm>
  std::string spnego_keytab;    // empty: core-site's
};

struct serve_security {
  std::shared_ptr<const http::spnego_guard> spnego; // null: none
  std::optional<base::access_list> admins;          // set: ACLs on
  std::string said; // one line for the operator: what is enforced
};

/// What `serve` enforces, bound to `bind`; the message (what, where, what to
/// do) when SPNEGO is asked for and cannot be set up: an unknown --auth, no
/// keytab, a keytab without the principal's key.
result<serve_security, std::string> serve_security_of(const hadoop::configuration& conf,
                                                      const auth_flags& flags,
                                                      const std::string& bind);

} // namespace tony::history
