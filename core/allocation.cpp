// Allocation and launch (doc/lifecycle.md): the RM's registration, which
// refuses a job that cannot fit, hands a later AM attempt to take_over,
// or starts the first attempt; an attempt's fresh task table and its asks;
// grants matched to tasks and launched; a launch that fails; the attempt's
// allocation deadline; and the nodes the job's next containers avoid.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "core/lifecycle.hpp"
#include "core/placement.hpp"

namespace tony::core {

void lifecycle::on(const rm_registered& e) {
  if (end_ != end_phase::none)
    return;
  auto why = capacity_refusal(cfg_.job, e.reg.max_capability, e.reg.cluster_capacity);
  if (why.empty())
    why = placement_refusal(cfg_.job, cfg_.nodes.size());
  if (!why.empty()) {
    finish(job_state::failed, why);
    return;
  }
  if (cfg_.resume || !e.reg.previous_containers.empty()) {
    take_over(e.reg.previous_containers);
    return;
  }
  start_attempt();
}

std::vector<task_id> lifecycle::fresh_table() {
  tasks_.clear();
  by_container_.clear();
  for (auto i = timers_.begin(); i != timers_.end();) {
    auto k = i->second.kind;
    // The job's own timers outlive an attempt; every other kind is the attempt's.
    bool attempt_bound = k != timer_kind::job_timeout && k != timer_kind::stop_grace &&
                         k != timer_kind::heartbeat_check &&
                         k != timer_kind::container_reasons;
    i = attempt_bound ? timers_.erase(i) : std::next(i);
  }
  std::vector<task_id> ids;
  for (auto& type : cfg_.job.tasks)
    for (int32_t i = 0; i < type.instances; ++i) {
      task_record t;
      t.id = {type.name, i};
      t.type = &type;
      ids.push_back(t.id);
      tasks_.push_back(std::move(t));
    }
  return ids;
}

void lifecycle::start_attempt() {
  auto ids = fresh_table();
  say(note::info, "attempt " + std::to_string(attempt_) + ": asking for " +
                      std::to_string(ids.size()) + " containers");
  state_ = job_state::allocating;
  for (auto& type : cfg_.job.tasks)
    if (auto line = placement_line(type, cfg_.nodes.size(), cfg_.placement_constraints,
                                   cfg_.placement_processor);
        attempt_ == 1 && !line.empty())
      say(note::info, line);
  emit(expect_tasks{std::move(ids), attempt_});
  // One ask per priority: the type's own, and one per group of its tasks
  // with a capability of their own (they share a priority).
  for (auto& type : cfg_.job.tasks) {
    std::map<int32_t, container_ask> by_priority;
    for (int32_t i = 0; i < type.instances; ++i) {
      auto [it, fresh] = by_priority.emplace(type.priority_of(i), ask_for(type, i, 1));
      if (!fresh)
        ++it->second.count;
    }
    for (auto& [prio, ask] : by_priority)
      emit(ask_containers{std::move(ask)});
  }
  if (cfg_.job.policy.allocation_timeout_ms > 0)
    arm(timer_kind::allocation, cfg_.job.policy.allocation_timeout_ms);
}

container_ask lifecycle::ask_for(const task_type_spec& type, int32_t index,
                                 int32_t count) const {
  container_ask ask{type.priority_of(index), type.name, type.capability_of(index),
                    type.node_label, count};
  ask.nodes = usable_nodes(cfg_.nodes, avoided_nodes_);
  ask.racks = cfg_.racks;
  ask.pack = type.pack;
  ask.max_per_node = type.max_per_node;
  return ask;
}

void lifecycle::on(const granted& e) {
  std::vector<std::string> excess;
  for (auto& c : e.containers) {
    task_record* match = nullptr;
    if (end_ == end_phase::none)
      for (auto& t : tasks_)
        if (t.state == task_state::requested &&
            t.type->priority_of(t.id.index) == c.priority) {
          match = &t;
          break;
        }
    if (match == nullptr) {
      say(note::info, "releasing excess container " + c.id);
      excess.push_back(c.id);
      continue;
    }
    match->state = task_state::allocated;
    match->c = c;
    match->has_container = true;
    match->container_done = false;
    by_container_[c.id] = static_cast<size_t>(match - tasks_.data());
    say(note::info, to_string(match->id) + " -> " + c.id + " on " + c.host);
    emit(launch{match->id, attempt_, match->restarts, c});
  }
  if (!excess.empty())
    emit(release_containers{std::move(excess)});
  if (end_ == end_phase::none && state_ == job_state::allocating &&
      std::none_of(tasks_.begin(), tasks_.end(),
                   [](auto& t) { return t.state == task_state::requested; })) {
    state_ = job_state::registering;
    disarm(timer_kind::allocation); // the gang is complete
  }
}

void lifecycle::on(const launch_failed& e) {
  auto t = by_container(e.container_id);
  if (t == nullptr)
    return;
  t->container_done = true;
  // A NodeManager that takes the ResourceManager's container tokens for
  // expired has a clock ahead of the RM's: it starts no container, so the
  // node is avoided like a lost one (YARN's words: hadoop/yarn/node_clock.hpp).
  if (end_ == end_phase::none && e.why.find("This token is expired") != std::string::npos)
    avoid_node(t->c.host, *t,
               "starts no container: its clock is ahead of the "
               "ResourceManager's");
  task_failed(*t, task_state::failed,
              to_string(t->id) + " could not be launched in " + t->c.id + " on " +
                  t->c.host + ": " + e.why);
}

void lifecycle::on_attempt_deadline(timer_kind kind) {
  auto& policy = cfg_.job.policy;
  if (kind == timer_kind::allocation) {
    std::vector<std::string> missing;
    for (auto& t : tasks_)
      if (t.state == task_state::requested)
        missing.push_back(to_string(t.id) + " (" +
                          to_string(t.type->capability_of(t.id.index)) + ")");
    if (missing.empty())
      return;
    emit(cancel_asks{});
    job_failure("allocation timeout: after " +
                std::to_string(policy.allocation_timeout_ms / 1000) +
                " s the resource manager had not granted " +
                std::to_string(missing.size()) + " of " + std::to_string(tasks_.size()) +
                " containers; missing: " + base::join(missing, ", "));
    return;
  }
  on_registration_deadline();
}

void lifecycle::avoid_node(const std::string& host, const task_record& t,
                           const std::string& why) {
  // A NodeManager killed with its containers drops their executors' connections
  // at once, while the RM takes its liveness expiry to call the node lost and
  // may grant the next containers there meanwhile. The RM keeps at least one
  // node allowed (core/allocation_ledger.hpp).
  if (host.empty() || std::find(avoided_nodes_.begin(), avoided_nodes_.end(), host) !=
                          avoided_nodes_.end())
    return;
  avoided_nodes_.push_back(host);
  say(note::warn, "node " + host +
                      (why.empty() ? " lost " + to_string(t.id)
                                   : " " + why + " (" + to_string(t.id) + ")") +
                      ": the job's next containers avoid it");
  emit(avoid_nodes{{host}});
}

} // namespace tony::core
