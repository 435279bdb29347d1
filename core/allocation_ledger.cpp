#include "core/allocation_ledger.hpp"

#include <algorithm>

namespace tony::core {

void allocation_ledger::add(const container_ask& ask) {
  auto& entry = outstanding_[ask.priority];
  auto count = std::max(0, entry.count + ask.count);
  entry = ask;
  entry.count = count;
  dirty_[ask.priority] = entry;
}

void allocation_ledger::cancel_all() {
  for (auto& [prio, ask] : outstanding_) {
    if (ask.count > 0) {
      ask.count = 0;
      dirty_[prio] = ask;
    }
  }
}

void allocation_ledger::release(std::string container_id) {
  releases_.push_back(std::move(container_id));
}

void allocation_ledger::avoid(std::string host) {
  auto known = [&](auto& xs) {
    return std::find(xs.begin(), xs.end(), host) != xs.end();
  };
  if (!host.empty() && !known(to_avoid_) && !known(blacklisted_))
    to_avoid_.push_back(std::move(host));
}

std::vector<std::string> allocation_ledger::sendable_avoids() const {
  // At least one node the RM counts stays allowed.
  auto room = static_cast<size_t>(std::max(0, cluster_nodes_ - 1));
  auto taken = blacklisted_.size();
  auto n = room > taken ? std::min(room - taken, to_avoid_.size()) : size_t{0};
  return {to_avoid_.begin(), to_avoid_.begin() + static_cast<std::ptrdiff_t>(n)};
}

bool allocation_ledger::pending() const {
  for (auto& [prio, ask] : outstanding_)
    if (ask.count > 0)
      return true;
  return has_changes();
}

allocate_request allocation_ledger::next_request() const {
  allocate_request req;
  req.response_id = response_id_;
  for (auto& [prio, ask] : dirty_)
    req.asks.push_back(ask);
  req.releases = releases_;
  req.blacklist_additions = sendable_avoids();
  return req;
}

void allocation_ledger::confirm(const allocate_request& sent,
                                const allocate_response& resp) {
  for (auto& ask : sent.asks) {
    auto i = dirty_.find(ask.priority);
    if (i != dirty_.end() && i->second.count == ask.count)
      dirty_.erase(i);
  }
  auto sent_releases = std::min(sent.releases.size(), releases_.size());
  releases_.erase(releases_.begin(),
                  releases_.begin() + static_cast<std::ptrdiff_t>(sent_releases));
  for (auto& host : sent.blacklist_additions) {
    auto i = std::find(to_avoid_.begin(), to_avoid_.end(), host);
    if (i != to_avoid_.end()) {
      to_avoid_.erase(i);
      blacklisted_.push_back(host);
    }
  }
  if (resp.num_cluster_nodes > 0)
    cluster_nodes_ = resp.num_cluster_nodes;
  response_id_ = resp.response_id;
  for (auto& c : resp.allocated) {
    auto i = outstanding_.find(c.priority);
    if (i != outstanding_.end() && i->second.count > 0)
      --i->second.count;
  }
}

void allocation_ledger::resync() {
  response_id_ = 0;
  // The new RM knows no blacklist either: every host goes again.
  to_avoid_.insert(to_avoid_.begin(), blacklisted_.begin(), blacklisted_.end());
  blacklisted_.clear();
  for (auto& [prio, ask] : outstanding_)
    dirty_[prio] = ask;
}

int32_t allocation_ledger::outstanding(int32_t priority) const {
  auto i = outstanding_.find(priority);
  return i == outstanding_.end() ? 0 : i->second.count;
}

} // namespace tony::core
