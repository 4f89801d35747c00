#include "sim/traces/csv_fields.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "sim/traces/line_reader.h"

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

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
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

Status SplitCsv(std::string_view rec, std::vector<std::string>& out, const std::string& where) {
  size_t count = 0;
  size_t i = 0;
  const size_t n = rec.size();
  auto next = [&]() -> std::string& {
    if (count == out.size()) out.emplace_back();
    out[count].clear();
    return out[count++];
  };
  auto bad = [&](const std::string& what) {
    return Status::Error(where + ": CSV column " + std::to_string(count) + ": " + what);
  };
  while (true) {
    std::string& f = next();
    size_t j = i;
    while (j < n && (rec[j] == ' ' || rec[j] == '\t')) ++j;
    if (j < n && rec[j] == '"') {
      for (i = j + 1;; ++i) {
        if (i >= n) return bad("quoted field is not closed");
        if (rec[i] != '"') {
          f.push_back(rec[i]);
        } else if (i + 1 < n && rec[i + 1] == '"') {
          f.push_back('"');
          ++i;
        } else {
          ++i;
          break;
        }
      }
      while (i < n && (rec[i] == ' ' || rec[i] == '\t')) ++i;
      if (i < n && rec[i] != ',') return bad("text after the closing quote");
    } else {
      const size_t comma = std::min(rec.find(',', i), n);
      const std::string_view v = rec.substr(i, comma - i);
      if (v.find('"') != std::string_view::npos) {
        return bad("a quote inside an unquoted field (quote the whole field, double the quote)");
      }
      f.assign(v);
      i = comma;
    }
    if (i >= n) break;
    ++i;  // the comma; a record ending in one has an empty last field
  }
  out.resize(count);
  return Status::Ok();
}

namespace {

// Whether a record is inside a quoted field, fed a piece at a time (so joining the lines of a
// long quoted field stays linear). Follows SplitCsv: only a quote at the start of a field
// (after optional blanks) opens one; inside, a doubled quote is a quote and a single one
// closes it. A quote elsewhere opens nothing (SplitCsv reports it).
class QuoteScanner {
 public:
  void Feed(std::string_view s) {
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (in_quote_) {
        if (c != '"') continue;
        if (i + 1 < s.size() && s[i + 1] == '"') {
          ++i;
        } else {
          in_quote_ = false;
        }
      } else if (c == ',') {
        field_start_ = true;
      } else if (field_start_ && c == '"') {
        in_quote_ = true;
        field_start_ = false;
      } else if (c != ' ' && c != '\t') {
        field_start_ = false;
      }
    }
  }
  bool in_quote() const { return in_quote_; }

 private:
  bool in_quote_ = false;
  bool field_start_ = true;
};

}  // namespace

bool CsvQuoteOpen(std::string_view record) {
  QuoteScanner q;
  q.Feed(record);
  return q.in_quote();
}

bool NextCsvRecord(LineReader& r, std::string& record, std::string& where, Status& status) {
  std::string line;
  do {
    if (!r.Next(record)) {
      status = r.status();
      return false;
    }
  } while (record.empty());
  where = r.Where();
  QuoteScanner q;
  q.Feed(record);
  while (q.in_quote()) {
    if (!r.Next(line)) {
      status = r.status().ok() ? Status::Error(where +
                                               ": quoted field opened here is not closed "
                                               "before the end of the file")
                               : r.status();
      return false;
    }
    if (record.size() + line.size() + 1 > kMaxLineBytes) {
      status = Status::Error(where + ": CSV record longer than " + std::to_string(kMaxLineBytes) +
                             " bytes, the limit");
      return false;
    }
    record += '\n';
    record += line;
    q.Feed("\n");
    q.Feed(line);
  }
  status = Status::Ok();
  return true;
}

Result<std::vector<size_t>> FindColumns(std::string_view header,
                                        const std::vector<std::string>& wanted,
                                        const std::string& where) {
  std::vector<std::string> cols;
  RETURN_IF_ERROR(SplitCsv(header, cols, where));
  for (size_t i = 0; i < cols.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      if (!Trim(cols[i]).empty() && Trim(cols[i]) == Trim(cols[k])) {
        return Status::Error(where + ": column " + std::string(Trim(cols[i])) +
                             " appears twice in the header (columns " + std::to_string(k + 1) +
                             " and " + std::to_string(i + 1) + ")");
      }
    }
  }
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
  if (!shape) {
    return FieldError(where, field,
                      "unparsable timestamp '" + std::string(s) + "' (want YYYY-MM-DD HH:MM:SS)");
  }
  const bool leap_second = se == 60 && h == 23 && mi == 59;
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo) || h > 23 || mi > 59 ||
      (se > 59 && !leap_second)) {
    return FieldError(where, field,
                      "no such date or time '" + std::string(s) +
                          "' (month 1-12, day within the month, hour 0-23, minute and second "
                          "0-59)");
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
