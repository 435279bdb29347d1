#include "submit/client_task.hpp"

#include <signal.h>

#include <iostream>
#include <thread>

#include "config/task_env.hpp"
#include "messages/error.hpp"
#include "runtime/process/process.hpp"
#include "submit/submit.hpp"

namespace tony {

client_task::client_task(std::string command,
                         std::map<std::string, std::string> extra_env, job_spec job)
    : command_(std::move(command))
    , extra_env_(std::move(extra_env))
    , job_(std::move(job)) {
  // nop
}

client_task::~client_task() {
  stop(std::chrono::milliseconds{0});
}

std::map<std::string, std::string> client_task::environment(const job_status& st) const {
  // The cluster as every task sees it: each task's advertised address.
  cluster_map cluster;
  for (auto& t : st.tasks) {
    if (t.port <= 0 || t.task.index < 0)
      continue;
    auto& addrs = cluster[t.task.type];
    if (addrs.size() <= static_cast<size_t>(t.task.index))
      addrs.resize(static_cast<size_t>(t.task.index) + 1);
    addrs[static_cast<size_t>(t.task.index)] = t.host + ":" + std::to_string(t.port);
  }
  task_env_input in;
  in.framework = "standalone"; // outside the training cluster: no TF_CONFIG, no rank
  in.app_id = st.app_id;
  in.task = {"client", 0};
  in.attempt = st.attempt;
  in.cluster = std::move(cluster);
  in.input_path = job_.input_path;
  in.output_path = job_.output_path;
  auto env = process::current_environment();
  for (auto& [k, v] : job_.env)
    env[k] = v;
  for (auto& [k, v] : render_task_env(in))
    env[k] = v;
  for (auto& [k, v] : extra_env_)
    env[k] = v;
  return env;
}

void client_task::on_status(const job_status& st) {
  if (pid_ > 0 || exit_ || st.state != job_state::running)
    return;
  process::spawn_options opts;
  opts.argv = {"/bin/sh", "-c", command_};
  opts.env = environment(st);
  opts.die_with_parent = true;
  auto child = process::spawn(opts);
  if (!child) {
    std::cerr << "tony-submit: cannot start client:0: " << describe(child.error())
              << std::endl;
    exit_ = 127;
    return;
  }
  pid_ = child->pid;
  std::cout << "tony: client:0 started: " << command_ << std::endl;
}

std::optional<int> client_task::ended() {
  if (!exit_ && pid_ > 0)
    if (auto x = process::try_wait(pid_)) {
      exit_ = x->exit_code;
      pid_ = -1;
    }
  return exit_;
}

void client_task::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0 || ended())
    return;
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (!ended() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  if (!ended()) {
    ::kill(pid_, SIGKILL);
    exit_ = process::wait(pid_).exit_code;
    pid_ = -1;
  }
}

void client_hook::on_status(const job_status& st) const {
  if (client != nullptr)
    client->on_status(st);
}

std::string client_hook::stop_reason() const {
  if (client == nullptr)
    return {};
  auto code = client->ended();
  if (!code)
    return {};
  return "client:0 exited with code " + std::to_string(*code) + ": stopping the job";
}

int client_hook::exit_code(int job_code, bool stopped_for_client,
                           std::chrono::milliseconds grace) const {
  if (client == nullptr)
    return job_code;
  if (stopped_for_client) {
    auto code = client->ended().value_or(1);
    return code == 0 ? exit_succeeded : exit_failed;
  }
  client->stop(grace);
  return job_code;
}

} // namespace tony
