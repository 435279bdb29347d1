#pragma once

// ResourceManager HA from the client's side, as Hadoop's RMProxy with its
// ConfiguredRMFailoverProxyProvider does it: a call goes to the RM that
// answered last; an RM that is standby (org.apache.hadoop.ipc.StandbyException)
// or unreachable (refused, or its connection broke mid-call: it died) is left
// for the next rm-id, round after round with a growing pause, until one
// answers or the call's deadline passes. Then the error names every RM tried
// and what each said.
//
//   rm1 ─refused─▶ rm2 ─StandbyException─▶ (pause) ─▶ rm1 ─▶ answer: rm1 is current
//
// Without HA there is one peer and a call is exactly the plain call (the
// client's own connect retries, no failover). Thread-safe.

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "hadoop/connection_params.hpp"
#include "hadoop/deadline.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/yarn/protocols.hpp"

namespace tony::yarn {

struct failover_options {
  /// How long a refused RM is retried before the next one is tried (a
  /// dead RM refuses at once; a starting one may need a moment).
  std::chrono::milliseconds connect_budget{1000};
  /// The pause after a round where no RM answered: starts here, doubles,
  /// capped below.
  std::chrono::milliseconds initial_pause{200};
  std::chrono::milliseconds max_pause{2000};
};

/// True when `err` means "another RM may answer": a standby RM, a refused
/// connection, or one that broke while the call was out.
bool is_failover_error(const hadoop::error& err);

class rm_failover {
public:
  /// `peers` must not be empty.
  explicit rm_failover(std::vector<rm_peer> peers, failover_options opts = {});

  /// One attempt of a call on the server `target` names.
  template <class T>
  using attempt = std::function<hadoop::expected<T>(const hadoop::connection_params&)>;

  /// Runs `fn` with `base` aimed at the current RM, failing over as above.
  template <class T>
  hadoop::expected<T> call(const hadoop::connection_params& base, const attempt<T>& fn,
                           hadoop::deadline until) {
    hadoop::expected<T> result = hadoop::error{hadoop::error_code::timeout, ""};
    auto outcome = run(
        base,
        [&](const hadoop::connection_params& target) {
          result = fn(target);
          return result ? std::optional<hadoop::error>{} : result.error();
        },
        until);
    if (outcome)
      return *outcome;
    return result;
  }

  /// `base` aimed at the current RM (the server named in its messages).
  hadoop::connection_params current(const hadoop::connection_params& base) const;

  /// The peers, in the order of yarn.resourcemanager.ha.rm-ids.
  const std::vector<rm_peer>& peers() const noexcept { return peers_; }

  /// How often a call moved on to another RM (for logs and tests).
  int failovers() const;

private:
  using try_once =
      std::function<std::optional<hadoop::error>(const hadoop::connection_params&)>;

  /// Nullopt when an attempt succeeded or failed for good (its own result
  /// stands); else the error naming every RM tried.
  std::optional<hadoop::error> run(const hadoop::connection_params& base,
                                   const try_once& fn, hadoop::deadline until);

  hadoop::connection_params aimed(const hadoop::connection_params& base,
                                  size_t index) const;

  std::vector<rm_peer> peers_;
  failover_options opts_;
  mutable std::mutex mtx_;
  size_t current_ = 0;
  int failovers_ = 0;
};

} // namespace tony::yarn
