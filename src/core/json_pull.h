// JsonPull: a pull reader over one JSON text, for hot paths that read a known shape (the Store's
// compact decisions, thousands per page of the dashboard) without building a document.
//
// Promises: strict JSON grammar for what it reads (numbers as RFC 8259 writes them, every string
// escape, surrogate pairs); a call that meets anything else returns false and the reader is then
// of no further use, so a caller can fall back to a full parser and its error. No allocation but
// the strings it returns. Not thread-safe; the text must outlive the reader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace aiscale {

// Length of the valid UTF-8 sequence at the start of s (which begins with a byte >= 0x80), or 0
// when it is not one (overlong, surrogate, past U+10FFFF, truncated).
size_t Utf8Length(std::string_view s);

class JsonPull {
 public:
  explicit JsonPull(std::string_view text) : s_(text) {}

  // After whitespace: true and consumed when the next character is `c`.
  bool Take(char c);
  bool String(std::string& out);
  // An integer literal (no fraction or exponent) within int64.
  bool Int(int64_t& out);
  // Any number (an integer literal as its integer: "-0" is 0); `null` as NaN (how the compact
  // form writes a non-finite value).
  bool NumberOrNull(double& out);
  // Any one value, read and dropped (a field the caller does not know).
  bool Skip();
  // Only whitespace left.
  bool AtEnd();
  // An array, `each()` reading one element at a time (false: stop, the text is not read).
  template <typename F>
  bool Array(F each) {
    if (!Take('[')) return false;
    if (Take(']')) return true;
    do {
      if (!each()) return false;
    } while (Take(','));
    return Take(']');
  }

 private:
  void Space();
  // The extent of a number token at pos_ (grammar checked); 0 when there is none.
  size_t NumberLength(bool& integral) const;
  bool Escape(std::string& out);
  bool Hex4(uint32_t& out);
  bool SkipDepth(int depth);

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace aiscale
