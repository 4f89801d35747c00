// Deterministic measurement noise: a pure function of (seed, stream, index), so a reading
// does not depend on the order or number of earlier reads. splitmix64 for mixing; the
// normal draw is Box-Muller over two mixed uniforms.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace aiscale::sim {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline uint64_t HashName(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

// Uniform in (0, 1).
inline double Uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t x = SplitMix64(seed ^ SplitMix64(stream ^ SplitMix64(index)));
  return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0;
}

inline double StdNormal(uint64_t seed, uint64_t stream, uint64_t index) {
  const double u1 = Uniform01(seed, stream, 2 * index);
  const double u2 = Uniform01(seed, stream, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace aiscale::sim
