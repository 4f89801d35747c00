#include "core/utf8.h"

#include <cstdint>
#include <cstring>

namespace aiscale {
namespace {

// Length of the well-formed sequence that starts at s[i], or 0 when none does.
size_t SequenceAt(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t len = 0;
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  constexpr uint32_t kMinForLen[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLen[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// How many bytes from s[i] on are ASCII, looked at 8 at a time: names, paths and messages are
// almost all ASCII, and every error message passes through here (per byte, this was 22% of
// the scenario fuzzer's time).
size_t AsciiRun(std::string_view s, size_t i) {
  constexpr uint64_t kHighBits = 0x8080808080808080ULL;
  size_t j = i;
  for (; j + 8 <= s.size(); j += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + j, 8);
    if ((word & kHighBits) != 0) break;
  }
  while (j < s.size() && static_cast<unsigned char>(s[j]) < 0x80) ++j;
  return j - i;
}

// The end of the well-formed run starting at s[i]: the first byte that starts no sequence,
// or s.size().
size_t ValidRunEnd(std::string_view s, size_t i) {
  while (i < s.size()) {
    i += AsciiRun(s, i);
    if (i == s.size()) break;
    const size_t len = SequenceAt(s, i);
    if (len == 0) break;
    i += len;
  }
  return i;
}

}  // namespace

bool IsValidUtf8(std::string_view s) { return ValidRunEnd(s, 0) == s.size(); }

std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t end = ValidRunEnd(s, i);
    out.append(s.substr(i, end - i));
    if (end == s.size()) break;
    out.push_back('?');
    i = end + 1;
  }
  return out;
}

}  // namespace aiscale
