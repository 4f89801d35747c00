// LEB128 varints for the compact binary encodings (the decision codec, policy state and its
// deltas in the store): most lengths and counts fit one byte. GetVarint consumes what it reads
// from `in`; it returns false when `in` ends mid-varint or the value runs past 64 bits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace aiscale {

inline void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

inline bool GetVarint(std::string_view& in, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto b = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

}  // namespace aiscale
