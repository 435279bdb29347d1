#pragma once

// Bounds-checked reading of untrusted bytes (token files, frames). Every
// read names what it was reading so that errors point at the broken field
// and its offset.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hadoop/expected.hpp"

namespace tony::hadoop {

class byte_reader {
public:
  explicit byte_reader(std::string_view data)
      : data_(data) {
    // nop
  }

  size_t position() const noexcept { return pos_; }
  size_t remaining() const noexcept { return data_.size() - pos_; }
  bool at_end() const noexcept { return pos_ == data_.size(); }
  std::string_view rest() const noexcept { return data_.substr(pos_); }

  expected<uint8_t> read_byte(const char* what);

  /// Returns a view into the underlying data.
  expected<std::string_view> read_bytes(size_t n, const char* what);

  /// A Hadoop vlong (see vint.hpp).
  expected<int64_t> read_vlong(const char* what);

  /// A Hadoop vint: a vlong that must fit int32.
  expected<int32_t> read_vint(const char* what);

  /// A vint length (0 .. remaining()) followed by that many bytes: Hadoop's
  /// Text and the byte arrays of Token.write().
  expected<std::string_view> read_length_prefixed(const char* what);

  /// A protobuf base-128 varint (at most 10 bytes).
  expected<uint64_t> read_varint(const char* what);

private:
  error truncated(const char* what, size_t needed) const;

  std::string_view data_;
  size_t pos_ = 0;
};

} // namespace tony::hadoop
