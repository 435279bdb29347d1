#include "hadoop/vint.hpp"

namespace tony::hadoop {

void append_vlong(std::string& out, int64_t x) {
  if (x >= -112 && x <= 127) {
    out.push_back(static_cast<char>(static_cast<int8_t>(x)));
    return;
  }
  int marker = -112;
  uint64_t magnitude = static_cast<uint64_t>(x);
  if (x < 0) {
    magnitude = ~magnitude;
    marker = -120;
  }
  int bytes = 0;
  for (auto tmp = magnitude; tmp != 0; tmp >>= 8)
    ++bytes;
  out.push_back(static_cast<char>(static_cast<int8_t>(marker - bytes)));
  for (int i = bytes; i > 0; --i)
    out.push_back(static_cast<char>((magnitude >> ((i - 1) * 8)) & 0xFF));
}

size_t vlong_size(int8_t first_byte) {
  if (first_byte >= -112)
    return 1;
  if (first_byte < -120)
    return static_cast<size_t>(-119 - first_byte);
  return static_cast<size_t>(-111 - first_byte);
}

bool vlong_is_negative(int8_t first_byte) {
  return first_byte < -120 || (first_byte >= -112 && first_byte < 0);
}

} // namespace tony::hadoop
