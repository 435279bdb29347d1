#include "submit/job_tokens.hpp"

#include <cstdlib>
#include <ctime>

#include "messages/error.hpp"
#include "runtime/gate/job_secret.hpp"

namespace tony {

namespace {

using std::chrono::system_clock;

std::string local_time(int64_t ms) {
  auto secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %Z", &tm);
  return buf;
}

std::string span(int64_t ms) {
  auto s = ms / 1000;
  if (s < 0)
    return "already past";
  if (s < 600)
    return std::to_string(s) + " s from now";
  if (s < 2 * 3600)
    return std::to_string(s / 60) + " min from now";
  if (s < 2 * 86400)
    return std::to_string(s / 3600) + " h from now";
  return std::to_string(s / 86400) + " days from now";
}

int64_t epoch_ms(system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch())
      .count();
}

} // namespace

expected<hadoop::credentials> forwarded_tokens() {
  auto* path = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
  if (path == nullptr || *path == '\0')
    return hadoop::credentials{};
  auto creds = hadoop::read_credentials_file(path);
  if (!creds)
    return make_error(errc::infrastructure,
                      creds.error().message() +
                          "; tony-submit passes the tokens of HADOOP_TOKEN_FILE_LOCATION "
                          "on to the job: fix the file or unset the variable");
  hadoop::credentials result;
  for (auto& [alias, tok] : creds->tokens())
    result.add_token(alias, tok);
  for (auto& [alias, bytes] : creds->secrets())
    if (alias != gate::secret_alias)
      result.add_secret(alias, bytes);
  return result;
}

expected<job_credentials> gather_job_credentials(
    const hadoop::configuration& conf, const security_spec& security,
    const std::shared_ptr<hadoop::ipc_client>& ipc,
    const std::shared_ptr<const hadoop::kerberos_credentials>& kerberos,
    const std::string& proxy_user) {
  job_credentials result;
  auto forwarded = forwarded_tokens();
  if (!forwarded)
    return forwarded.error();
  result.tokens = std::move(*forwarded);
  if (!kerberos)
    return result;
  auto plan = hdfs::plan_tokens(conf, security.file_systems);
  if (!plan)
    return make_error(errc::invalid_config, plan.error().message());
  result.plan = std::move(*plan);
  if (result.plan.namenodes.empty())
    return result;
  auto got =
      hdfs::obtain_tokens(ipc, result.plan, kerberos,
                          hadoop::deadline_after(std::chrono::seconds(30)), proxy_user);
  if (!got)
    return make_error(errc::infrastructure, got.error().message());
  result.hdfs = std::move(*got);
  // Fresh tokens win over forwarded ones for the same NameNode.
  auto fresh = hdfs::to_credentials(result.hdfs);
  for (auto& [alias, tok] : fresh.tokens())
    result.tokens.add_token(alias, tok);
  return result;
}

std::string token_lifetime_note(const std::vector<hdfs::obtained_token>& tokens,
                                bool keytab, system_clock::time_point now) {
  if (tokens.empty())
    return {};
  std::string names;
  int64_t max_date = 0;
  for (auto& t : tokens) {
    names += (names.empty() ? "" : ", ") + t.uri;
    if (max_date == 0 || t.identity.max_date_ms < max_date)
      max_date = t.identity.max_date_ms;
  }
  auto head = "HDFS delegation tokens for " + names + " (renewer " +
              tokens.front().identity.renewer + ")";
  if (keytab)
    return head + "; the ApplicationMaster gets new ones with the keytab before they "
                  "expire, so the job may outlive them";
  return head + "; without a keytab the job can run until " + local_time(max_date) +
         " (" + span(max_date - epoch_ms(now)) +
         "), their maximum lifetime: set [security] keytab (tony-submit --keytab) for "
         "longer jobs";
}

} // namespace tony
