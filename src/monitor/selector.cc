#include "monitor/selector.h"

#include <cctype>
#include <charconv>

namespace aiscale::monitor {
namespace {

// A cursor over the expression; every error names the position it stopped at.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  void SkipBlanks() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool AtEnd() {
    SkipBlanks();
    return i_ == s_.size();
  }
  bool Consume(char c) {
    SkipBlanks();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  // [a-zA-Z_:][a-zA-Z0-9_:]* (colons allowed: vllm:num_requests_running).
  std::string_view Name() {
    SkipBlanks();
    size_t b = i_;
    auto ok = [&](char c, bool first) {
      return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
             (!first && std::isdigit(static_cast<unsigned char>(c)));
    };
    while (i_ < s_.size() && ok(s_[i_], i_ == b)) ++i_;
    return s_.substr(b, i_ - b);
  }
  Result<std::string> Quoted() {
    if (!Consume('"')) return Error("expected '\"'");
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\' && i_ < s_.size()) {
        char n = s_[i_++];
        out.push_back(n == 'n' ? '\n' : n);
      } else {
        out.push_back(c);
      }
    }
    if (i_ == s_.size()) return Error("unterminated string");
    ++i_;
    return out;
  }
  Result<double> Number() {
    SkipBlanks();
    double v = 0;
    auto [p, ec] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), v);
    if (ec != std::errc()) return Error("expected a number");
    i_ = p - s_.data();
    return v;
  }
  // Looks ahead: `word` followed by '(' (so a metric called "sum" still parses).
  bool ConsumeCall(std::string_view word) {
    SkipBlanks();
    size_t save = i_;
    if (Name() == word && Consume('(')) return true;
    i_ = save;
    return false;
  }
  Status Error(std::string_view what) const {
    return Status::Invalid("invalid metric selector '" + std::string(s_) + "' at column " +
                           std::to_string(i_ + 1) + ": " + std::string(what));
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

Status ParseMatchers(Cursor& c, Selector& sel) {
  if (!c.Consume('{')) return Status::Ok();
  while (!c.Consume('}')) {
    std::string_view label = c.Name();
    if (label.empty()) return c.Error("expected a label name");
    if (!c.Consume('=')) return c.Error("expected '=' (only equality matchers are supported)");
    ASSIGN_OR_RETURN(std::string value, c.Quoted());
    sel.matchers.emplace_back(std::string(label), std::move(value));
    if (!c.Consume(',')) {
      if (!c.Consume('}')) return c.Error("expected ',' or '}'");
      break;
    }
  }
  return Status::Ok();
}

// agg "(" selector ")" or a bare selector.
Status ParseAggregated(Cursor& c, Selector& sel) {
  static constexpr std::pair<std::string_view, Aggregation> kAggs[] = {{"sum", Aggregation::kSum},
                                                                       {"avg", Aggregation::kAvg},
                                                                       {"max", Aggregation::kMax},
                                                                       {"min", Aggregation::kMin}};
  bool wrapped = false;
  for (const auto& [word, agg] : kAggs) {
    if (c.ConsumeCall(word)) {
      sel.aggregation = agg;
      wrapped = true;
      break;
    }
  }
  std::string_view name = c.Name();
  if (name.empty()) return c.Error("expected a metric name");
  sel.metric = std::string(name);
  RETURN_IF_ERROR(ParseMatchers(c, sel));
  if (wrapped && !c.Consume(')')) return c.Error("expected ')'");
  return Status::Ok();
}

}  // namespace

bool Selector::Matches(const Exposition& e, const Sample& s) const {
  for (const auto& [label, value] : matchers) {
    if (e.Label(s, label) != value) return false;
  }
  return true;
}

Result<Selector> ParseSelector(std::string_view expression) {
  Cursor c(expression);
  Selector sel;
  if (c.ConsumeCall("histogram_quantile")) {
    ASSIGN_OR_RETURN(sel.quantile, c.Number());
    if (!(sel.quantile >= 0 && sel.quantile <= 1)) return c.Error("quantile must be in [0, 1]");
    if (!c.Consume(',')) return c.Error("expected ','");
    RETURN_IF_ERROR(ParseAggregated(c, sel));
    if (!c.Consume(')')) return c.Error("expected ')'");
  } else {
    RETURN_IF_ERROR(ParseAggregated(c, sel));
  }
  if (!c.AtEnd()) return c.Error("unexpected text after the selector");
  return sel;
}

}  // namespace aiscale::monitor
