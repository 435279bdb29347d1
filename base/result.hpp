#pragma once

// A value or an error: tony's one result type for its own code outside the
// actors (which speak caf::expected and caf::error across CAF) and the
// CAF-free Hadoop library (which keeps hadoop::expected). Most code uses it
// as tony::expected<T> (messages/error.hpp: result<T, tony::error>); other
// error types serve code that reports more than one error can carry (every
// problem of a job.toml at once) or what a process host ends with
// (result<T, int>: the value or the exit code, the message already said).
// result<void, E> is the success-or-error of an operation without a value;
// `return ok;` says success. No exceptions: callers test the result before
// they take the value.

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

namespace tony {

/// The success of a result<void, E>: `return ok;`.
struct ok_t {
  constexpr explicit ok_t(int) {}
};

inline constexpr ok_t ok{0};

template <class T, class E>
class result {
public:
  static_assert(!std::is_same_v<T, E>,
                "a result needs a value type and a distinct error type");
  static_assert(!std::is_convertible_v<E, T> && !std::is_convertible_v<T, E>,
                "a result must never mistake a value for an error");

  // -- constructors -----------------------------------------------------------

  result(T value)
      : data_(std::in_place_index<0>, std::move(value)) {}

  result(E error)
      : data_(std::in_place_index<1>, std::move(error)) {}

  // -- observers --------------------------------------------------------------

  bool ok() const noexcept { return data_.index() == 0; }

  explicit operator bool() const noexcept { return ok(); }

  /// Precondition: ok().
  T& value() & {
    assert(ok());
    return std::get<0>(data_);
  }

  const T& value() const& {
    assert(ok());
    return std::get<0>(data_);
  }

  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(data_));
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// Precondition: !ok().
  E& error() & {
    assert(!ok());
    return std::get<1>(data_);
  }

  const E& error() const& {
    assert(!ok());
    return std::get<1>(data_);
  }

  E&& error() && {
    assert(!ok());
    return std::get<1>(std::move(data_));
  }

private:
  std::variant<T, E> data_;
};

/// Success (constructed from `ok`) or an error, without a value.
template <class E>
class result<void, E> {
public:
  // -- constructors -----------------------------------------------------------

  result(ok_t) {}

  result(E error)
      : error_(std::move(error))
      , failed_(true) {}

  // -- observers --------------------------------------------------------------

  bool ok() const noexcept { return !failed_; }

  explicit operator bool() const noexcept { return ok(); }

  /// Precondition: !ok().
  E& error() & {
    assert(!ok());
    return error_;
  }

  const E& error() const& {
    assert(!ok());
    return error_;
  }

  E&& error() && {
    assert(!ok());
    return std::move(error_);
  }

private:
  E error_{};
  bool failed_ = false;
};

} // namespace tony
