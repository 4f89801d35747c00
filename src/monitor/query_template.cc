#include "monitor/query_template.h"

#include <cctype>
#include <cstdio>

namespace aiscale::monitor {
namespace {

constexpr std::string_view kWorkload = "{workload}";
constexpr std::string_view kNamespace = "{namespace}";

// Where a string literal sits: its quote, and the matcher it is the value of, if any.
struct Literal {
  char quote = 0;       // 0: not inside a literal
  size_t open = 0;      // index of the opening quote
  std::string label;    // matcher label name; empty when the literal is not a matcher value
  std::string op;       // "=", "!=", "=~", "!~" or empty
  size_t label_at = 0;  // index where the label name starts
};

struct Placeholder {
  size_t at = 0;
  std::string_view name;  // kWorkload or kNamespace
  Literal lit;            // the literal it is inside (quote 0: outside)
};

bool IsLabelChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Reads the matcher operator and label name that end just before the quote at `q`.
void ReadMatcher(std::string_view t, size_t q, Literal& lit) {
  size_t i = q;
  while (i > 0 && std::isspace(static_cast<unsigned char>(t[i - 1]))) --i;
  if (i >= 2 && t[i - 1] == '~' && (t[i - 2] == '=' || t[i - 2] == '!')) {
    lit.op = std::string(t.substr(i - 2, 2));
    i -= 2;
  } else if (i >= 2 && t[i - 1] == '=' && t[i - 2] == '!') {
    lit.op = "!=";
    i -= 2;
  } else if (i >= 1 && t[i - 1] == '=' &&
             (i < 2 || std::string_view("=<>").find(t[i - 2]) == std::string_view::npos)) {
    lit.op = "=";
    i -= 1;
  } else {
    return;
  }
  while (i > 0 && std::isspace(static_cast<unsigned char>(t[i - 1]))) --i;
  const size_t end = i;
  while (i > 0 && IsLabelChar(t[i - 1])) --i;
  if (i == end) {
    lit.op.clear();
    return;
  }
  lit.label = std::string(t.substr(i, end - i));
  lit.label_at = i;
}

// Scans `t` once, PromQL-lexer style, and lists every placeholder with its literal context.
std::vector<Placeholder> FindPlaceholders(std::string_view t) {
  std::vector<Placeholder> out;
  Literal lit;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '{') {
      for (std::string_view name : {kWorkload, kNamespace}) {
        if (t.substr(i, name.size()) == name) out.push_back({i, name, lit});
      }
    }
    if (lit.quote == 0) {
      if (c == '"' || c == '\'' || c == '`') {
        lit = Literal{c, i, "", "", 0};
        ReadMatcher(t, i, lit);
      } else if (c == '#') {
        // A comment, which Prometheus ignores: its quotes (a "don't") open no literal and its
        // placeholders are left alone.
        while (i + 1 < t.size() && t[i + 1] != '\n') ++i;
      }
    } else if (c == '\\' && lit.quote != '`') {
      ++i;  // an escaped character never closes the literal
    } else if (c == lit.quote) {
      lit = Literal{};
    }
  }
  return out;
}

Result<std::string> EscapeFor(const Literal& lit, std::string_view value) {
  if (lit.quote == 0) return std::string(value);
  const bool regex = lit.op == "=~" || lit.op == "!~";
  const std::string v = regex ? EscapeRegex(value) : std::string(value);
  if (lit.quote == '`') {
    if (v.find('`') != std::string::npos) {
      return Status::Invalid("cannot put '" + std::string(value) + "' into a `raw` string");
    }
    return v;
  }
  return EscapePromString(v, lit.quote);
}

// Expands every placeholder of `t` (already found in `phs`) except the one at `skip`.
Result<std::string> Expand(std::string_view t, const std::vector<Placeholder>& phs,
                           const WorkloadRef& w) {
  std::string out;
  out.reserve(t.size() + 32);
  size_t pos = 0;
  for (const Placeholder& p : phs) {
    out.append(t.substr(pos, p.at - pos));
    ASSIGN_OR_RETURN(std::string v, EscapeFor(p.lit, p.name == kWorkload ? w.name : w.namespace_));
    out += v;
    pos = p.at + p.name.size();
  }
  out.append(t.substr(pos));
  return out;
}

// The closing quote of the literal that opens at `open`, or npos.
size_t LiteralEnd(std::string_view t, size_t open) {
  const char q = t[open];
  for (size_t i = open + 1; i < t.size(); ++i) {
    if (t[i] == '\\' && q != '`') {
      ++i;
    } else if (t[i] == q) {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::string EscapePromString(std::string_view s, char quote) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c == quote) {
          out += '\\';
          out += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string EscapeRegex(std::string_view s) {
  static constexpr std::string_view kSpecial = "\\.+*?()|[]{}^$";
  std::string out;
  out.reserve(s.size() + 4);
  for (char c : s) {
    if (kSpecial.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

bool HasPlaceholders(std::string_view tmpl) {
  return tmpl.find(kWorkload) != std::string_view::npos ||
         tmpl.find(kNamespace) != std::string_view::npos;
}

Result<std::string> ExpandTemplate(std::string_view tmpl, const WorkloadRef& w) {
  return Expand(tmpl, FindPlaceholders(tmpl), w);
}

std::string BatchPlan::Query(const std::vector<std::string>& names) const {
  std::string alternation;
  for (const std::string& n : names) {
    if (!alternation.empty()) alternation += '|';
    alternation += EscapeRegex(n);
  }
  return prefix + label + "=~\"" + EscapePromString(alternation) + "\"" + suffix;
}

std::string BatchPlan::Key() const { return prefix + '\x1f' + label + '\x1f' + suffix; }

std::optional<BatchPlan> PlanBatch(std::string_view tmpl, const WorkloadRef& w) {
  const std::vector<Placeholder> phs = FindPlaceholders(tmpl);
  const Placeholder* only = nullptr;
  for (const Placeholder& p : phs) {
    if (p.name != kWorkload) continue;
    if (only != nullptr) return std::nullopt;  // twice: one regex cannot stand for both
    only = &p;
  }
  if (only == nullptr || only->lit.op != "=" || only->lit.quote == '`') return std::nullopt;
  const size_t open = only->lit.open;
  const size_t close = LiteralEnd(tmpl, open);
  if (close == std::string_view::npos || only->at != open + 1 ||
      close != open + 1 + kWorkload.size()) {
    return std::nullopt;  // the literal holds more than the placeholder
  }
  const size_t label_at = only->lit.label_at;
  std::vector<Placeholder> before, after;
  for (const Placeholder& p : phs) {
    if (p.at < label_at) before.push_back(p);
    if (p.at > close) after.push_back(Placeholder{p.at - close - 1, p.name, p.lit});
  }
  auto prefix = Expand(tmpl.substr(0, label_at), before, w);
  auto suffix = Expand(tmpl.substr(close + 1), after, w);
  if (!prefix.ok() || !suffix.ok()) return std::nullopt;
  return BatchPlan{only->lit.label, std::move(prefix).value(), std::move(suffix).value()};
}

std::vector<std::vector<std::string>> ChunkNames(const std::vector<std::string>& names,
                                                 size_t max_regex_bytes) {
  std::vector<std::vector<std::string>> out;
  size_t used = 0;
  for (const std::string& n : names) {
    const size_t len = EscapePromString(EscapeRegex(n)).size() + 1;  // plus its '|'
    if (out.empty() || used + len > max_regex_bytes) {
      out.emplace_back();
      used = 0;
    }
    out.back().push_back(n);
    used += len;
  }
  return out;
}

}  // namespace aiscale::monitor
