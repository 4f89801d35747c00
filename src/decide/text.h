// StrCat / StrAppend: the reasons and rules of the policies, built from pieces (strings,
// integers, and doubles written as printf's "%.Ng") with one allocation per result.
//
// Why: every workload's decision carries a sentence with its numbers, every tick; building it
// with std::string operator+ and a std::string per number was a sixth of a policy-mix tick
// (bench/controller_bench). Output is byte-identical to the operator+ / std::to_string /
// printf("%.Ng") spelling it replaces: std::to_chars is specified to write what printf does
// for a precision, and what std::to_string does for an integer.
//
//   std::string s = StrCat("ratio ", GNum{r, 4}, " over ", pods, " pods");
//   StrAppend(s, "; held at ", n);
//
// Thread safety: pure functions. A TextPiece views its argument, so it lives only for the call.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace aiscale::decide {

// A double written as printf's "%.{digits}g" (digits <= 17).
struct GNum {
  double value = 0;
  int digits = 6;
};

// How the decisions' reasons write a measured figure: four significant digits unless asked.
inline GNum Num(double v, int digits = 4) { return {v, digits}; }

// One argument of StrCat: a view of a string, or of a number formatted into its own buffer.
class TextPiece {
 public:
  TextPiece(std::string_view s) : view_(s) {}    // NOLINT(runtime/explicit): a conversion
  TextPiece(const std::string& s) : view_(s) {}  // NOLINT(runtime/explicit)
  TextPiece(const char* s) : view_(s) {}         // NOLINT(runtime/explicit)
  TextPiece(GNum n) {                            // NOLINT(runtime/explicit)
    if (IsSmallWhole(n)) {
      Wrote(std::to_chars(buf_, buf_ + sizeof buf_, static_cast<int64_t>(n.value)));
    } else {
      Wrote(std::to_chars(buf_, buf_ + sizeof buf_, n.value, std::chars_format::general, n.digits));
    }
  }
  template <typename Int,
            typename = std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool> &&
                                        !std::is_same_v<Int, char>>>
  TextPiece(Int v) {  // NOLINT(runtime/explicit)
    Wrote(std::to_chars(buf_, buf_ + sizeof buf_, v));
  }
  // A bare double has no one right spelling: say which with GNum.
  TextPiece(double) = delete;
  // The view may point into buf_: never copied or moved.
  TextPiece(const TextPiece&) = delete;
  TextPiece& operator=(const TextPiece&) = delete;

  std::string_view view() const { return view_; }

 private:
  // %g writes a whole number below 10^digits as that integer (a replica count, a target), and
  // the integer path is several times cheaper. Not -0.0, which %g writes as "-0".
  static bool IsSmallWhole(GNum n) {
    double limit = 1;
    for (int i = 0; i < n.digits && i < 17; ++i) limit *= 10;
    // NaN and infinities fail the first test.
    return std::abs(n.value) < limit && n.value == std::trunc(n.value) &&
           !(n.value == 0 && std::signbit(n.value));
  }
  void Wrote(std::to_chars_result r) {
    // Cannot fail for an integer or a %.17g double in 32 bytes; an empty piece if it did.
    view_ = r.ec == std::errc() ? std::string_view(buf_, static_cast<size_t>(r.ptr - buf_))
                                : std::string_view();
  }

  char buf_[32];
  std::string_view view_;
};

// Appends the pieces to `out`, growing it at most once. No piece may view `out` itself.
template <typename... Args>
void StrAppend(std::string& out, const Args&... args) {
  if constexpr (sizeof...(Args) > 0) {
    const TextPiece pieces[] = {TextPiece(args)...};
    size_t size = out.size();
    for (const TextPiece& p : pieces) size += p.view().size();
    out.reserve(size);
    for (const TextPiece& p : pieces) out.append(p.view());
  }
}

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  StrAppend(out, args...);
  return out;
}

}  // namespace aiscale::decide
