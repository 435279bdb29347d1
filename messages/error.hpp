#pragma once

// tony's error enum: errors are values (caf::error), never exceptions that
// escape a handler. The context message of an error carries the human text:
// what went wrong, where, and what to do.

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

namespace tony {

enum class errc : uint8_t {
  none = 0,
  /// A job.toml or command-line problem (exit code 2).
  invalid_config,
  /// The registration carried the wrong job secret.
  bad_secret,
  /// The registration named a task the job does not have.
  unknown_task,
  /// The task already has a registered executor.
  duplicate_registration,
  /// A message belongs to an earlier attempt.
  stale_attempt,
  /// An external service (RM, NM, filesystem) could not be reached or failed.
  infrastructure,
  /// A request exceeds what the cluster can ever grant.
  unsatisfiable,
  /// A peer answered something that is not the protocol.
  protocol,
  /// An operation ran past its deadline.
  timeout,
  /// The job was stopped.
  stopped,
  /// Not yet: the AM has not decided what to do with the request; ask
  /// again shortly (an executor registering again with a new AM attempt).
  not_ready,
};

const char* to_string(errc x);

constexpr caf::atom_value errc_category = caf::atom("tony");

inline caf::error make_error(errc x) {
  return {static_cast<uint8_t>(x), errc_category};
}

inline caf::error make_error(errc x, std::string context) {
  return {static_cast<uint8_t>(x), errc_category, caf::make_message(std::move(context))};
}

/// The context text of an error made by make_error, or CAF's rendering.
std::string describe(const caf::error& err);

} // namespace tony
