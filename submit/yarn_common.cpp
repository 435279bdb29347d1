// What tony-submit's YARN commands share (submit/yarn_common.hpp).

#include "submit/yarn_common.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/actor_types.hpp"
#include "hadoop/client_security.hpp"
#include "hadoop/user.hpp"
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

std::variant<hadoop_setup, int> load_hadoop(const std::string& from_cli,
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
  if (fs::exists(dir + "/hdfs-site.xml"))
    if (auto ok = conf->add_file(dir + "/hdfs-site.xml"); !ok) {
      complain(ok.error().message());
      return exit_usage;
    }
  return hadoop_setup{dir, std::move(*conf)};
}

namespace {

// Why a token file did not spare the user a login: a workflow scheduler
// (Oozie's launcher) hands its clients HADOOP_TOKEN_FILE_LOCATION and no
// ticket, but tony-submit authenticates to the ResourceManager and the
// NameNodes with Kerberos only; the file's tokens go to the job.
std::string forwarded_tokens_do_not_log_in() {
  auto* path = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
  if (path == nullptr || *path == '\0')
    return {};
  return std::string{"; the tokens of HADOOP_TOKEN_FILE_LOCATION ("} + path +
         ") are passed on to the job but do not log tony-submit in: it needs a "
         "Kerberos ticket or keytab of its own to talk to the ResourceManager (a "
         "workflow scheduler must give it a keytab: [security] principal and keytab)";
}

// The CA file HTTPS endpoints are checked against: [security] ca_file,
// else TONY_CA_FILE, else (empty) the system's bundle.
std::string ca_file_of(const security_spec& security) {
  if (!security.ca_file.empty())
    return security.ca_file;
  auto env = std::getenv(yarn_env::ca_file);
  return env != nullptr ? env : "";
}

// --proxy-user, else HADOOP_PROXY_USER (as Hadoop's own clients read it):
// the name, or empty. A name that cannot be a user's is refused here
// rather than sent in a URL.
std::variant<std::string, int> proxy_user_of(const submit_options& opts) {
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

std::variant<rm_connection, int> connect_rm(const hadoop_setup& setup,
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
  if (security->kerberos) {
    auto login = hadoop::kerberos_credentials::login({principal, keytab});
    if (!login) {
      complain(login.error().message() + forwarded_tokens_do_not_log_in());
      return exit_infra;
    }
    kerberos = *login;
    user = kerberos->short_name();
    if (!opts.quiet)
      say("Kerberos: " + kerberos->principal() + " from " + kerberos->source());
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
  auto proxy = proxy_user_of(opts);
  if (auto code = std::get_if<int>(&proxy))
    return *code;
  auto& acting_for = std::get<std::string>(proxy);
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
  return rm_connection{std::move(*rm), job_user,   ipc, kerberos,
                       shipped_keytab, acting_for, user};
}

webhdfs::http_auth http_auth_of(const rm_connection& c, const security_spec& security) {
  webhdfs::http_auth auth;
  auth.user = c.login_user;
  auth.kerberos = c.kerberos;
  auth.proxy_user = c.proxy_user;
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
