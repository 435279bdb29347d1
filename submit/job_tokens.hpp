#pragma once

// The credentials tony-submit hands the AM on YARN besides the job secret
// (doc/operations.md, "Secure clusters"):
//
//   forwarded    the tokens of HADOOP_TOKEN_FILE_LOCATION when it is set
//                (a workflow scheduler fetched them for this user): passed
//                on, as Hadoop's own clients carry their UGI's tokens
//   HDFS tokens  on a Kerberos cluster, one delegation token per NameNode of
//                the job (hdfs::token_plan: fs.defaultFS and [security]
//                file_systems), renewable by the ResourceManager, which
//                renews them until their max date and cancels them when the
//                application ends
//
// and what the user is told about how long the job can live on them.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "config/job_spec.hpp"
#include "hadoop/configuration.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/hdfs/token_plan.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/kerberos.hpp"
#include "messages/error.hpp"

namespace tony {

struct job_credentials {
  /// The tokens for the AM's ContainerLaunchContext (no job secret).
  hadoop::credentials tokens;
  /// Which NameNodes the tokens are from (none on a SIMPLE cluster).
  hdfs::token_plan plan;
  /// The HDFS tokens got, with their identities.
  std::vector<hdfs::obtained_token> hdfs;
};

/// The tokens of the file HADOOP_TOKEN_FILE_LOCATION names (none when it
/// is unset); errc::infrastructure naming the file when it is unreadable
/// or corrupt. Job secrets in it are left out.
expected<hadoop::credentials> forwarded_tokens();

/// Everything the AM gets: forwarded tokens, and with `kerberos` an HDFS
/// token from every NameNode of the job (for `proxy_user` when not empty:
/// Hadoop's proxy users). errc::invalid_config for a client
/// configuration that cannot name the renewer or a NameNode;
/// errc::infrastructure when a NameNode does not give a token.
expected<job_credentials> gather_job_credentials(
    const hadoop::configuration& conf, const security_spec& security,
    const std::shared_ptr<hadoop::ipc_client>& ipc,
    const std::shared_ptr<const hadoop::kerberos_credentials>& kerberos,
    const std::string& proxy_user = {});

/// What the user is told about the tokens' life: with a keytab, that the
/// AM gets new ones; without one, until when the job can run (the earliest
/// max date) and how to run longer. Empty without HDFS tokens.
std::string token_lifetime_note(const std::vector<hdfs::obtained_token>& tokens,
                                bool keytab, std::chrono::system_clock::time_point now);

} // namespace tony
