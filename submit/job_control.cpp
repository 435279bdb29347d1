#include "submit/job_control.hpp"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <nlohmann/json.hpp>

#include "actors/actor_types.hpp"
#include "base/files.hpp"
#include "messages/error.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/process/process.hpp"
#include "runtime/status_json.hpp"
#include "submit/am_watcher.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct client_config : caf::actor_system_config {
  client_config() {
    load<caf::io::middleman>();
    add_all_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
  }
};

void complain(const std::string& line) {
  std::cerr << "tony-submit: " << line << std::endl;
}

using base::expand_home;
using base::read_file;

// True while `pid` is the AM of `app_id`: a pid can be reused once the AM
// is gone, and --kill must never signal a stranger.
bool is_am_of(pid_t pid, const std::string& app_id) {
  if (pid <= 0)
    return false;
  auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  if (!cmdline)
    return false;
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat) {
    auto close = stat->rfind(')');
    if (close != std::string::npos && close + 2 < stat->size() &&
        (*stat)[close + 2] == 'Z')
      return false;
  }
  return cmdline->find("tony-am") != std::string::npos &&
         cmdline->find(app_id) != std::string::npos;
}

// A local job as its directory shows it.
struct local_job {
  std::string app_id;
  std::string dir;
  pid_t am_pid = 0; // from am.json; 0 before the AM wrote it
  std::string am_host;
  uint16_t am_port = 0;
  std::string name; // from job.json
  int64_t stop_grace_ms = 3000;
};

local_job read_local_job(const std::string& app_id, const std::string& dir) {
  local_job job;
  job.app_id = app_id;
  job.dir = dir;
  if (auto text = read_file(dir + "/am.json")) {
    auto info = json::parse(*text, nullptr, false);
    if (info.is_object()) {
      job.am_pid = info.value("pid", 0);
      job.am_host = info.value("host", std::string{"127.0.0.1"});
      job.am_port = info.value("port", uint16_t{0});
    }
  }
  if (auto text = read_file(dir + "/job.json")) {
    auto spec = json::parse(*text, nullptr, false);
    if (spec.is_object()) {
      job.name = spec.value("name", std::string{});
      if (spec.contains("policy") && spec["policy"].is_object())
        job.stop_grace_ms = spec["policy"].value("stop_grace_ms", int64_t{3000});
    }
  }
  return job;
}

std::optional<job_status> final_status_of(const local_job& job) {
  auto text = read_file(job.dir + "/status.json");
  if (!text)
    return std::nullopt;
  auto st = job_status_from_json(*text);
  if (!st)
    return std::nullopt;
  return std::move(*st);
}

// The job's status: final, live from its AM, or what the directory says
// when the AM cannot tell. Nothing (and a message) when the AM runs but does
// not answer.
std::optional<job_status> local_status(const local_job& job, std::string* problem) {
  if (auto st = final_status_of(job))
    return st;
  job_status st;
  st.app_id = job.app_id;
  st.name = job.name;
  if (job.am_pid == 0) {
    st.state = job_state::fresh; // the AM is still starting
    return st;
  }
  if (!is_am_of(job.am_pid, job.app_id)) {
    if (auto fin = final_status_of(job)) // it just ended
      return fin;
    st.state = job_state::lost;
    st.diagnostics = "the ApplicationMaster (pid " + std::to_string(job.am_pid) +
                     ") ended without a final status; see " + job.dir + "/am.log";
    return st;
  }
  // Through the AM's gate, with the secret tony-submit kept for the job.
  auto secret = gate::load_secret(job.app_id);
  if (secret) {
    client_config cfg;
    caf::actor_system sys{cfg};
    am_watcher watcher{sys, *secret};
    if (watcher.connect(job.am_host, job.am_port))
      if (auto live = watcher.poll(seconds(5)))
        return live;
  }
  if (auto fin = final_status_of(job)) {
    gate::forget_secret(job.app_id);
    return fin;
  }
  if (!secret) {
    *problem = "the ApplicationMaster of " + job.app_id + " runs, but " +
               describe(secret.error());
    return std::nullopt;
  }
  *problem = "the ApplicationMaster of " + job.app_id + " (pid " +
             std::to_string(job.am_pid) + ", " + job.am_host + ":" +
             std::to_string(job.am_port) + ") does not answer; see " + job.dir +
             "/am.log";
  return std::nullopt;
}

void print_status(const job_status& st, const std::string& backend,
                  const std::string& where, bool as_json) {
  if (as_json) {
    auto j = json::parse(to_json(st));
    j["backend"] = backend;
    j["job_dir"] = where;
    std::cout << j.dump(-1, ' ', false, json::error_handler_t::replace) << std::endl;
    return;
  }
  std::cout << "application: " << st.app_id << "\nname: " << st.name
            << "\nbackend: " << backend << "\nstate: " << to_string(st.state)
            << "\njob dir: " << where << "\n";
  if (!st.diagnostics.empty())
    std::cout << "diagnostics: " << st.diagnostics << "\n";
  for (auto& t : st.tasks)
    std::cout << "task " << to_string(t.task) << ": " << to_string(t.state) << " "
              << t.host << ":" << t.port << " " << t.container_id << "\n";
}

bool wait_gone(pid_t pid, const std::string& app_id, milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (is_am_of(pid, app_id)) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return true;
}

// The AM did not stop (or died without a word): end its session and record
// the kill, as tony-submit does after Ctrl-C.
void force_kill(const local_job& job) {
  process::kill_session(job.am_pid, SIGKILL);
  wait_gone(job.am_pid, job.app_id, seconds(5));
  if (final_status_of(job))
    return;
  job_status st;
  st.app_id = job.app_id;
  st.name = job.name;
  st.state = job_state::killed;
  st.diagnostics = "killed by tony-submit --kill; the ApplicationMaster had to be "
                   "killed without a final status (see " +
                   job.dir + "/am.log)";
  st.finished_ms = std::chrono::duration_cast<milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  std::ofstream out(job.dir + "/status.json", std::ios::trunc);
  out << to_json(st, 2);
}

int kill_local(const local_job& job) {
  if (auto st = final_status_of(job)) {
    std::cout << "tony: " << job.app_id << " already ended: " << to_string(st->state)
              << std::endl;
    return exit_succeeded;
  }
  if (job.am_pid == 0) {
    complain(job.app_id + " is still starting (no " + job.dir +
             "/am.json yet); try again in a moment");
    return exit_infra;
  }
  if (is_am_of(job.am_pid, job.app_id)) {
    // The AM records a KILLED job on SIGTERM and stops every container.
    ::kill(job.am_pid, SIGTERM);
    if (!wait_gone(job.am_pid, job.app_id,
                   milliseconds(job.stop_grace_ms) + seconds(15))) {
      complain("the ApplicationMaster of " + job.app_id +
               " did not stop in time; killing it");
      force_kill(job);
    }
  } else if (!final_status_of(job)) {
    force_kill(job); // its containers' sessions may still run
  }
  std::cout << "tony: " << job.app_id << " killed" << std::endl;
  return exit_succeeded;
}

std::string banner(const task_status& t, const std::string& file) {
  return "==> " + to_string(t.task) + " " + file + " (" + t.log_dir + "/" + file +
         ") <==";
}

// Routes an id to its backend; 0 with `*local_dir` set for a local job,
// 1 for YARN, else the exit code of an unknown id.
int route(const std::string& app_id, const submit_options& opts, std::string* local_dir) {
  if (!valid_app_id(app_id)) {
    complain("'" + app_id +
             "' is not an application id; they look like application_1700000000000_0042");
    return exit_usage;
  }
  *local_dir = local_job_dir(app_id, opts);
  if (opts.backend == "yarn")
    return 1;
  if (!local_dir->empty())
    return 0;
  if (opts.backend.empty() && hadoop_conf_known(opts))
    return 1;
  auto jobs_dir = expand_home(opts.jobs_dir.empty() ? "~/.tony/jobs" : opts.jobs_dir);
  complain("no job " + app_id + " in " + jobs_dir + " (local backend)" +
           (opts.backend.empty()
                ? std::string{", and no Hadoop configuration to ask YARN (pass "
                              "--hadoop-conf DIR or set HADOOP_CONF_DIR)"}
                : std::string{}) +
           "; for a local job in another jobs dir pass --jobs-dir DIR");
  return exit_usage;
}

} // namespace

bool valid_app_id(const std::string& app_id) {
  static const std::regex rx{"application_[0-9]+_[0-9]+"};
  return std::regex_match(app_id, rx);
}

std::string local_job_dir(const std::string& app_id, const submit_options& opts) {
  auto jobs_dir = expand_home(opts.jobs_dir.empty() ? "~/.tony/jobs" : opts.jobs_dir);
  auto dir = jobs_dir + "/" + app_id;
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::exists(dir + "/job.json", ec) ? dir
                                                                        : std::string{};
}

int status_command(const std::string& app_id, const submit_options& opts, bool json) {
  std::string dir;
  if (auto r = route(app_id, opts, &dir); r != 0)
    return r == 1 ? status_yarn_application(app_id, opts, json) : r;
  std::string problem;
  auto st = local_status(read_local_job(app_id, dir), &problem);
  if (!st) {
    complain(problem);
    return exit_infra;
  }
  print_status(*st, "local", dir, json);
  return exit_succeeded;
}

int kill_command(const std::string& app_id, const submit_options& opts) {
  std::string dir;
  if (auto r = route(app_id, opts, &dir); r != 0)
    return r == 1 ? kill_yarn_application(app_id, opts) : r;
  return kill_local(read_local_job(app_id, dir));
}

int logs_command(const std::string& app_id, const submit_options& opts,
                 const logs_request& req) {
  std::string dir;
  if (auto r = route(app_id, opts, &dir); r != 0)
    return r == 1 ? logs_yarn_application(app_id, opts, req) : r;
  std::string problem;
  auto st = local_status(read_local_job(app_id, dir), &problem);
  if (!st) {
    complain(problem);
    return exit_infra;
  }
  return print_task_logs(*st, req, [](const task_status& t, const std::string& file) {
    return t.log_dir.empty() ? std::nullopt : read_file(t.log_dir + "/" + file);
  });
}

int print_task_logs(const job_status& st, const logs_request& req,
                    const std::function<std::optional<std::string>(
                        const task_status&, const std::string&)>& read) {
  std::vector<const task_status*> tasks;
  for (auto& t : st.tasks)
    if (req.task.empty() || to_string(t.task) == req.task)
      tasks.push_back(&t); // every attempt, in order
  if (tasks.empty()) {
    std::string known;
    for (auto& t : st.tasks)
      known += (known.empty() ? "" : ", ") + to_string(t.task);
    complain(
        req.task.empty()
            ? st.app_id + " has no tasks yet (" + to_string(st.state) + ")"
            : "no task " + req.task + " in " + st.app_id +
                  (known.empty() ? " (it has no tasks yet)" : "; its tasks: " + known));
    return exit_usage;
  }
  // One named file of one task: its bytes alone, for programs.
  if (!req.file.empty() && !req.task.empty()) {
    auto content = read(*tasks.back(), req.file);
    if (!content) {
      complain(
          req.task + " of " + st.app_id + " has no file " + req.file + " in " +
          (tasks.back()->log_dir.empty() ? "(no log dir yet)" : tasks.back()->log_dir));
      return exit_usage;
    }
    std::cout << *content << std::flush;
    return exit_succeeded;
  }
  std::vector<std::string> files = {"stdout", "stderr"};
  if (!req.file.empty())
    files = {req.file};
  for (auto* t : tasks)
    for (auto& file : files) {
      std::cout << banner(*t, file) << "\n";
      auto content = read(*t, file);
      std::cout << (content ? *content : std::string{"(not there)\n"});
      if (content && !content->empty() && content->back() != '\n')
        std::cout << "\n";
    }
  std::cout << std::flush;
  return exit_succeeded;
}

} // namespace tony
