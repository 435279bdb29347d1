#pragma once

// A value or an error (C++17 has no std::expected). Deliberately small:
// check with `if (!x)`, read with `*x` / `x->`, and `x.error()` on failure.

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "hadoop/error.hpp"

namespace tony::hadoop {

template <class T>
class expected {
public:
  static_assert(!std::is_same_v<T, class error>, "expected<error> is ambiguous");

  expected(T value)
      : data_(std::in_place_index<0>, std::move(value)) {
    // nop
  }

  expected(class error err)
      : data_(std::in_place_index<1>, std::move(err)) {
    // nop
  }

  bool has_value() const noexcept { return data_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// Precondition: has_value().
  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// Precondition: !has_value().
  const class error& error() const& { return std::get<1>(data_); }
  class error&& error() && {
    return std::get<1>(std::move(data_));
  }

private:
  std::variant<T, class error> data_;
};

template <>
class expected<void> {
public:
  expected() = default;

  expected(class error err)
      : err_(std::move(err)) {
    // nop
  }

  bool has_value() const noexcept { return !err_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }

  /// Precondition: !has_value().
  const class error& error() const& { return *err_; }
  class error&& error() && {
    return std::move(*err_);
  }

private:
  std::optional<class error> err_;
};

} // namespace tony::hadoop
