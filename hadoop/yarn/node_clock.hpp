#pragma once

// A node whose clock is ahead of the ResourceManager's, as a NodeManager's
// refusal shows it (doc/operations.md, "Node clocks").
//
// The ResourceManager writes an expiry into every container token: its own
// clock when it issues the token plus
// yarn.resourcemanager.rm.container-allocation.expiry-interval-ms (10 min by
// default). A NodeManager checks that expiry against its own clock when it
// is asked to start the container, and refuses with
//
//   Unauthorized request to start container.
//   This token is expired. current time is 1700003600123 found 1700000600456
//   Note: System times on machines may be out of sync. ...
//
// so a node ahead by more than the interval can start no container at all.
// A node behind starts them; only its timestamps mislead.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tony::yarn {

/// The NodeManager's "This token is expired. current time is X found Y":
/// X its clock, Y the token's expiry (milliseconds since the epoch).
struct expired_token {
  int64_t node_now_ms = 0;
  int64_t expiry_ms = 0;
};

/// Finds that sentence in a NodeManager's message; nothing when it is not
/// there.
std::optional<expired_token> parse_expired_token(std::string_view message);

/// A container token's times, by the ResourceManager's clock: when it
/// created the container (0 when the token does not say) and the expiry.
struct container_token_times {
  int64_t created_ms = 0;
  int64_t expiry_ms = 0;
};

/// Reads them from a serialized TokenProto (container::token); nothing when
/// it is not a container token.
std::optional<container_token_times> token_times(std::string_view serialized_token);

/// "node H's clock is about 1 h 0 min (3600 s) ahead of the ResourceManager's:
/// ..., keep the nodes' clocks in step (NTP)", with YARN's own sentence. The
/// skew is the node's time when it refused less the ResourceManager's when
/// it created the container (an overestimate by the few seconds between
/// them); without the creation time, the time the token had been expired.
std::string describe_clock_ahead(const std::string& host, const expired_token& x,
                                 const std::optional<container_token_times>& times);

/// The same for the AM's container, which the ResourceManager starts itself
/// ("Error launching appattempt_...": the application fails before any AM
/// runs): `rm_time_ms` is the ResourceManager's clock just after the
/// refusal (the application's finish time). Nothing when `rm_diagnostics`
/// do not say so.
std::optional<std::string> describe_am_clock_ahead(const std::string& rm_diagnostics,
                                                   int64_t rm_time_ms);

/// "1 h 0 min (3600 s)", "12 min 5 s (725 s)", "45 s".
std::string describe_duration(int64_t ms);

} // namespace tony::yarn
