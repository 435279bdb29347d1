// tony-history: past jobs from their event logs (doc/tracking.md).
//
//   tony-history list
//   tony-history show APP_ID [--json]
//   tony-history serve [--port N] [--bind ADDR] [--retention 30d]
//                      [--tensorboard PROGRAM] [--tensorboard-idle 10m]
//                      [--auth kerberos|none] [--spnego-principal P]
//                      [--spnego-keytab K]
//   tony-history clean --retention 30d
//
// Exit codes: 0 done; 2 a wrong flag or configuration (said); 3 a server or
// login that failed (said).

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <tuple>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "base/text.hpp"
#include "config/units.hpp"
#include "hadoop/configuration.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/user.hpp"
#include "history/history_auth.hpp"
#include "history/history_commands.hpp"
#include "history/history_server.hpp"
#include "runtime/process/signal_watcher.hpp"

namespace {

// --retention and --tensorboard-idle into `so`, those given; false, said on
// stderr, when one is no positive duration.
bool read_durations(const std::string& retention, const std::string& idle,
                    tony::history::serve_options& so) {
  for (auto [text, flag, out] :
       {std::tuple{&retention, "--retention", &so.retention_ms},
        std::tuple{&idle, "--tensorboard-idle", &so.tensorboard_idle_ms}}) {
    if (text->empty())
      continue;
    auto ms = tony::parse_duration_ms(*text);
    if (!ms || *ms <= 0) {
      std::cerr << "tony-history: " << flag << " \"" << *text << "\" "
                << (ms ? std::string{"must be positive"} : ms.error())
                << " (e.g. 30d, 12h, 90m)\n";
      return false;
    }
    *out = *ms;
  }
  return true;
}

// `tony-history clean`: the jobs that ended more than `retention_ms` ago go.
int clean_jobs(const tony::history::history_options& opts, int64_t retention_ms) {
  using namespace std::chrono;
  auto now = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  auto n = tony::history::apply_retention(opts, retention_ms, now, std::cout, std::cerr);
  std::cout << "tony-history: " << n << (n == 1 ? " job" : " jobs") << " removed"
            << std::endl;
  return 0;
}

// The user's Kerberos login for hdfs:// dirs when the cluster is a Kerberos
// one or a principal or keytab is given; false, said, when it fails.
bool log_in(const tony::hadoop::configuration& conf, const std::string& principal,
            const std::string& keytab, tony::history::history_options& opts) {
  bool remote = false;
  for (auto& d : opts.dirs)
    remote = remote || d.rfind("hdfs://", 0) == 0;
  bool kerberos = tony::base::lower(conf.get_or("hadoop.security.authentication",
                                                "simple")) == "kerberos";
  if (principal.empty() && keytab.empty() && !(kerberos && remote))
    return true;
  auto login = tony::hadoop::kerberos_credentials::login({principal, keytab});
  if (!login) {
    std::cerr << "tony-history: " << login.error().message() << "\n";
    return false;
  }
  opts.kerberos = std::move(*login);
  return true;
}

// $HADOOP_CONF_DIR (else $YARN_CONF_DIR) as tony-history reads it: a
// directory that is not there is no configuration (said in `note`; the
// local jobs need none), a malformed one an error (said).
std::optional<tony::hadoop::configuration> hadoop_configuration(std::string& note) {
  for (auto* var : {"HADOOP_CONF_DIR", "YARN_CONF_DIR"}) {
    auto* dir = std::getenv(var);
    if (dir == nullptr || *dir == '\0')
      continue;
    if (!std::filesystem::is_directory(dir)) {
      note = std::string{var} + "=" + dir +
             " is no directory: read without a Hadoop configuration (no Kerberos, no "
             "SPNEGO)";
      return tony::hadoop::configuration{};
    }
    break;
  }
  auto conf = tony::hadoop::configuration::from_environment();
  if (!conf) {
    std::cerr << "tony-history: the Hadoop configuration: " << conf.error().message()
              << "\n";
    return std::nullopt;
  }
  return std::move(*conf);
}

// The options every command takes: where the jobs are, how to read them.
void add_dir_options(CLI::App& app, tony::history::history_options& opts,
                     std::string& principal, std::string& keytab) {
  app.add_option("--dir", opts.dirs,
                 "a history dir or jobs dir to search: path, file:// or hdfs:// URI "
                 "(repeatable; default: ~/.tony/jobs and ~/.tony/history)");
  app.add_flag("--default-dirs", opts.default_dirs,
               "search ~/.tony/jobs and ~/.tony/history too when --dir is given");
  app.add_option(
      "--webhdfs", opts.webhdfs,
      "the NameNode's HTTP address for hdfs:// dirs (default: its host, port 9870)");
  // HADOOP_USER_NAME, else USER, else the account running tony-history: a
  // shell without USER (cron, containers, CI) must still name a user to WebHDFS.
  opts.user = tony::hadoop::current_user();
  app.add_option("--user", opts.user,
                 "the user WebHDFS reads as (default: $HADOOP_USER_NAME, $USER or "
                 "this process's account)");
  app.add_option("--principal", principal,
                 "log in as this Kerberos principal for hdfs:// dirs (with --keytab; "
                 "default: the ticket cache's on a Kerberos cluster)");
  app.add_option("--keytab", keytab, "the keytab for --principal");
  if (auto* ca = std::getenv("TONY_CA_FILE"))
    opts.ca_file = ca;
  app.add_option("--ca-file", opts.ca_file,
                 "the PEM CAs of HTTPS NameNodes (default: $TONY_CA_FILE, else the "
                 "system's)");
}

CLI::App* add_serve(CLI::App& app, tony::history::serve_options& so,
                    std::string& retention, std::string& idle,
                    tony::history::auth_flags& auth) {
  auto serve = app.add_subcommand("serve", "serve the jobs' pages from their event logs");
  serve->add_option("--port", so.port, "port to listen on (default: any free one)");
  serve->add_option("--bind", so.bind, "address to listen on (default: 127.0.0.1)");
  serve->add_option("--retention", retention,
                    "delete jobs that ended longer ago than this (30d, 12h; at start and "
                    "every hour; default: keep every job)");
  serve->add_option("--tensorboard", so.tensorboard,
                    "the TensorBoard program started for a finished job's log dir "
                    "(default: tensorboard on PATH)");
  serve->add_option("--tensorboard-idle", idle,
                    "stop a TensorBoard nobody asked for this long (default 10m)");
  serve
      ->add_option("--auth", auth.auth,
                   "kerberos (SPNEGO on every request) or none (default: the "
                   "cluster's hadoop.http.authentication.type)")
      ->check(CLI::IsMember({"kerberos", "none"}));
  serve->add_option("--spnego-principal", auth.spnego_principal,
                    "the server's principal, _HOST for its name (default: "
                    "hadoop.http.authentication.kerberos.principal)");
  serve->add_option("--spnego-keytab", auth.spnego_keytab,
                    "the keytab holding its key (default: "
                    "hadoop.http.authentication.kerberos.keytab)");
  return serve;
}

// `tony-history serve`, with what the cluster's configuration enforces.
int serve(const tony::hadoop::configuration& conf, const tony::history::auth_flags& auth,
          const tony::history::history_options& opts, tony::history::serve_options so,
          tony::process::signal_watcher& signals) {
  auto security = tony::history::serve_security_of(conf, auth, so.bind);
  if (!security) {
    std::cerr << security.error() << "\n";
    return 2;
  }
  if (auto guard = security->spnego)
    so.authenticate = [guard](const httplib::Request& req, httplib::Response& res) {
      return guard->authenticate(req, res);
    };
  so.admins = security->admins;
  so.note = so.note.empty() ? security->said : so.note + "; " + security->said;
  std::atomic<bool> stop{false};
  signals.start([&stop](int) { stop = true; });
  return tony::history::serve_history(opts, so, stop, std::cout, std::cerr);
}

} // namespace

int main(int argc, char** argv) {
  tony::process::signal_watcher signals;
  CLI::App app{
      "tony-history: list past tony jobs, show their timelines, serve their pages"};
  tony::history::history_options opts;
  std::string principal, keytab;
  add_dir_options(app, opts, principal, keytab);
  app.require_subcommand(1);
  auto list = app.add_subcommand("list", "every job found, newest first");
  auto show = app.add_subcommand("show", "one job's timeline and final task table");
  std::string app_id;
  bool as_json = false;
  show->add_option("app_id", app_id, "the application id")->required();
  show->add_flag("--json", as_json, "print the replayed status as /api/job does");
  tony::history::serve_options so;
  std::string retention, idle;
  tony::history::auth_flags auth;
  auto served = add_serve(app, so, retention, idle, auth);
  auto clean =
      app.add_subcommand("clean", "delete the jobs that ended before the retention");
  clean
      ->add_option("--retention", retention,
                   "how long jobs are kept after their end (30d)")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  spdlog::set_level(spdlog::level::warn);
  std::string conf_note;
  auto conf = hadoop_configuration(conf_note);
  if (!conf)
    return 2;
  // serve's first line is its URL; it says the note after it.
  if (!conf_note.empty() && !served->parsed())
    std::cerr << "tony-history: " << conf_note << "\n";
  if (!log_in(*conf, principal, keytab, opts))
    return 3;
  if (list->parsed())
    return tony::history::list_jobs(opts, std::cout, std::cerr);
  if (show->parsed())
    return tony::history::show_job(opts, app_id, as_json, std::cout, std::cerr);
  if (!read_durations(retention, idle, so))
    return 2;
  if (clean->parsed())
    return clean_jobs(opts, so.retention_ms);
  if (!conf_note.empty())
    so.note = conf_note;
  return serve(*conf, auth, opts, so, signals);
}
