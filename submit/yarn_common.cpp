// What tony-submit's YARN commands share (submit/yarn_common.hpp).

#include "submit/yarn_common.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/actor_types.hpp"
#include "hadoop/client_security.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/hdfs/delegation_token.hpp"
#include "hadoop/user.hpp"
#include "hadoop/yarn/rm_token.hpp"
#include "messages/error.hpp"
#include "runtime/yarn/am_env.hpp"
#include "submit/backend_choice.hpp"

namespace fs = std::filesystem;

namespace tony::yarn_cli {

client_config::client_config() {
  load<caf::io::middleman>();
  add_all_types(*this);
  set("logger.verbosity", caf::atom("quiet"));
}

void say(const std::string& line) {
  std::cout << "tony: " << line << std::endl;
}

void complain(const std::string& line) {
  std::cerr << "tony-submit: " << line << std::endl;
}

result<hadoop_setup, int> load_hadoop(const std::string& from_cli,
                                      const std::string& from_job) {
  auto dir = yarn_conf_dir(from_cli, from_job);
  if (dir.empty()) {
    complain("the yarn backend needs the cluster's Hadoop configuration: pass "
             "--hadoop-conf DIR, set HADOOP_CONF_DIR or YARN_CONF_DIR, or set [cluster] "
             "hadoop_conf");
    return exit_usage;
  }
  auto conf = hadoop::configuration::load_dir(dir);
  if (!conf) {
    complain(conf.error().message());
    return exit_usage;
  }
  // WebHDFS staging needs the NameNode's HTTP address.
  if (auto ok = conf->add_hdfs_site(); !ok) {
    complain(ok.error().message());
    return exit_usage;
  }
  return hadoop_setup{dir, std::move(*conf)};
}

namespace {

// Why a token file did not spare the user a login: a workflow scheduler
// (Oozie's launcher) hands its clients HADOOP_TOKEN_FILE_LOCATION and no
// ticket; without an RM delegation token in it tony-submit cannot talk to
// the ResourceManager (the file's tokens still go to the job).
std::string forwarded_tokens_do_not_log_in() {
  auto* path = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
  if (path == nullptr || *path == '\0')
    return {};
  return std::string{"; the tokens of HADOOP_TOKEN_FILE_LOCATION ("} + path +
         ") are passed on to the job but do not log tony-submit in: it holds no RM "
         "delegation token (RM_DELEGATION_TOKEN), so tony-submit needs a Kerberos ticket "
         "or keytab of its own ([security] principal and keytab)";
}

// The CA file HTTPS endpoints are checked against: [security] ca_file,
// else TONY_CA_FILE, else (empty) the system's bundle.
std::string ca_file_of(const security_spec& security) {
  if (!security.ca_file.empty())
    return security.ca_file;
  auto env = std::getenv(yarn_env::ca_file);
  return env != nullptr ? env : "";
}

// A workflow scheduler's action (Oozie's launcher) runs with the user's
// tokens in HADOOP_TOKEN_FILE_LOCATION and no Kerberos ticket. With an RM
// delegation token in that file tony-submit logs in with it: the RM's
// calls authenticate with the token (DIGEST-MD5) as its owner, WebHDFS
// calls carry the file's HDFS token of fs.defaultFS (doc/operations.md
// "Workflow schedulers"). nullopt when there is no such file or token;
// an error when the file cannot be read or the token has expired.
struct token_file_login {
  hadoop::token rm;
  std::string owner; // short name
  std::string delegation;
  std::string path;
  std::string note; // what tony-submit says it uses
};

expected<std::optional<token_file_login>>
login_from_token_file(const hadoop::configuration& conf) {
  auto* path = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
  if (path == nullptr || *path == '\0')
    return std::optional<token_file_login>{};
  auto creds = hadoop::read_credentials_file(path);
  if (!creds)
    return make_error(errc::infrastructure, creds.error().message());
  auto rms = creds->find_all(yarn::rm_delegation_token_kind);
  if (rms.empty())
    return std::optional<token_file_login>{};
  token_file_login login;
  login.path = path;
  login.rm = rms.front();
  auto id = yarn::parse_rm_token_identifier(login.rm.identifier);
  if (!id)
    return make_error(errc::infrastructure,
                      std::string{"HADOOP_TOKEN_FILE_LOCATION ("} + path +
                          "): its RM delegation token: " + id.error().message());
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  if (id->max_date_ms > 0 && id->max_date_ms <= now)
    return make_error(errc::infrastructure,
                      std::string{"the RM delegation token of "} + id->owner +
                          " in HADOOP_TOKEN_FILE_LOCATION (" + path +
                          ") has expired (its maximum lifetime ended " +
                          std::to_string((now - id->max_date_ms) / 1000) +
                          " s ago): the workflow scheduler must fetch new tokens, or "
                          "log in with kinit or a keytab");
  login.owner = yarn::principal_short_name(id->owner);
  // The HDFS token of fs.defaultFS: filed under ha-hdfs:<ns> for a
  // nameservice, else under its NameNode's <ip>:<port>.
  auto fs = conf.get_or("fs.defaultFS", "");
  if (fs.rfind("hdfs://", 0) == 0) {
    auto authority = fs.substr(7, fs.find('/', 7) - 7);
    const hadoop::token* hdfs_token = nullptr;
    if (authority.find(':') == std::string::npos)
      hdfs_token =
          creds->find(hdfs::delegation_token_kind, hdfs::ha_token_service(authority));
    if (hdfs_token == nullptr)
      if (auto address = hadoop::parse_endpoint(authority, 8020))
        if (auto service = hdfs::token_service(*address))
          hdfs_token = creds->find(hdfs::delegation_token_kind, *service);
    if (hdfs_token != nullptr)
      login.delegation = hdfs::to_url_string(*hdfs_token);
  }
  login.note = "the tokens of HADOOP_TOKEN_FILE_LOCATION (" + login.path +
               "): the RM delegation token of " + id->owner +
               (login.delegation.empty() ? std::string{", and no HDFS token of "} + fs
                                         : std::string{" and the HDFS token of "} + fs);
  return std::optional<token_file_login>{std::move(login)};
}

// --proxy-user, else HADOOP_PROXY_USER (as Hadoop's own clients read it):
// the name, or empty. A name that cannot be a user's is refused here
// rather than sent in a URL.
result<std::string, int> proxy_user_of(const submit_options& opts) {
  auto* env = std::getenv("HADOOP_PROXY_USER");
  auto name = !opts.proxy_user.empty() ? opts.proxy_user : env ? env : "";
  auto bad = std::find_if(name.begin(), name.end(), [](unsigned char ch) {
    return !std::isalnum(ch) && ch != '.' && ch != '_' && ch != '-' && ch != '@';
  });
  if (bad == name.end())
    return name;
  complain("proxy user '" + name + "' (" +
           (opts.proxy_user.empty() ? "HADOOP_PROXY_USER" : "--proxy-user") +
           "): a user name has letters, digits and . _ - @ only");
  return exit_usage;
}

} // namespace

result<rm_connection, int> connect_rm(const hadoop_setup& setup,
                                      const submit_options& opts,
                                      const security_spec& from_job) {
  auto security = hadoop::client_security_from(setup.conf);
  if (!security) {
    complain(security.error().message());
    return exit_usage;
  }
  auto principal = opts.principal.empty() ? from_job.principal : opts.principal;
  auto keytab = from_job.keytab;
  if (!opts.keytab.empty())
    keytab = fs::absolute(opts.keytab).lexically_normal().string();
  std::shared_ptr<const hadoop::kerberos_credentials> kerberos;
  auto user = hadoop::current_user();
  std::optional<token_file_login> by_tokens;
  if (security->kerberos) {
    auto login = hadoop::kerberos_credentials::login({principal, keytab});
    // No ticket and no keytab asked for: the token file's RM token, if any.
    if (!login && principal.empty() && keytab.empty()) {
      auto tokens = login_from_token_file(setup.conf);
      if (!tokens) {
        complain(describe(tokens.error()));
        return exit_infra;
      }
      by_tokens = std::move(*tokens);
    }
    if (by_tokens) {
      user = by_tokens->owner;
      if (!opts.quiet)
        say("no Kerberos login: using " + by_tokens->note);
    } else if (!login) {
      complain(login.error().message() + forwarded_tokens_do_not_log_in());
      return exit_infra;
    } else {
      kerberos = *login;
      user = kerberos->short_name();
      if (!opts.quiet)
        say("Kerberos: " + kerberos->principal() + " from " + kerberos->source());
    }
  } else if (!principal.empty() || !keytab.empty()) {
    complain("warning: the Kerberos principal/keytab are not used: " + setup.dir +
             "/core-site.xml sets hadoop.security.authentication to simple");
  }
  hadoop::connection_options ipc_opts;
  ipc_opts.allow_simple_fallback = !security->kerberos || security->fallback_to_simple;
  auto ipc = std::make_shared<hadoop::ipc_client>(ipc_opts);
  auto rm = yarn::application_client::from_configuration(ipc, setup.conf, user, kerberos);
  if (!rm) {
    complain(rm.error().message());
    return exit_usage;
  }
  if (by_tokens)
    rm->authenticate_with(by_tokens->rm, user);
  auto proxy = proxy_user_of(opts);
  if (!proxy)
    return proxy.error();
  auto& acting_for = *proxy;
  // A keytab goes to the AM only for the login's own jobs: a proxy user's
  // job lives on its tokens, and never holds the superuser's keytab.
  auto shipped_keytab =
      kerberos && kerberos->from_keytab() && acting_for.empty() ? keytab : std::string{};
  if (!acting_for.empty()) {
    rm->act_as(acting_for);
    if (!opts.quiet)
      say("proxy user: submitting for " + acting_for + " as " + user +
          " (the cluster's hadoop.proxyuser." + user + ".* must allow it)");
  }
  auto job_user = acting_for.empty() ? user : acting_for;
  return rm_connection{std::move(*rm),
                       job_user,
                       ipc,
                       kerberos,
                       shipped_keytab,
                       acting_for,
                       user,
                       by_tokens ? by_tokens->delegation : "",
                       by_tokens ? by_tokens->path : ""};
}

webhdfs::http_auth http_auth_of(const rm_connection& c, const security_spec& security) {
  webhdfs::http_auth auth;
  auth.user = c.login_user;
  auth.kerberos = c.kerberos;
  auth.proxy_user = c.proxy_user;
  auth.delegation = c.delegation;
  auth.ca_file = ca_file_of(security);
  return auth;
}

std::optional<std::string> node_manager_file(const task_status& task,
                                             const std::string& file,
                                             const webhdfs::http_auth& auth) {
  auto at = task.log_dir.find("/node/containerlogs/");
  if (at == std::string::npos || task.container_id.empty())
    return std::nullopt;
  auto url = task.log_dir.substr(0, at) + "/ws/v1/node/containerlogs/" +
             task.container_id + "/" + file;
  auto got = webhdfs::call("GET", url, auth, {}, true);
  if (!got || got->status != 200)
    return std::nullopt;
  return std::move(got->body);
}

} // namespace tony::yarn_cli
