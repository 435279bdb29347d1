#pragma once

// What tony-submit's YARN commands share: the submit and follow of
// submit/yarn_submit.cpp and the --status, --kill and --logs of
// submit/yarn_query.cpp. The Hadoop configuration, a client of the
// ResourceManager logged in as the configuration asks, how tony-submit's
// own HTTP calls authenticate, a task's file from its NodeManager, and the
// lines tony-submit prints.

#include "base/result.hpp"
#include <memory>
#include <optional>
#include <string>

#include <caf/actor_system_config.hpp>

#include "config/job_spec.hpp"
#include "hadoop/configuration.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/webhdfs.hpp"
#include "hadoop/yarn/application_client.hpp"
#include "messages/types.hpp"
#include "submit/submit.hpp"

namespace tony::yarn_cli {

/// An actor system's configuration for talking to an AM (am_watcher).
struct client_config : caf::actor_system_config {
  client_config();
};

/// "tony: <line>" on stdout.
void say(const std::string& line);

/// "tony-submit: <line>" on stderr.
void complain(const std::string& line);

/// The Hadoop configuration directory and its contents.
struct hadoop_setup {
  std::string dir;
  hadoop::configuration conf;
};

/// The configuration --hadoop-conf, the environment or [cluster] name
/// (`from_cli`, `from_job`); else said, and exit 2.
result<hadoop_setup, int> load_hadoop(const std::string& from_cli,
                                      const std::string& from_job);

// A client of the cluster's ResourceManager, authenticated as its client
// configuration asks: SIMPLE as the current user, or Kerberos from the
// ticket cache or a keytab (--principal/--keytab, else [security]).
struct rm_connection {
  yarn::application_client rm;
  std::string user; // the job's short user name: staging dirs, HADOOP_USER_NAME
  std::shared_ptr<hadoop::ipc_client> ipc;
  /// The Kerberos login on a secure cluster, else null.
  std::shared_ptr<const hadoop::kerberos_credentials> kerberos;
  std::string keytab;     // the keytab the AM gets new tokens with, if any
  std::string proxy_user; // whom the calls act for (then `user`), if anyone
  std::string login_user; // who tony-submit authenticates as
  /// Logged in with the tokens of HADOOP_TOKEN_FILE_LOCATION (no Kerberos):
  /// the HDFS delegation token its WebHDFS calls carry (URL string), and
  /// the file.
  std::string delegation;
  std::string token_file;
};

/// The RM client `setup` and the login options ask for, acting for the
/// proxy user if any; else said, and the exit code (2 for a bad
/// configuration or proxy user name, 3 for a failed Kerberos login).
result<rm_connection, int> connect_rm(const hadoop_setup& setup,
                                      const submit_options& opts,
                                      const security_spec& from_job);

/// How tony-submit's own HTTP calls (WebHDFS, NodeManagers' web services)
/// authenticate: SPNEGO with its Kerberos login, else SIMPLE as the user.
webhdfs::http_auth http_auth_of(const rm_connection& c, const security_spec& security);

/// A task's file through its NodeManager's web service (its log_dir is the
/// NM's containerlogs page, http://<nm>/node/containerlogs/<container>/<user>);
/// nothing when the NM does not serve it. The service serves whole files.
/// A NodeManager's web services take SPNEGO on a secure cluster (`auth`).
std::optional<std::string> node_manager_file(const task_status& task,
                                             const std::string& file,
                                             const webhdfs::http_auth& auth);

} // namespace tony::yarn_cli
