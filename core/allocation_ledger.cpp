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
  response_id_ = resp.response_id;
  for (auto& c : resp.allocated) {
    auto i = outstanding_.find(c.priority);
    if (i != outstanding_.end() && i->second.count > 0)
      --i->second.count;
  }
}

void allocation_ledger::resync() {
  response_id_ = 0;
  for (auto& [prio, ask] : outstanding_)
    dirty_[prio] = ask;
}

int32_t allocation_ledger::outstanding(int32_t priority) const {
  auto i = outstanding_.find(priority);
  return i == outstanding_.end() ? 0 : i->second.count;
}

} // namespace tony::core
