#pragma once

// The allocation ledger: the one owner of the AM's side of YARN's allocate
// protocol. It keeps what is outstanding per priority (asks carry their
// capability, label and placement), what changed since the last call, the
// containers to release, and the response id the next call echoes. The
// rm_heartbeater drives it; it does no I/O.
//
//   add / cancel_all / release ─▶ next_request ─▶ (allocate) ─▶ confirm(resp)
//                                      ▲                            │
//                                      └── pending(): poll fast ◀───┘
//
// YARN's semantics: an ask states the absolute outstanding count of its
// priority and replaces the previous one; a grant lowers the count on both
// sides without a new ask.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony::core {

class allocation_ledger {
public:
  /// Changes the outstanding count of `ask.priority` by `ask.count` (never
  /// below zero); the rest of `ask` replaces the priority's request.
  void add(const container_ask& ask);

  /// Sets every outstanding count to zero.
  void cancel_all();

  /// Gives `container_id` back on the next call.
  void release(std::string container_id);

  /// Never place the application's containers on node `host` again (YARN's
  /// blacklist). The ledger never blacklists every node the RM counts: an
  /// addition waits while it would leave no node (one node lost of one
  /// is better retried than never scheduled).
  void avoid(std::string host);

  /// The hosts the RM was told to avoid.
  const std::vector<std::string>& avoided() const { return blacklisted_; }

  /// True while containers are outstanding or changes wait to be sent: the
  /// heartbeater polls fast then.
  bool pending() const;

  /// True when something changed since the last confirmed call.
  bool has_changes() const {
    return !dirty_.empty() || !releases_.empty() || !sendable_avoids().empty();
  }

  /// The next allocate call: the changed asks, the releases, the response id.
  allocate_request next_request() const;

  /// Applies the answer to `sent`: what it carried is now the RM's view
  /// (unless it changed meanwhile), grants lower their priority's count, and
  /// the next call echoes the new response id.
  void confirm(const allocate_request& sent, const allocate_response& resp);

  /// The resource manager lost the AM's state (it restarted, or it ordered a
  /// resync): the next call starts over at response id 0 and carries every
  /// outstanding ask.
  void resync();

  /// The outstanding count of `priority`.
  int32_t outstanding(int32_t priority) const;

  int32_t response_id() const { return response_id_; }

private:
  /// The waiting additions the next call may carry (within the node count).
  std::vector<std::string> sendable_avoids() const;

  int32_t response_id_ = 0;
  int32_t cluster_nodes_ = 0;                    // as the last response counted them
  std::vector<std::string> to_avoid_;            // not yet sent
  std::vector<std::string> blacklisted_;         // sent and answered
  std::map<int32_t, container_ask> outstanding_; // by priority
  std::map<int32_t, container_ask> dirty_;       // changed since the last call
  std::vector<std::string> releases_;
};

} // namespace tony::core
