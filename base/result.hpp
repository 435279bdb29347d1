#pragma once

// A value or an error: tony's one result type outside actors and the
// CAF-free Hadoop library (which keeps hadoop::expected), for code that
// reports more than a caf::error can carry (every problem of a job.toml at
// once) or what a process host ends with (result<T, int>: the value or the
// exit code, the message already said). No exceptions: callers test the
// result before they take the value.

#include <cassert>
#include <utility>
#include <variant>

namespace tony {

template <class T, class E>
class result {
public:
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

private:
  std::variant<T, E> data_;
};

} // namespace tony
