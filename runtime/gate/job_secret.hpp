#pragma once

// The job secret: the key of the gate's handshake (handshake.hpp), shared by
// every process of one job and by no one else. Its path (doc/architecture.md,
// "The job secret"):
//
//   tony-submit draws it ──local──▶ tony-am's environment (TONY_JOB_SECRET;
//        │                         /proc/<pid>/environ is the user's only)
//        │ ─────yarn───▶ the AM's ContainerLaunchContext tokens, as the
//        │               Credentials secret "tony.job.secret" (the NodeManager
//        │               writes it to the container's token file, 0600)
//        └─▶ kept for --status in ~/.tony/secrets/<app-id> (0600) on YARN
//   tony-am ──local──▶ each executor's environment (TONY_JOB_SECRET)
//           ──yarn───▶ each executor container's tokens, as above
//
// Never on a command line, never in a log, never in a NodeManager's launch
// script (whose copy YARN keeps with the container's logs).

#include <map>
#include <string>

#include "messages/error.hpp"

namespace tony::gate {

/// The environment variable that carries the secret where no token file
/// does (the local backend).
constexpr const char* secret_env = "TONY_JOB_SECRET";

/// The alias of the secret in Hadoop credentials (token files, the tokens of
/// a ContainerLaunchContext).
constexpr const char* secret_alias = "tony.job.secret";

/// 32 random bytes as hex, from OpenSSL's generator; empty if it fails.
std::string make_job_secret();

/// The secret from `env`: TONY_JOB_SECRET, else the token file named by
/// HADOOP_TOKEN_FILE_LOCATION. errc::invalid_config when neither has one
/// (the message names both places), errc::infrastructure when the token
/// file cannot be read.
expected<std::string>
job_secret_from_environment(const std::map<std::string, std::string>& env);

/// The AM's secret: job_secret_from_environment, else (an AM started by
/// hand) a fresh one, with a warning: executors can join, no client follow.
std::string job_secret_or_fresh(const std::map<std::string, std::string>& env);

/// A credential for one purpose, derived from the secret: the first 32 hex
/// digits of HMAC-SHA256(secret, purpose). Who holds the secret can make it;
/// who holds it cannot go back to the secret or to another purpose's.
std::string derived_token(const std::string& secret, const std::string& purpose);

/// The token the AM's TensorBoard proxy sends to the job's TensorBoard
/// sidecar, which answers no request without it (doc/tracking.md).
inline std::string tensorboard_token(const std::string& secret) {
  return derived_token(secret, "tony-tensorboard/1");
}

/// Hadoop credentials (token-file format) holding only the secret: the
/// `tokens` of a ContainerLaunchContext.
std::string credentials_with_secret(const std::string& secret);

/// Where tony-submit keeps the secrets of the YARN jobs it submitted:
/// $HOME/.tony/secrets (0700), one file per application (0600).
std::string secret_dir();

/// Writes `secret` for `app_id` into secret_dir(), readable by the user only.
expected<void> save_secret(const std::string& app_id, const std::string& secret);

/// The saved secret of `app_id`; errc::invalid_config when there is none.
expected<std::string> load_secret(const std::string& app_id);

/// Removes the saved secret of `app_id` (the job has ended); no error if absent.
void forget_secret(const std::string& app_id);

} // namespace tony::gate
