// FloorMod: the remainder of a / m in [0, m) for a negative `a` too (C++'s % keeps a's sign):
// the slot of a bucket index in a ring, before or after the ring's start. m must be > 0.
#pragma once

#include <cstdint>

namespace aiscale::decide::forecast {

inline int64_t FloorMod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

}  // namespace aiscale::decide::forecast
