// tony-bench-floor-am: YARN's own floor for the launch benchmarks
// (bench/README.md, "YARN's floor"). A no-op ApplicationMaster that does
// only what any AM must do to run a job's commands, as fast as YARN lets it:
//
//   register ─▶ ask every task's container (node, rack and * asks on the
//   cluster's nodes, as tony asks) ─▶ allocate every 50 ms until all are
//   granted ─▶ start each container at once, in parallel, with the task's
//   command itself (no executor, no cluster spec) ─▶ wait for every
//   container's end ─▶ unregister.
//
// It is submitted by tony-submit with `[cluster] install_dir` naming a
// directory where this program is called `tony-am` (bench.py does that), so
// the client, the staging and the AM container's launch are tony's; the
// task containers localize what tony's task containers localize but tony's
// own binaries. Submit → every command started, for this AM, is the floor
// tony's AM and executors are measured against.
//
// Arguments: those tony-submit gives tony-am (--job FILE; the others are
// accepted and ignored). Exit 0 once unregistered (SUCCEEDED when every
// command exited 0), 1 on any failure, with a line saying what happened;
// every wait is bounded (--timeout seconds, default 300).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config/job_json.hpp"
#include "hadoop/credentials.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/user.hpp"
#include "hadoop/webhdfs.hpp"
#include "hadoop/yarn/amrm_client.hpp"
#include "hadoop/yarn/nm_client.hpp"
#include "hadoop/yarn/protocols.hpp"
#include "messages/error.hpp"
#include "runtime/staging/stager.hpp"
#include "runtime/yarn/am_env.hpp"

namespace {

using namespace tony;
using clock_type = std::chrono::steady_clock;

std::string env_or(const char* key, const std::string& fallback = {}) {
  auto* v = std::getenv(key);
  return v ? std::string{v} : fallback;
}

double wall_now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void say(const std::string& line) {
  std::fprintf(stderr, "%.3f floor-am: %s\n", wall_now(), line.c_str());
  std::fflush(stderr);
}

struct task_slot {
  const task_type_spec* type;
  int32_t index;
};

int run(int argc, char** argv) {
  std::string job_file = "job.json";
  int timeout_s = 300;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "--job")
      job_file = argv[++i];
    else if (a == "--timeout")
      timeout_s = std::atoi(argv[++i]);
  }
  auto until = clock_type::now() + std::chrono::seconds(timeout_s);
  auto deadline = [&] {
    return hadoop::deadline_after(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::max(
            until - clock_type::now(), clock_type::duration{std::chrono::seconds(1)})));
  };

  std::ifstream in(job_file);
  if (!in) {
    say("cannot read " + job_file);
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto job = job_from_json(text.str());
  if (!job) {
    say(job_file + ": " + describe(job.error()));
    return 1;
  }

  auto creds = hadoop::credentials_from_environment();
  if (!creds) {
    say("cannot read the container's tokens: " + creds.error().message());
    return 1;
  }
  auto token = yarn::amrm_client::find_amrm_token(*creds);
  if (!token) {
    say(token.error().message());
    return 1;
  }
  auto scheduler = yarn::parse_rm_peers(env_or(yarn_env::scheduler), 8030);
  if (!scheduler) {
    say(std::string{yarn_env::scheduler} + ": " + scheduler.error().message());
    return 1;
  }
  auto resources = parse_resources(env_or(yarn_env::executor_resources));
  if (!resources) {
    say(std::string{yarn_env::executor_resources} + ": " + describe(resources.error()));
    return 1;
  }
  std::vector<std::string> nodes;
  std::vector<std::string> racks;
  for (auto& place : parse_nodes(env_or(yarn_env::nodes))) {
    nodes.push_back(place.host);
    if (!place.rack.empty() &&
        std::find(racks.begin(), racks.end(), place.rack) == racks.end())
      racks.push_back(place.rack);
  }

  auto ipc = std::make_shared<hadoop::ipc_client>();
  auto nm_tokens = std::make_shared<yarn::nm_token_cache>();
  yarn::amrm_client rm{ipc, *scheduler, *token, nm_tokens};
  yarn::nm_client nm{ipc, nm_tokens};

  am_registration reg;
  reg.host = env_or("NM_HOST", "127.0.0.1");
  if (auto r = rm.register_application_master(reg, deadline()); !r) {
    say("register: " + r.error().message());
    return 1;
  }
  say("registered");

  // One ask per task type, as tony's AM asks (core/allocation.cpp ask_for):
  // its priority, its capability, every node and rack besides `*`.
  std::map<int32_t, std::vector<task_slot>> waiting; // by priority
  int32_t total = 0;
  allocate_request req;
  for (auto& type : job->tasks) {
    std::map<int32_t, container_ask> by_priority;
    for (int32_t i = 0; i < type.instances; ++i) {
      auto [it, fresh] = by_priority.emplace(
          type.priority_of(i), container_ask{type.priority_of(i), type.name,
                                             type.capability_of(i), type.node_label, 0});
      it->second.count++;
      it->second.nodes = nodes;
      it->second.racks = racks;
      waiting[type.priority_of(i)].push_back(task_slot{&type, i});
      ++total;
    }
    for (auto& [prio, ask] : by_priority)
      req.asks.push_back(ask);
  }
  for (auto& [prio, slots] : waiting)
    std::reverse(slots.begin(), slots.end()); // taken from the back: index order

  std::mutex mtx;
  std::vector<std::string> failures;
  std::vector<std::thread> starters;
  std::set<std::string> running;
  int32_t granted = 0;
  int32_t completed = 0;
  auto launch = [&](container c, task_slot slot) {
    launch_spec spec;
    spec.target = c;
    spec.env = escape_env({{"JOB_NAME", slot.type->name},
                           {"TASK_INDEX", std::to_string(slot.index)},
                           {"TONY_FLOOR_COMMAND", slot.type->command}});
    // The NodeManager's launch script runs `exec /bin/bash -c "<command>"`:
    // the variable is expanded there and bash -c runs its text as it is.
    spec.command = {"$TONY_FLOOR_COMMAND", "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"};
    spec.resources = *resources;
    auto ok = nm.start_container(spec, deadline());
    std::lock_guard<std::mutex> guard{mtx};
    if (!ok)
      failures.push_back("start " + c.id + " on " + c.host + ": " + ok.error().message());
  };

  final_report report;
  report.final_status = "SUCCEEDED";
  while (true) {
    if (clock_type::now() > until) {
      report.final_status = "FAILED";
      report.diagnostics = "floor-am: not every container ran and ended within " +
                           std::to_string(timeout_s) + " s (" + std::to_string(granted) +
                           " of " + std::to_string(total) + " granted, " +
                           std::to_string(completed) + " ended)";
      break;
    }
    auto resp = rm.allocate(req, deadline());
    if (!resp) {
      say("allocate: " + resp.error().message());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if (resp->shutdown) {
      report.final_status = "FAILED";
      report.diagnostics = "floor-am: the ResourceManager ordered a shutdown";
      break;
    }
    if (resp->resync) {
      req.response_id = 0;
      continue;
    }
    req.response_id = resp->response_id;
    req.releases.clear();
    for (auto& c : resp->allocated) {
      auto slots = waiting.find(c.priority);
      if (slots == waiting.end() || slots->second.empty()) {
        req.releases.push_back(c.id); // more than asked: give it back
        continue;
      }
      auto slot = slots->second.back();
      slots->second.pop_back();
      ++granted;
      running.insert(c.id);
      starters.emplace_back(launch, c, slot);
    }
    // The asks are absolute counts: what is still missing.
    for (auto& ask : req.asks) {
      auto slots = waiting.find(ask.priority);
      ask.count = slots == waiting.end() ? 0 : static_cast<int32_t>(slots->second.size());
    }
    if (!resp->allocated.empty())
      say("granted " + std::to_string(granted) + " of " + std::to_string(total));
    for (auto& done : resp->completed) {
      if (running.erase(done.container_id) == 0)
        continue;
      ++completed;
      if (done.exit_status != 0 && report.final_status == "SUCCEEDED") {
        report.final_status = "FAILED";
        report.diagnostics = "floor-am: container " + done.container_id +
                             " exited with " + std::to_string(done.exit_status) + ": " +
                             done.diagnostics;
      }
    }
    {
      std::lock_guard<std::mutex> guard{mtx};
      if (!failures.empty()) {
        report.final_status = "FAILED";
        report.diagnostics = "floor-am: " + failures.front();
        break;
      }
    }
    if (completed == total)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& t : starters)
    t.join();
  say("unregistering: " + report.final_status + " " + report.diagnostics);
  if (auto ok = rm.finish_application_master(report, deadline()); !ok) {
    say("unregister: " + ok.error().message());
    return 1;
  }
  // tony-am's duty too: the job's staging dir goes (after the timing).
  auto staging_uri = env_or(yarn_env::staging_uri);
  if (!staging_uri.empty()) {
    webhdfs::namenode_http nn;
    nn.base = env_or(yarn_env::webhdfs_address);
    nn.auth.user = hadoop::current_user();
    if (auto stager = staging::make_stager(staging_uri, nn); stager)
      (void)(*stager)->remove_all();
  }
  return report.final_status == "SUCCEEDED" ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    say(std::string{"failed: "} + e.what());
    return 1;
  }
}
