#pragma once

// Hadoop's variable-length integers (org.apache.hadoop.io.WritableUtils),
// used by Writable token files. Not protobuf varints:
//
//   -112 <= v <= 127   one byte, the value itself
//   otherwise          a marker byte, then the magnitude big-endian:
//                        -113 .. -120  positive, 1 .. 8 bytes follow
//                        -121 .. -128  negative, 1 .. 8 bytes follow
//                      a negative v is stored as its one's complement (~v).

#include <cstddef>
#include <cstdint>
#include <string>

namespace tony::hadoop {

/// Appends the encoding of `x` to `out`.
void append_vlong(std::string& out, int64_t x);

/// Same encoding; a vint is a vlong whose value fits 32 bits.
inline void append_vint(std::string& out, int32_t x) {
  append_vlong(out, x);
}

/// Total encoded size (marker included) announced by the first byte.
size_t vlong_size(int8_t first_byte);

/// True if the first byte announces a negative value.
bool vlong_is_negative(int8_t first_byte);

} // namespace tony::hadoop
