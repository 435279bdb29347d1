// tony-submit on the local backend: the job's own directory under the jobs
// dir, its AM started on this machine, and the AM followed to its end. Also
// make_follower, which both backends use.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <nlohmann/json.hpp>

#include "actors/actor_types.hpp"
#include "actors/registry.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "config/job_json.hpp"
#include "messages/error.hpp"
#include "messages/registration.hpp"
#include "messages/type_ids.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/process/process.hpp"
#include "runtime/status_json.hpp"
#include "runtime/status_printer.hpp"
#include "submit/am_watcher.hpp"
#include "submit/event_output.hpp"
#include "submit/submit.hpp"
#include "web/job_page.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct client_config : caf::actor_system_config {
  client_config() {
    load<caf::io::middleman>();
    tony::add_all_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
  }
};

using base::expand_home;

std::string read_file(const std::string& path) {
  return base::read_file(path).value_or("");
}

void say(const std::string& line) {
  std::cout << "tony: " << line << std::endl;
}

void complain(const std::string& line) {
  std::cerr << "tony-submit: " << line << std::endl;
}

// application_<ms>_<nnnn>, unique under jobs_dir.
std::string new_app_id(const std::string& jobs_dir, int64_t* cluster_ts) {
  auto now = std::chrono::duration_cast<milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  *cluster_ts = now;
  for (int n = static_cast<int>(::getpid() % 9000) + 1;; ++n) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "application_%lld_%04d", static_cast<long long>(now),
                  n % 10000);
    std::error_code ec;
    if (!fs::exists(jobs_dir + "/" + buf, ec))
      return buf;
  }
}

// " --jobs-dir DIR" when the job runs outside the default jobs dir.
std::string jobs_dir_flag(const job_spec& job) {
  if (job.cluster.jobs_dir.empty())
    return {};
  return " --jobs-dir " + job.cluster.jobs_dir;
}

} // namespace

namespace {

// The local pool links local files; a remote one would need a download.
std::string first_remote_source(const job_spec& job) {
  auto remote = [](const std::string& s) { return s.find("://") != std::string::npos; };
  if (remote(job.python_venv))
    return "[code] python_venv " + job.python_venv;
  for (auto& f : job.files)
    if (remote(f.source))
      return "[code] " + std::string{f.archive ? "archives" : "files"} + " " + f.source;
  for (auto& t : job.tasks)
    for (auto& f : t.files)
      if (remote(f.source))
        return "[tasks." + t.name + "] " + (f.archive ? "archives " : "files ") +
               f.source;
  return {};
}

// Copies the directory `from` to `to` (created), files read-only, symbolic
// links as links, leaving out `skip` (the jobs dir, when it lies inside the
// code: the copy would otherwise contain itself).
std::error_code copy_read_only(const fs::path& from, const fs::path& to,
                               const fs::path& skip) {
  std::error_code ec;
  fs::create_directory(to, ec);
  if (ec)
    return ec;
  for (auto i = fs::directory_iterator(from, ec); !ec && i != fs::directory_iterator();
       i.increment(ec)) {
    auto target = to / i->path().filename();
    if (std::error_code same; fs::equivalent(i->path(), skip, same))
      continue;
    auto status = i->symlink_status(ec);
    if (ec)
      return ec;
    if (fs::is_directory(status)) {
      ec = copy_read_only(i->path(), target, skip);
    } else {
      fs::copy(i->path(), target, fs::copy_options::copy_symlinks, ec);
      if (!ec && fs::is_regular_file(status))
        fs::permissions(target,
                        fs::perms::owner_write | fs::perms::group_write |
                            fs::perms::others_write,
                        fs::perm_options::remove, ec);
    }
    if (ec)
      return ec;
  }
  return ec;
}

// The job's source dir as a NodeManager's localized copy of the staged
// archive is: taken at submission, read-only, shared by the tasks (linked
// into each working directory), which write elsewhere.
expected<void> snapshot_code(const std::string& from, const std::string& to,
                             const std::string& jobs_dir) {
  if (auto ec = copy_read_only(from, to, jobs_dir))
    return make_error(errc::infrastructure,
                      "cannot copy the job's code " + from + " to " + to + ": " +
                          ec.message() +
                          " ([code] src_dir must be a readable directory)");
  return ok;
}

// The local backend runs every task on this machine: placement settings
// are accepted (the same job.toml runs on YARN) and said to be ignored.
std::string placement_note(const job_spec& job) {
  std::vector<std::string> types;
  for (auto& t : job.tasks)
    if (t.pack || t.max_per_node > 0)
      types.push_back("tasks." + t.name);
  if (types.empty())
    return {};
  return " (" + base::join(types, ", ") +
         ": placement and max_per_node apply on YARN only; every task runs here)";
}

// -- the submission's phases ----------------------------------------------------

// A local job as submit_local's phases fill it in: where it runs, its id,
// its secret, and its AM.
struct local_job {
  std::string app_id;
  std::string job_dir;
  std::string secret;
  pid_t am_pid = 0;
};

// True once tony-submit was interrupted (Ctrl-C: submit_options::interrupted).
bool interrupted(const submit_options& opts) {
  return opts.interrupted && opts.interrupted->load() != 0;
}

// The job's own directory under the jobs dir, with its code's snapshot and
// job.json; else said, and the exit code.
std::optional<int> make_job_dir(const job_spec& job, local_job& lj) {
  auto jobs_dir =
      expand_home(job.cluster.jobs_dir.empty() ? "~/.tony/jobs" : job.cluster.jobs_dir);
  std::error_code ec;
  fs::create_directories(jobs_dir, ec);
  int64_t cluster_ts = 0;
  lj.app_id = new_app_id(jobs_dir, &cluster_ts);
  lj.job_dir = jobs_dir + "/" + lj.app_id;
  auto& job_dir = lj.job_dir;
  fs::create_directories(job_dir, ec);
  if (ec) {
    complain("cannot create the job directory " + job_dir + ": " + ec.message() +
             " (set [cluster] jobs_dir to a writable place)");
    return exit_infra;
  }
  // The code as YARN ships it: a snapshot taken at submission, read-only,
  // linked into every task's own writable working directory.
  job_spec to_run = job;
  if (!job.src_dir.empty()) {
    if (auto snap = snapshot_code(job.src_dir, job_dir + "/src", jobs_dir); !snap) {
      complain(describe(snap.error()));
      return exit_infra;
    }
    to_run.src_dir = job_dir + "/src";
  }
  {
    std::ofstream out(job_dir + "/job.json");
    out << to_json(to_run);
    if (!out) {
      complain("cannot write " + job_dir + "/job.json");
      return exit_infra;
    }
  }
  return std::nullopt;
}

// The job's secret and its AM, started; else said, and the exit code.
std::optional<int> start_am(const submit_options& opts, local_job& lj) {
  auto& app_id = lj.app_id;
  auto& job_dir = lj.job_dir;
  // The AM's gate admits whoever proves this secret: the executors (the AM
  // hands it on) and this process's watcher. In the AM's environment, which
  // only the user can read, never on its command line.
  lj.secret = gate::make_job_secret();
  auto& secret = lj.secret;
  if (secret.empty()) {
    complain("cannot generate the job secret (OpenSSL RAND_bytes failed)");
    return exit_infra;
  }
  // Kept for --status by id (job_control), as on YARN; removed when the
  // job's end is seen.
  if (auto saved = gate::save_secret(app_id, secret); !saved)
    complain("warning: tony-submit --status " + app_id +
             " will not show the tasks: " + describe(saved.error()));
  auto am_path = opts.bin_dir + "/tony-am";
  process::spawn_options am;
  am.argv = {am_path,    "--backend", "local",      "--job", job_dir + "/job.json",
             "--app-id", app_id,      "--work-dir", job_dir};
  am.env = process::current_environment();
  am.env[gate::secret_env] = secret;
  am.env["CONTAINER_ID"] = "container_" + app_id.substr(12) + "_01_000001";
  am.env["LOG_DIRS"] = job_dir;
  am.cwd = job_dir;
  am.new_session = true;
  // A Ctrl-C while the AM is still starting must reach its signal watcher
  // (and end as KILLED), not kill it before it can record anything.
  am.block_stop_signals = true;
  am.stdout_path = job_dir + "/am.log";
  am.stderr_path = job_dir + "/am.log";
  auto child = process::spawn(am);
  if (!child) {
    complain("cannot start the ApplicationMaster: " + describe(child.error()));
    return exit_infra;
  }
  lj.am_pid = child->pid;
  return std::nullopt;
}

// -- following the AM -------------------------------------------------------------

// What the rounds of following a local AM share.
struct local_follow {
  const job_spec& job;
  const submit_options& opts;
  const local_job& lj;
  status_view& view;
  log_follower* follower;
  am_watcher& watcher;
  client_hook& hook;
  std::optional<process::exit_info> am_exit{};
  bool refusal_said = false;
  bool kill_sent = false;
  bool stopped_for_client = false;
  clock_type::time_point kill_deadline = clock_type::time_point::max();
  // Once the AM wrote its final status it has only cleanup left; an AM that
  // hangs in it must not hang tony-submit.
  clock_type::time_point exit_deadline = clock_type::time_point::max();
  milliseconds exit_grace =
      milliseconds(job.policy.stop_grace_ms) + std::chrono::seconds(15);
  clock_type::time_point connect_deadline = clock_type::now() + std::chrono::seconds(30);
};

// Asks the AM to stop on Ctrl-C or the client's stop, and kills one that
// does not stop, or does not exit after its final status, in time; true
// when it was killed (and waited for).
bool stop_when_due(local_follow& f) {
  auto& job_dir = f.lj.job_dir;
  auto am_pid = f.lj.am_pid;
  auto client_stop = f.hook.stop_reason();
  if ((interrupted(f.opts) || !client_stop.empty()) && !f.kill_sent) {
    f.kill_sent = true;
    f.stopped_for_client = !interrupted(f.opts);
    f.view.note(f.stopped_for_client ? client_stop
                                     : "interrupted: killing " + f.lj.app_id);
    ::kill(am_pid, SIGINT); // the AM reports a user's kill on SIGINT
    f.kill_deadline = clock_type::now() + milliseconds(f.job.policy.stop_grace_ms) +
                      std::chrono::seconds(15);
  }
  if (clock_type::now() > f.kill_deadline) {
    complain("the ApplicationMaster did not stop in time; killing it");
    process::kill_session(am_pid, SIGKILL);
    f.am_exit = process::wait(am_pid);
    return true;
  }
  std::error_code ec;
  if (f.exit_deadline == clock_type::time_point::max() &&
      fs::exists(job_dir + "/status.json", ec))
    f.exit_deadline = clock_type::now() + f.exit_grace;
  if (clock_type::now() > f.exit_deadline) {
    complain("the ApplicationMaster wrote its final status but did not exit within " +
             std::to_string(f.exit_grace.count() / 1000) + " s; killing it (see " +
             job_dir + "/am.log)");
    process::kill_session(am_pid, SIGKILL);
    f.am_exit = process::wait(am_pid);
    return true;
  }
  return false;
}

// Connects the watcher once the AM says where it listens (am.json); an AM
// that does not come up in time is killed, said, and exit 3.
std::optional<int> connect_when_up(local_follow& f) {
  auto& job_dir = f.lj.job_dir;
  auto info = nlohmann::json::parse(read_file(job_dir + "/am.json"), nullptr, false);
  if (info.is_object() && info.contains("port")) {
    if (f.watcher.connect(info.value("host", std::string{"127.0.0.1"}),
                          info["port"].get<uint16_t>()))
      f.watcher.watch_end();
  } else if (clock_type::now() > f.connect_deadline) {
    complain("the ApplicationMaster did not come up within 30 s; see " + job_dir +
             "/am.log");
    process::kill_session(f.lj.am_pid, SIGKILL);
    process::wait(f.lj.am_pid);
    return exit_infra;
  }
  return std::nullopt;
}

// Shows what the watcher says: its refusal once, and the job's status.
void show_status(local_follow& f) {
  if (!f.watcher.refusal().empty() && !f.refusal_said) {
    f.refusal_said = true;
    f.view.note("cannot follow the tasks: " + f.watcher.refusal());
  }
  if (auto st = f.watcher.poll(std::chrono::seconds(2))) {
    f.view.show(*st);
    if (f.follower)
      for (auto& line : f.follower->poll(*st))
        f.view.output(line);
    if (f.opts.events)
      f.opts.events->show(*st);
    f.hook.on_status(*st);
  }
}

// The job's end as the AM recorded it (or, when it was stopped on request
// before it could, as KILLED), said; tony-submit's exit code.
int finish(local_follow& f) {
  auto& job = f.job;
  auto& opts = f.opts;
  auto& app_id = f.lj.app_id;
  auto& job_dir = f.lj.job_dir;
  auto& am_exit = f.am_exit;
  auto text = read_file(job_dir + "/status.json");
  auto final_status = job_status_from_json(text);
  if (!final_status && f.kill_sent) {
    // Stopped on request before it recorded a status (e.g. killed by the
    // SIGKILL above): the job was killed all the same.
    job_status st;
    st.app_id = app_id;
    st.name = job.name;
    st.state = job_state::killed;
    st.diagnostics = "killed by tony-submit (interrupted); the ApplicationMaster exited "
                     "with code " +
                     std::to_string(am_exit ? am_exit->exit_code : -1) +
                     " without a final status (see " + job_dir + "/am.log)";
    st.finished_ms = std::chrono::duration_cast<milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    std::ofstream out(job_dir + "/status.json", std::ios::trunc);
    out << to_json(st, 2);
    final_status = std::move(st);
  }
  if (!final_status) {
    complain("the ApplicationMaster ended (exit code " +
             std::to_string(am_exit ? am_exit->exit_code : -1) +
             ") without a final status; its log says:\n" +
             process::tail_file(job_dir + "/am.log", 2000));
    return exit_infra;
  }
  gate::forget_secret(app_id);
  if (f.follower) // the last lines the task wrote before it ended
    for (auto& line : f.follower->drain(*final_status))
      f.view.output(line);
  f.view.finish(*final_status, job_dir);
  if (!opts.quiet)
    say("event log: " + job_dir + "/events.jsonl (tony-history show " + app_id + ")");
  auto code = f.hook.exit_code(
      final_status->state == job_state::succeeded ? exit_succeeded : exit_failed,
      f.stopped_for_client, milliseconds(job.policy.stop_grace_ms));
  if (opts.events) {
    opts.events->show(*final_status);
    opts.events->finished(*final_status, code);
  }
  return code;
}

// Follows the local AM to its end; tony-submit's exit code.
int follow(const job_spec& job, const submit_options& opts, const local_job& lj) {
  client_config cfg;
  caf::actor_system sys{cfg};
  status_view view{std::cout, !opts.quiet && status_view::stdout_is_terminal(),
                   opts.quiet};
  view.tensorboard_probe(&http::tensorboard_address);
  auto follower = make_follower(opts, local_log_reader());
  am_watcher watcher{sys, lj.secret};
  client_hook hook{opts.client};
  local_follow f{job, opts, lj, view, follower.get(), watcher, hook};
  for (;;) {
    if (!f.am_exit)
      f.am_exit = process::try_wait(lj.am_pid);
    if (f.am_exit)
      break;
    if (stop_when_due(f))
      break;
    if (!watcher.connected())
      if (auto code = connect_when_up(f))
        return *code;
    show_status(f);
    std::this_thread::sleep_for(milliseconds(watcher.connected() ? 200 : 20));
  }
  return finish(f);
}

} // namespace

int submit_local(const job_spec& job, const submit_options& opts) {
  if (auto remote = first_remote_source(job); !remote.empty()) {
    complain(remote + ": the local backend ships local paths only; copy the file here "
                      "first, or run on YARN (--backend yarn)");
    return exit_usage;
  }
  local_job lj;
  if (auto code = make_job_dir(job, lj))
    return *code;
  if (auto code = start_am(opts, lj))
    return *code;
  auto& app_id = lj.app_id;
  if (!opts.quiet)
    say("submitted " + app_id + " (" + job.name + ", " +
        base::plural(job.total_tasks(), "task") + ") on the local backend; job dir " +
        lj.job_dir + placement_note(job));
  if (opts.events)
    opts.events->submitted(
        app_id, "local", job.name, job.total_tasks(),
        {{"job_dir", lj.job_dir}, {"am_pid", std::to_string(lj.am_pid)}});
  if (opts.detach) {
    say("detached; the job runs on. Follow it with: tony-submit --status " + app_id +
        jobs_dir_flag(job) + ", stop it with: tony-submit --kill " + app_id +
        jobs_dir_flag(job));
    return exit_succeeded;
  }
  return follow(job, opts, lj);
}

std::unique_ptr<log_follower> make_follower(const submit_options& opts,
                                            log_follower::reader read) {
  if (opts.follow == "none")
    return nullptr;
  // Not asked for: the chief's output on a terminal, nothing in a pipe (or
  // with --output json, whose stdout is for programs).
  if (opts.follow.empty() &&
      (opts.quiet || opts.events != nullptr || !status_view::stdout_is_terminal()))
    return nullptr;
  return std::make_unique<log_follower>(opts.follow, std::move(read));
}

} // namespace tony
