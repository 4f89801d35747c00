#include "sim/traces/csv_fields.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace aiscale::sim::traces {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil formula).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

void SplitCsv(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

Result<std::vector<size_t>> FindColumns(std::string_view header,
                                        const std::vector<std::string>& wanted,
                                        const std::string& where) {
  std::vector<std::string_view> cols;
  SplitCsv(header, cols);
  std::vector<size_t> idx;
  for (const auto& w : wanted) {
    size_t found = cols.size();
    for (size_t i = 0; i < cols.size(); ++i) {
      if (Trim(cols[i]) == w) found = i;
    }
    if (found == cols.size()) return FieldError(where, w, "missing column in header");
    idx.push_back(found);
  }
  return idx;
}

Status FieldError(const std::string& where, std::string_view field, const std::string& message) {
  return Status::Error(where + ": field " + std::string(field) + ": " + message);
}

Result<double> ParseNumber(std::string_view text, std::string_view field,
                           const std::string& where) {
  const std::string_view t = Trim(text);
  if (t.empty()) return FieldError(where, field, "empty value");
  double v = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(v)) {
    return FieldError(where, field, "unparsable number '" + std::string(t) + "'");
  }
  return v;
}

Result<uint32_t> ParseCount(std::string_view text, std::string_view field,
                            const std::string& where) {
  ASSIGN_OR_RETURN(const double v, ParseNumber(text, field, where));
  if (v < 0 || v > 4e9 || v != std::floor(v)) {
    return FieldError(where, field,
                      "must be a non-negative whole number, got '" + std::string(Trim(text)) + "'");
  }
  return static_cast<uint32_t>(v);
}

Result<int64_t> ParseDateTimeNs(std::string_view text, std::string_view field,
                                const std::string& where) {
  const std::string_view s = Trim(text);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  const bool shape = s.size() >= 19 && Digits(s, 0, 4, y) && s[4] == '-' && Digits(s, 5, 2, mo) &&
                     s[7] == '-' && Digits(s, 8, 2, d) && (s[10] == ' ' || s[10] == 'T') &&
                     Digits(s, 11, 2, h) && s[13] == ':' && Digits(s, 14, 2, mi) && s[16] == ':' &&
                     Digits(s, 17, 2, se);
  if (!shape || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) {
    return FieldError(where, field,
                      "unparsable timestamp '" + std::string(s) + "' (want YYYY-MM-DD HH:MM:SS)");
  }
  // int64 nanoseconds since 1970 span 1677-09-21..2262-04-11; whole years inside that range
  // keep the arithmetic below from overflowing (found by tests/fuzz/azure_trace_fuzz).
  if (y < 1678 || y > 2261) {
    return FieldError(where, field,
                      "timestamp '" + std::string(s) + "' out of range (years 1678 to 2261)");
  }
  int64_t frac_ns = 0;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20) {
      return FieldError(where, field, "unparsable timestamp '" + std::string(s) + "'");
    }
    int64_t scale = 100000000;
    for (size_t i = 20; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') {
        return FieldError(where, field, "unparsable timestamp '" + std::string(s) + "'");
      }
      frac_ns += (s[i] - '0') * scale;  // digits past nanoseconds add zero
      scale /= 10;
    }
  }
  const int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const int64_t minutes = (days * 24 + h) * 60 + mi;
  return minutes * int64_t{60'000'000'000} + static_cast<int64_t>(se) * 1'000'000'000 + frac_ns;
}

Status CheckMonotonic(int64_t t, int64_t previous, std::string_view field,
                      const std::string& where) {
  if (t >= previous) return Status::Ok();
  char buf[160];
  std::snprintf(buf, sizeof(buf), "time goes backwards (%.6f s is before the previous %.6f s)",
                static_cast<double>(t) / 1e9, static_cast<double>(previous) / 1e9);
  return FieldError(where, field, buf);
}

}  // namespace aiscale::sim::traces
