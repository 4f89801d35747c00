// The metric names a PromQL expression reads, for checking that dashboards and alert rules ask
// only for series that exist. A small scanner, not a parser: it skips strings, label matchers
// (except a `__name__` matcher, which names a metric), range and subquery brackets, numbers and
// durations, Grafana variables ($__rate_interval, ${x}), function and aggregation names, the
// label lists after by/without/on/ignoring/group_left/group_right, and binary keywords; every
// other identifier is a metric name. Test-only, pure.
#pragma once

#include <cctype>
#include <set>
#include <string>

namespace aiscale::deploy_test {

namespace internal {

inline bool IdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
inline bool IdentChar(char c) {
  return IdentStart(c) || std::isdigit(static_cast<unsigned char>(c));
}

// The index just past the string literal that starts at `i`.
inline size_t SkipString(const std::string& s, size_t i) {
  const char quote = s[i++];
  while (i < s.size() && s[i] != quote) i += (s[i] == '\\' && quote != '`') ? 2 : 1;
  return i + 1;
}

// The index just past the bracket group that opens at `i` (strings inside skipped).
inline size_t SkipGroup(const std::string& s, size_t i, char open, char close) {
  int depth = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"' || c == '\'' || c == '`') {
      i = SkipString(s, i);
      continue;
    }
    if (c == open) ++depth;
    if (c == close && --depth == 0) return i + 1;
    ++i;
  }
  return i;
}

inline size_t SkipSpace(const std::string& s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// A `__name__="x"` matcher inside the label braces [begin, end).
inline void NameMatcher(const std::string& s, size_t begin, size_t end,
                        std::set<std::string>& out) {
  const size_t at = s.find("__name__", begin);
  if (at == std::string::npos || at >= end) return;
  size_t i = SkipSpace(s, at + 8);
  if (i + 1 >= end || s[i] != '=' || s[i + 1] == '~') return;
  i = SkipSpace(s, i + 1);
  if (i >= end || (s[i] != '"' && s[i] != '\'')) return;
  const size_t close = SkipString(s, i);
  out.insert(s.substr(i + 1, close - i - 2));
}

}  // namespace internal

inline std::set<std::string> MetricNamesIn(const std::string& expr) {
  using namespace internal;
  static const std::set<std::string> kLabelLists = {"by",       "without",    "on",
                                                    "ignoring", "group_left", "group_right"};
  static const std::set<std::string> kKeywords = {"and",   "or",  "unless", "bool", "offset",
                                                  "atan2", "inf", "nan",    "Inf",  "NaN"};
  static const std::set<std::string> kAggregations = {
      "sum",  "avg",     "count",    "min",          "max",   "stddev", "stdvar",
      "topk", "bottomk", "quantile", "count_values", "group", "limitk", "limit_ratio"};
  std::set<std::string> out;
  const std::string& s = expr;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"' || c == '\'' || c == '`') {
      i = SkipString(s, i);
    } else if (c == '{') {
      const size_t end = SkipGroup(s, i, '{', '}');
      NameMatcher(s, i, end, out);
      i = end;
    } else if (c == '[') {
      i = SkipGroup(s, i, '[', ']');
    } else if (c == '$') {
      ++i;
      if (i < s.size() && s[i] == '{') {
        i = SkipGroup(s, i, '{', '}');
      } else {
        while (i < s.size() && IdentChar(s[i])) ++i;
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      while (i < s.size() && (IdentChar(s[i]) || s[i] == '.')) ++i;  // 0.5, 1e3, 5m, 0x1f
    } else if (IdentStart(c)) {
      size_t end = i;
      while (end < s.size() && IdentChar(s[end])) ++end;
      const std::string word = s.substr(i, end - i);
      const size_t next = SkipSpace(s, end);
      const char after = next < s.size() ? s[next] : '\0';
      i = end;
      if (kLabelLists.count(word)) {
        if (after == '(') i = SkipGroup(s, next, '(', ')');
      } else if (kKeywords.count(word) || after == '(') {
        // a keyword, or a function or aggregation called here
      } else if (kAggregations.count(word) &&
                 (s.compare(next, 2, "by") == 0 || s.compare(next, 7, "without") == 0)) {
        // `sum by (x) (...)`
      } else {
        out.insert(word);
      }
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace aiscale::deploy_test
