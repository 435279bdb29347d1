#pragma once

// tony's errors: values, never exceptions that escape a handler. errc says
// what kind of problem it is; the text says what went wrong, where, and what
// to do. tony's own code carries them as tony::error and returns
// tony::expected<T> (base/result.hpp). The actors speak CAF: their messages
// and responses carry caf::error (category "tony", the text as context).
// caf_error and to_caf build one where tony code hands an error to CAF, and
// from_caf turns a CAF response error back into a tony::error.

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

#include "base/result.hpp"

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

/// An error of tony's own code: a code and the human text. Default
/// constructed, it is no error (errc::none); it tests true when it is one,
/// so `if (auto err = f())` reads "if f failed".
class error {
public:
  error() = default;

  explicit error(errc code, std::string text)
      : code_(code)
      , text_(std::move(text)) {}

  errc code() const noexcept { return code_; }

  /// What went wrong, where, and what to do.
  const std::string& text() const noexcept { return text_; }

  explicit operator bool() const noexcept { return code_ != errc::none; }

  friend bool operator==(const error& x, const error& y) {
    return x.code_ == y.code_ && x.text_ == y.text_;
  }

  friend bool operator!=(const error& x, const error& y) { return !(x == y); }

private:
  errc code_ = errc::none;
  std::string text_;
};

/// A value or a tony::error.
template <class T>
using expected = result<T, error>;

/// An error whose text is only the name of its code.
inline error make_error(errc x) {
  return error{x, to_string(x)};
}

inline error make_error(errc x, std::string text) {
  return error{x, std::move(text)};
}

/// The text of an error, or "no error".
std::string describe(const error& err);

/// The code and the text, for test messages.
std::string to_string(const error& err);

// -- the actors' caf::error ---------------------------------------------------

constexpr caf::atom_value errc_category = caf::atom("tony");

/// A caf::error of category "tony", the text as its context.
inline caf::error caf_error(errc x) {
  return {static_cast<uint8_t>(x), errc_category};
}

inline caf::error caf_error(errc x, std::string context) {
  return {static_cast<uint8_t>(x), errc_category, caf::make_message(std::move(context))};
}

/// The caf::error for a tony::error: none for none, else the code and the
/// text as its context.
caf::error to_caf(const error& err);

/// The tony::error for a caf::error that comes back from an actor: the code
/// and text of category "tony" (the code's name when it has no context);
/// any other category (a CAF timeout, an unreachable actor) becomes
/// errc::infrastructure with CAF's rendering as its text, so describe()
/// says what it said before.
error from_caf(const caf::error& err);

/// The context text of an error made by caf_error, or CAF's rendering.
std::string describe(const caf::error& err);

} // namespace tony
