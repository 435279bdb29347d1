#include "hadoop/byte_reader.hpp"

#include <limits>

#include "hadoop/vint.hpp"

namespace tony::hadoop {

error byte_reader::truncated(const char* what, size_t needed) const {
  return error{error_code::invalid_input, "truncated at byte " + std::to_string(pos_) +
                                              " reading " + what + " (need " +
                                              std::to_string(needed) + " bytes, " +
                                              std::to_string(remaining()) + " left)"};
}

expected<uint8_t> byte_reader::read_byte(const char* what) {
  if (remaining() < 1)
    return truncated(what, 1);
  return static_cast<uint8_t>(data_[pos_++]);
}

expected<std::string_view> byte_reader::read_bytes(size_t n, const char* what) {
  if (remaining() < n)
    return truncated(what, n);
  auto result = data_.substr(pos_, n);
  pos_ += n;
  return result;
}

expected<int64_t> byte_reader::read_vlong(const char* what) {
  auto start = pos_;
  auto first = read_byte(what);
  if (!first)
    return first.error();
  auto marker = static_cast<int8_t>(*first);
  auto size = vlong_size(marker);
  if (size == 1)
    return static_cast<int64_t>(marker);
  if (remaining() < size - 1) {
    pos_ = start;
    return truncated(what, size);
  }
  uint64_t magnitude = 0;
  for (size_t i = 1; i < size; ++i)
    magnitude = (magnitude << 8) | static_cast<uint8_t>(data_[pos_++]);
  if (vlong_is_negative(marker))
    magnitude = ~magnitude;
  return static_cast<int64_t>(magnitude);
}

expected<int32_t> byte_reader::read_vint(const char* what) {
  auto start = pos_;
  auto x = read_vlong(what);
  if (!x)
    return x.error();
  if (*x < std::numeric_limits<int32_t>::min() ||
      *x > std::numeric_limits<int32_t>::max())
    return error{error_code::invalid_input, "value " + std::to_string(*x) + " at byte " +
                                                std::to_string(start) +
                                                " does not fit 32 bits (" + what + ")"};
  return static_cast<int32_t>(*x);
}

expected<std::string_view> byte_reader::read_length_prefixed(const char* what) {
  auto start = pos_;
  auto len = read_vint(what);
  if (!len)
    return len.error();
  if (*len < 0)
    return error{error_code::invalid_input, "negative length " + std::to_string(*len) +
                                                " at byte " + std::to_string(start) +
                                                " (" + what + ")"};
  return read_bytes(static_cast<size_t>(*len), what);
}

expected<uint64_t> byte_reader::read_varint(const char* what) {
  auto start = pos_;
  uint64_t result = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (at_end()) {
      pos_ = start;
      return truncated(what, 1);
    }
    auto b = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && (b & 0x7E) != 0)
      break;
    result |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0)
      return result;
  }
  return error{error_code::invalid_input,
               "malformed varint at byte " + std::to_string(start) + " (" + what + ")"};
}

} // namespace tony::hadoop
