#include "runtime/local/local_cluster.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "messages/error.hpp"
#include "runtime/metrics/proc_tree.hpp"
#include "runtime/process/process.hpp"

namespace fs = std::filesystem;

namespace tony::local {

namespace {

// "file:///a/b" or "/a/b" -> "/a/b".
std::string local_path(const std::string& url) {
  constexpr std::string_view prefix = "file://";
  if (url.compare(0, prefix.size(), prefix) == 0)
    return url.substr(prefix.size());
  return url;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

// Waits until session `sid` has no live member or `deadline` passes.
bool wait_session_empty(pid_t sid, std::chrono::steady_clock::time_point deadline) {
  while (!process::session_members(sid).empty()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

} // namespace

std::string make_container_id(const std::string& app_id, int32_t attempt,
                              int64_t number) {
  // app_id = application_<ts>_<nnnn>
  auto rest = app_id.substr(std::string("application_").size());
  char buf[64];
  std::snprintf(buf, sizeof(buf), "_%02d_%06lld", attempt,
                static_cast<long long>(number));
  return "container_" + rest + buf;
}

local_cluster::local_cluster(local_cluster_config cfg)
    : cfg_(std::move(cfg))
    , free_(cfg_.capacity) {
  free_gpus_ = cfg_.gpus;
  free_.gpus = static_cast<int32_t>(cfg_.gpus.size());
  cfg_.capacity.gpus = free_.gpus;
  if (cfg_.memory_check_ms > 0)
    monitor_ = std::thread{[this] { memory_loop(); }};
  launcher_ = std::thread{[this] { launch_loop(); }};
}

local_cluster::~local_cluster() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (monitor_.joinable())
    monitor_.join();
  stop_all();
  {
    std::lock_guard<std::mutex> guard{mtx_};
    launcher_quit_ = true;
  }
  launch_cv_.notify_all();
  if (launcher_.joinable())
    launcher_.join();
  std::vector<std::thread> reapers;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& [id, rec] : containers_)
      if (rec->reaper.joinable())
        reapers.push_back(std::move(rec->reaper));
  }
  for (auto& t : reapers)
    t.join();
  std::vector<std::thread> background;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    background.swap(background_);
  }
  for (auto& t : background)
    t.join();
}

rm_registration local_cluster::register_am(const am_registration&) {
  rm_registration result;
  result.max_capability = cfg_.capacity;
  result.cluster_capacity = cfg_.capacity;
  result.queue = "default";
  return result;
}

allocate_response local_cluster::allocate(const allocate_request& req) {
  std::vector<std::string> to_stop;
  allocate_response result;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& ask : req.asks)
      asks_[ask.priority] = ask;
    for (auto& id : req.releases) {
      auto i = containers_.find(id);
      if (i == containers_.end() || i->second->ended)
        continue;
      if (i->second->started) {
        to_stop.push_back(id);
      } else {
        finish_locked(*i->second, exit_killed_by_am,
                      "Container released by the ApplicationMaster.");
      }
    }
    for (auto& [prio, ask] : asks_) {
      while (ask.count > 0 && fits(ask.capability, free_)) {
        container c;
        c.id = make_container_id(cfg_.app_id, 1, next_container_++);
        c.host = cfg_.host;
        c.port = 0;
        c.capability = ask.capability;
        c.priority = prio;
        free_.memory_mb -= ask.capability.memory_mb;
        free_.vcores -= ask.capability.vcores;
        free_.gpus -= ask.capability.gpus;
        --ask.count;
        auto rec = std::make_unique<container_rec>();
        rec->c = c;
        // The lowest free GPUs: disjoint from every running container's.
        std::sort(free_gpus_.begin(), free_gpus_.end());
        auto n = static_cast<size_t>(std::max(ask.capability.gpus, 0));
        rec->gpu_ids.assign(free_gpus_.begin(),
                            free_gpus_.begin() + std::min(n, free_gpus_.size()));
        free_gpus_.erase(free_gpus_.begin(),
                         free_gpus_.begin() + std::min(n, free_gpus_.size()));
        containers_.emplace(c.id, std::move(rec));
        result.allocated.push_back(std::move(c));
      }
    }
    result.completed.swap(completed_);
    result.num_cluster_nodes = 1;
    result.headroom = free_;
    result.response_id = req.response_id + 1;
  }
  // Stopping blocks for the grace period: never on the caller's thread.
  if (!to_stop.empty()) {
    std::lock_guard<std::mutex> guard{mtx_};
    background_.emplace_back([this, to_stop] {
      for (auto& id : to_stop)
        stop(id);
    });
  }
  return result;
}

void local_cluster::finish_locked(container_rec& rec, int32_t status, std::string diag) {
  if (rec.ended)
    return;
  rec.ended = true;
  free_.memory_mb += rec.c.capability.memory_mb;
  free_.vcores += rec.c.capability.vcores;
  free_.gpus += rec.c.capability.gpus;
  free_gpus_.insert(free_gpus_.end(), rec.gpu_ids.begin(), rec.gpu_ids.end());
  completed_.push_back({rec.c.id, status, std::move(diag)});
  ended_cv_.notify_all();
}

std::string local_cluster::container_dir(const std::string& container_id) const {
  return cfg_.job_dir + "/" + container_id;
}

std::string local_cluster::unpack_once(const local_resource& res) {
  // Only the launcher thread unpacks: the cluster's lock is held to look up
  // and record, never while tar runs (start() and allocate() go on).
  std::string dir;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = unpacked_.find(res.url); i != unpacked_.end())
      return i->second;
    // One directory per archive: two archives may share a link name (one
    // per task type).
    dir =
        cfg_.job_dir + "/cache/" + std::to_string(unpacked_.size() + 1) + "-" + res.name;
  }
  auto src = local_path(res.url);
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::vector<std::string> argv;
  auto lower = src;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ends_with(lower, ".zip") || ends_with(lower, ".jar"))
    argv = {"unzip", "-q", "-o", src, "-d", dir};
  else
    argv = {"tar", "-xf", src, "-C", dir};
  process::spawn_options opts;
  opts.argv = argv;
  opts.env = cfg_.base_env;
  opts.stdout_path = dir + ".unpack.log";
  opts.stderr_path = opts.stdout_path;
  auto child = process::spawn(opts);
  if (!child)
    return {};
  auto exit = process::wait(child->pid);
  if (exit.exit_code != 0)
    return {};
  std::lock_guard<std::mutex> guard{mtx_};
  unpacked_.emplace(res.url, dir);
  return dir;
}

expected<void> local_cluster::localize(const launch_spec& spec, const std::string& dir) {
  for (auto& res : spec.resources) {
    auto target = res.archive ? unpack_once(res) : local_path(res.url);
    if (target.empty())
      return make_error(errc::infrastructure, "cannot unpack archive " + res.url +
                                                  " for resource '" + res.name +
                                                  "' (see the .unpack.log files in " +
                                                  cfg_.job_dir + "/cache)");
    std::error_code ec;
    if (!fs::exists(target, ec))
      return make_error(errc::infrastructure,
                        "resource '" + res.name + "' not found: " + target);
    fs::create_symlink(target, dir + "/" + res.name, ec);
    if (ec)
      return make_error(errc::infrastructure, "cannot link resource '" + res.name +
                                                  "' into " + dir + ": " + ec.message());
  }
  return ok;
}

expected<std::string> local_cluster::start(const launch_spec& spec) {
  auto& id = spec.target.id;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = containers_.find(id);
    if (i == containers_.end())
      return make_error(errc::protocol, "container " + id + " was not allocated");
    if (i->second->started || i->second->ended)
      return make_error(errc::protocol, "container " + id + " was already started");
    i->second->started = true;
    i->second->launching = true;
    launches_.push_back(spec);
  }
  launch_cv_.notify_one();
  return id;
}

void local_cluster::launch_loop() {
  std::unique_lock<std::mutex> guard{mtx_};
  for (;;) {
    launch_cv_.wait(guard, [this] { return launcher_quit_ || !launches_.empty(); });
    if (launches_.empty())
      return; // launcher_quit_, nothing left
    auto spec = std::move(launches_.front());
    launches_.pop_front();
    guard.unlock();
    launch(spec);
    guard.lock();
  }
}

void local_cluster::launch(const launch_spec& spec) {
  auto& id = spec.target.id;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& rec = *containers_.at(id);
    // Stopped (or the cluster going down) before its turn: it never runs.
    if (rec.stop_requested || rec.ended || launcher_quit_) {
      rec.launching = false;
      finish_locked(rec, exit_killed_by_am, "Container killed by the ApplicationMaster.");
      launched_cv_.notify_all();
      return;
    }
  }
  auto child = spawn_container(spec);
  pid_t late_stop = -1;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& rec = *containers_.at(id);
    rec.launching = false;
    if (!child) {
      finish_locked(rec, -1, "Container launch failed: " + describe(child.error()));
    } else {
      rec.pid = *child;
      rec.reaper = std::thread{[this, id, pid = *child] { reap(id, pid); }};
      spdlog::debug("local: started {} (pid {})", id, *child);
      if (rec.stop_requested) // a stop came while it was being launched
        late_stop = *child;
    }
  }
  launched_cv_.notify_all();
  if (late_stop > 0)
    process::kill_session(late_stop, SIGKILL);
}

expected<pid_t> local_cluster::spawn_container(const launch_spec& spec) {
  auto& id = spec.target.id;
  auto dir = container_dir(id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return make_error(errc::infrastructure,
                      "cannot create container dir " + dir + ": " + ec.message());
  if (auto res = localize(spec, dir); !res)
    return res.error();
  // Container environment: base, then the launch context's, then what the
  // node manager always sets.
  auto env = cfg_.base_env;
  for (auto& [k, v] : spec.env)
    env[k] = v;
  env["CONTAINER_ID"] = id;
  env["NM_HOST"] = cfg_.host;
  env["NM_PORT"] = "0";
  env["LOG_DIRS"] = dir;
  env["LOCAL_DIRS"] = cfg_.job_dir;
  env["PWD"] = dir;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& rec = *containers_.at(id);
    gpu_env(rec, env);
    // The executor's contract (runtime/launch_context.hpp) names the image.
    if (env.count("TONY_DOCKER_IMAGE"))
      rec.image_env = env;
  }
  std::string command;
  for (auto& part : spec.command) {
    if (!command.empty())
      command += ' ';
    command += replace_all(part, "<LOG_DIR>", dir);
  }
  process::spawn_options opts;
  opts.argv = {"/bin/sh", "-c", command};
  opts.env = std::move(env);
  opts.cwd = dir;
  opts.new_session = true;
  opts.stdout_path = dir + "/container.out";
  opts.stderr_path = dir + "/container.out";
  auto child = process::spawn(opts);
  if (!child)
    return child.error();
  return child->pid;
}

void local_cluster::gpu_env(const container_rec& rec,
                            std::map<std::string, std::string>& env) const {
  if (cfg_.gpus.empty())
    return; // no GPUs here: the task's environment is left as it is
  std::string ids;
  for (auto i : rec.gpu_ids)
    ids += (ids.empty() ? "" : ",") + std::to_string(i);
  env["CUDA_VISIBLE_DEVICES"] = ids;
  env["NVIDIA_VISIBLE_DEVICES"] = ids.empty() ? "void" : ids;
  env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
}

void local_cluster::reap(std::string id, pid_t pid) {
  auto exit = process::wait(pid);
  // Whatever the container left behind goes with it, as on a node manager.
  process::kill_session(pid, SIGKILL);
  std::map<std::string, std::string> image_env;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    image_env = containers_.at(id)->image_env;
  }
  if (!image_env.empty())
    remove_image_container(id, image_env);
  // As a NodeManager does for a failed container: the tail of its error
  // file (the command's own stdout and stderr) goes into the diagnostics.
  std::string error_tail;
  if (exit.signal != 0 || exit.exit_code != 0)
    error_tail = ". Error file: container.out.\nLast 4096 bytes of container.out :\n" +
                 process::tail_file(container_dir(id) + "/container.out", 4096);
  std::lock_guard<std::mutex> guard{mtx_};
  auto& rec = *containers_.at(id);
  if (!rec.memory_diag.empty()) {
    auto code = std::to_string(exit.exit_code);
    finish_locked(rec, exit_killed_exceeded_pmem,
                  rec.memory_diag + "\nContainer killed on request. Exit code is " +
                      code + "\nContainer exited with a non-zero exit code " + code +
                      ". ");
    return;
  }
  if (rec.stop_requested) {
    finish_locked(rec, exit_killed_by_am, "Container killed by the ApplicationMaster.");
    return;
  }
  finish_locked(rec, exit.exit_code,
                (exit.signal
                     ? "Container exited on signal " + std::to_string(exit.signal)
                     : "Container exited with status " + std::to_string(exit.exit_code)) +
                    error_tail);
}

void local_cluster::remove_image_container(
    const std::string& id, const std::map<std::string, std::string>& env) {
  // The runtime the executor chose: TONY_CONTAINER_RUNTIME, else docker,
  // else podman (runtime/container_command.hpp); removing a container that
  // is gone already (its `run --rm` ended) is a quick error.
  process::spawn_options opts;
  opts.argv = {"/bin/sh", "-c",
               "for r in ${TONY_CONTAINER_RUNTIME:-docker podman}; do "
               "command -v \"$r\" >/dev/null 2>&1 && "
               "timeout 60 \"$r\" rm -f \"tony-$CONTAINER_ID\"; done; true"};
  opts.env = env;
  opts.cwd = "/";
  opts.stdout_path = "/dev/null";
  opts.stderr_path = "/dev/null";
  auto child = process::spawn(opts);
  if (!child) {
    spdlog::warn("local: cannot remove the task container tony-{}: {}", id,
                 describe(child.error()));
    return;
  }
  process::wait(child->pid);
}

void local_cluster::stop(const std::string& container_id) {
  pid_t pid = -1;
  {
    std::unique_lock<std::mutex> guard{mtx_};
    auto i = containers_.find(container_id);
    if (i == containers_.end())
      return;
    auto& rec = *i->second;
    if (!rec.started && !rec.ended) {
      finish_locked(rec, exit_killed_by_am, "Container killed by the ApplicationMaster.");
      return;
    }
    if (rec.ended)
      return;
    rec.stop_requested = true;
    // Queued or being launched: the launcher drops it, or kills what it
    // just started (launch()); wait for that, bounded.
    launched_cv_.wait_for(guard, std::chrono::seconds(30),
                          [&] { return !rec.launching; });
    if (rec.ended || rec.pid <= 0)
      return;
    pid = rec.pid;
  }
  using namespace std::chrono;
  process::kill_session(pid, SIGTERM);
  auto grace = steady_clock::now() + milliseconds(cfg_.stop_grace_ms);
  if (!wait_session_empty(pid, grace)) {
    process::kill_session(pid, SIGKILL);
    wait_session_empty(pid, steady_clock::now() + seconds(2));
  }
  std::unique_lock<std::mutex> guard{mtx_};
  ended_cv_.wait_for(guard, seconds(2),
                     [&] { return containers_.at(container_id)->ended; });
}

void local_cluster::stop_all() {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& [id, rec] : containers_)
      if (!rec->ended)
        ids.push_back(id);
  }
  std::vector<std::thread> workers;
  for (auto& id : ids)
    workers.emplace_back([this, id] { stop(id); });
  for (auto& w : workers)
    w.join();
}

// -- the physical-memory check ----------------------------------------------------------

void local_cluster::memory_loop() {
  std::unique_lock<std::mutex> guard{mtx_};
  while (!stopping_) {
    stop_cv_.wait_for(guard, std::chrono::milliseconds(cfg_.memory_check_ms));
    if (stopping_)
      break;
    guard.unlock();
    check_memory();
    guard.lock();
  }
}

// One round of YARN's check: a tree over twice its limit, or over it with
// processes the previous round saw already, is killed with YARN's words.
void local_cluster::check_memory() {
  struct watched {
    std::string id;
    pid_t pid;
    int64_t limit;
    std::vector<pid_t> seen;
  };
  std::vector<watched> live;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& [id, rec] : containers_)
      if (rec->started && !rec->ended && rec->pid > 0 && rec->memory_diag.empty() &&
          !rec->stop_requested && rec->c.capability.memory_mb > 0)
        live.push_back(
            {id, rec->pid, rec->c.capability.memory_mb * 1024 * 1024, rec->seen});
  }
  if (live.empty())
    return;
  auto all = metrics::read_processes();
  std::vector<pid_t> to_kill;
  for (auto& w : live) {
    auto pids = metrics::tree_of(all, w.pid);
    for (auto& [pid, p] : all) // the session too: a daemonised child stays counted
      if (p.session == w.pid && std::find(pids.begin(), pids.end(), pid) == pids.end())
        pids.push_back(pid);
    auto now = metrics::usage_of(all, pids);
    std::vector<pid_t> aged_pids;
    for (auto pid : pids)
      if (std::find(w.seen.begin(), w.seen.end(), pid) != w.seen.end())
        aged_pids.push_back(pid);
    auto aged = metrics::usage_of(all, aged_pids);
    bool over = now.rss_bytes > 2 * w.limit || aged.rss_bytes > w.limit;
    std::lock_guard<std::mutex> guard{mtx_};
    auto& rec = *containers_.at(w.id);
    rec.seen = pids;
    if (!over || rec.ended || rec.stop_requested)
      continue;
    rec.memory_diag =
        metrics::physical_memory_diagnostic(w.pid, w.id, now, w.limit, cfg_.vmem_ratio,
                                            metrics::process_tree_dump(all, pids));
    spdlog::warn("local: {}", rec.memory_diag.substr(0, rec.memory_diag.find('\n')));
    to_kill.push_back(w.pid);
  }
  if (to_kill.empty())
    return;
  // As a NodeManager's container clean-up: TERM, a moment, KILL.
  for (auto pid : to_kill)
    process::kill_session(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(cfg_.kill_delay_ms));
  for (auto pid : to_kill)
    process::kill_session(pid, SIGKILL);
}

} // namespace tony::local
