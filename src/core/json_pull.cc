#include "core/json_pull.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace aiscale {
namespace {

constexpr int kMaxDepth = 64;  // deeper than any compact decision; beyond it, not ours to read

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

size_t Utf8Length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;
    if (c == 0xED && b(1) >= 0xA0) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;
    if (c == 0xF4 && b(1) >= 0x90) return 0;
    return 4;
  }
  return 0;
}

void JsonPull::Space() {
  while (pos_ < s_.size() &&
         (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) {
    ++pos_;
  }
}

bool JsonPull::Take(char c) {
  Space();
  if (pos_ >= s_.size() || s_[pos_] != c) return false;
  ++pos_;
  return true;
}

bool JsonPull::AtEnd() {
  Space();
  return pos_ == s_.size();
}

bool JsonPull::Hex4(uint32_t& out) {
  if (s_.size() - pos_ < 4) return false;
  out = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = s_[pos_++];
    uint32_t v;
    if (IsDigit(c)) {
      v = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v = static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v = static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return false;
    }
    out = out * 16 + v;
  }
  return true;
}

// After the backslash.
bool JsonPull::Escape(std::string& out) {
  if (pos_ >= s_.size()) return false;
  const char c = s_[pos_++];
  switch (c) {
    case '"':
    case '\\':
    case '/':
      out += c;
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'n':
      out += '\n';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'u':
      break;
    default:
      return false;
  }
  uint32_t cp;
  if (!Hex4(cp)) return false;
  if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a low surrogate alone
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    uint32_t low;
    if (s_.substr(pos_, 2) != "\\u") return false;
    pos_ += 2;
    if (!Hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  AppendUtf8(cp, out);
  return true;
}

bool JsonPull::String(std::string& out) {
  if (!Take('"')) return false;
  out.clear();
  while (pos_ < s_.size()) {
    size_t run = pos_;
    while (run < s_.size() && s_[run] != '"' && s_[run] != '\\' &&
           static_cast<unsigned char>(s_[run]) >= 0x20) {
      if (static_cast<unsigned char>(s_[run]) < 0x80) {
        ++run;
        continue;
      }
      const size_t n = Utf8Length(s_.substr(run));  // JSON text is UTF-8: anything else fails
      if (n == 0) return false;
      run += n;
    }
    out.append(s_.data() + pos_, run - pos_);
    pos_ = run;
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_++];
    if (c == '"') return true;
    if (c != '\\' || !Escape(out)) return false;  // a raw control character, or a bad escape
  }
  return false;
}

size_t JsonPull::NumberLength(bool& integral) const {
  size_t i = pos_;
  const auto digits = [&] {
    const size_t from = i;
    while (i < s_.size() && IsDigit(s_[i])) ++i;
    return i > from;
  };
  if (i < s_.size() && s_[i] == '-') ++i;
  if (i < s_.size() && s_[i] == '0') {
    ++i;
  } else if (!digits()) {
    return 0;
  }
  integral = true;
  if (i < s_.size() && s_[i] == '.') {
    ++i;
    integral = false;
    if (!digits()) return 0;
  }
  if (i < s_.size() && (s_[i] == 'e' || s_[i] == 'E')) {
    ++i;
    integral = false;
    if (i < s_.size() && (s_[i] == '+' || s_[i] == '-')) ++i;
    if (!digits()) return 0;
  }
  return i - pos_;
}

bool JsonPull::Int(int64_t& out) {
  Space();
  bool integral = false;
  const size_t n = NumberLength(integral);
  if (n == 0 || !integral) return false;
  const auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + pos_ + n, out);
  if (ec != std::errc() || end != s_.data() + pos_ + n) return false;
  pos_ += n;
  return true;
}

bool JsonPull::NumberOrNull(double& out) {
  Space();
  if (s_.substr(pos_, 4) == "null") {
    pos_ += 4;
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  bool integral = false;
  const size_t n = NumberLength(integral);
  if (n == 0) return false;
  const auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + pos_ + n, out);
  // Out of double's range is an error here; the full parser decides what it means.
  if (ec != std::errc() || end != s_.data() + pos_ + n || !std::isfinite(out)) return false;
  // An integer literal is an integer, as a full parser keeps it: "-0" is 0, not -0.0.
  if (integral && out == 0) out = 0;
  pos_ += n;
  return true;
}

bool JsonPull::Skip() { return SkipDepth(0); }

bool JsonPull::SkipDepth(int depth) {
  if (depth > kMaxDepth) return false;
  Space();
  if (pos_ >= s_.size()) return false;
  const char c = s_[pos_];
  if (c == '"') {
    std::string ignored;
    return String(ignored);
  }
  for (std::string_view word : {"true", "false", "null"}) {
    if (s_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
  }
  if (c == '[' || c == '{') {
    const char close = c == '[' ? ']' : '}';
    ++pos_;
    if (Take(close)) return true;
    do {
      if (c == '{') {
        std::string key;
        if (!String(key) || !Take(':')) return false;
      }
      if (!SkipDepth(depth + 1)) return false;
    } while (Take(','));
    return Take(close);
  }
  double ignored;
  return NumberOrNull(ignored);
}

}  // namespace aiscale
