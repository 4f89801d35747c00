#include "server/html.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace aiscale::server {

void AppendEscaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
}

std::string EscapeHtml(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  AppendEscaped(out, s);
  return out;
}

std::string ShortNumber(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  const double a = std::abs(v);
  const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s(buf);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string AgeText(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "-";
  const long s = std::lround(seconds);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 2 * 3600) return std::to_string(s / 60) + "m";
  if (s < 2 * 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace aiscale::server
