#include "core/telemetry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

namespace aiscale {
namespace {

constexpr std::string_view kMisuseName = "aiscale_telemetry_misuse_total";
constexpr std::string_view kMisuseHelp =
    "Telemetry updates ignored: undeclared family, wrong type, bad name, label or value.";

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

// Metric names: [a-zA-Z_:][a-zA-Z0-9_:]*.
bool ValidMetricName(std::string_view s) {
  if (s.empty() || !(IsNameStart(s[0]) || s[0] == ':')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsNameChar(c) || c == ':'; });
}

// Label names: [a-zA-Z_][a-zA-Z0-9_]*, and names starting with "__" are reserved.
bool ValidLabelName(std::string_view s) {
  if (s.empty() || !IsNameStart(s[0]) || s.substr(0, 2) == "__") return false;
  return std::all_of(s.begin(), s.end(), IsNameChar);
}

// The shortest text that reads back as the same double; +Inf, -Inf and NaN as Prometheus
// (Go's ParseFloat) spells them.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void AppendEscaped(std::string& out, std::string_view s, bool quote) {
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// `name{a="x",b="y"} value\n`; `extra` is one more label (the histogram's le) when set.
void AppendSample(std::string& out, std::string_view name, const MetricLabels& labels,
                  const std::pair<std::string, std::string>* extra, double value) {
  out += name;
  if (!labels.empty() || extra) {
    out += '{';
    bool first = true;
    auto label = [&](const std::string& k, const std::string& v) {
      if (!first) out += ',';
      first = false;
      out += k;
      out += "=\"";
      AppendEscaped(out, v, /*quote=*/true);
      out += '"';
    };
    for (const auto& [k, v] : labels) label(k, v);
    if (extra) label(extra->first, extra->second);
    out += '}';
  }
  out += ' ';
  out += FormatValue(value);
  out += '\n';
}

void AppendHeader(std::string& out, std::string_view name, std::string_view help,
                  std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  AppendEscaped(out, help, /*quote=*/false);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

// Sorted by label name so {a,b} and {b,a} are one series; nullopt when a name is invalid,
// repeated, or `le` on a histogram (where it is the bucket label).
std::optional<MetricLabels> Normalize(const MetricLabels& labels, bool histogram) {
  MetricLabels sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (!ValidLabelName(sorted[i].first)) return std::nullopt;
    if (histogram && sorted[i].first == "le") return std::nullopt;
    if (i > 0 && sorted[i].first == sorted[i - 1].first) return std::nullopt;
  }
  return sorted;
}

}  // namespace

void Telemetry::Declare(std::string name, std::string help, Type type, std::vector<double> bounds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ValidMetricName(name) || name == kMisuseName) {
    ++misuse_;
    return;
  }
  auto it = families_.find(name);
  if (it != families_.end()) {
    // Declaring again with the same type is harmless (two components share a family);
    // another type would make earlier updates lie, so it is refused.
    if (it->second.type != type) ++misuse_;
    return;
  }
  Family f;
  f.type = type;
  f.help = std::move(help);
  f.bounds = std::move(bounds);
  families_.emplace(std::move(name), std::move(f));
}

void Telemetry::DeclareCounter(std::string name, std::string help) {
  Declare(std::move(name), std::move(help), Type::kCounter, {});
}

void Telemetry::DeclareGauge(std::string name, std::string help) {
  Declare(std::move(name), std::move(help), Type::kGauge, {});
}

void Telemetry::DeclareHistogram(std::string name, std::string help, std::vector<double> buckets) {
  // +Inf is implicit and NaN is no bound; the rest ascending and distinct.
  std::erase_if(buckets, [](double b) { return !std::isfinite(b); });
  std::sort(buckets.begin(), buckets.end());
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  Declare(std::move(name), std::move(help), Type::kHistogram, std::move(buckets));
}

Telemetry::Series* Telemetry::Find(std::string_view name, Type type, const MetricLabels& labels) {
  auto it = families_.find(name);
  if (it == families_.end() || it->second.type != type) return nullptr;
  Family& f = it->second;
  const auto key = Normalize(labels, type == Type::kHistogram);
  if (!key) return nullptr;
  auto [series, inserted] = f.series.try_emplace(*key);
  if (inserted && type == Type::kHistogram) series->second.buckets.assign(f.bounds.size(), 0);
  return &series->second;
}

void Telemetry::Add(std::string_view name, const MetricLabels& labels, double v) {
  std::lock_guard<std::mutex> lock(mu_);
  // A counter only goes up; a negative or NaN increment would break rate().
  Series* s = (v >= 0) ? Find(name, Type::kCounter, labels) : nullptr;
  if (!s) {
    ++misuse_;
    return;
  }
  s->value += v;
}

void Telemetry::Set(std::string_view name, const MetricLabels& labels, double v) {
  std::lock_guard<std::mutex> lock(mu_);
  Series* s = Find(name, Type::kGauge, labels);
  if (!s) {
    ++misuse_;
    return;
  }
  s->value = v;
}

void Telemetry::Observe(std::string_view name, const MetricLabels& labels, double v) {
  std::lock_guard<std::mutex> lock(mu_);
  Series* s = std::isnan(v) ? nullptr : Find(name, Type::kHistogram, labels);
  if (!s) {
    ++misuse_;
    return;
  }
  const std::vector<double>& bounds = families_.find(name)->second.bounds;
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (v <= bounds[i]) s->buckets[i] += 1;  // cumulative: every bound at or above v
  }
  s->sum += v;
  s->count += 1;
}

void Telemetry::Forget(std::string_view name, std::string_view label, std::string_view value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) {
    ++misuse_;
    return;
  }
  std::erase_if(it->second.series, [&](const auto& entry) {
    const MetricLabels& labels = entry.first;
    return std::any_of(labels.begin(), labels.end(),
                       [&](const auto& kv) { return kv.first == label && kv.second == value; });
  });
}

double Telemetry::Value(std::string_view name, const MetricLabels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (name == kMisuseName) return labels.empty() ? misuse_ : 0;
  auto it = families_.find(name);
  if (it == families_.end() || it->second.type == Type::kHistogram) return 0;
  const auto key = Normalize(labels, false);
  if (!key) return 0;
  auto s = it->second.series.find(*key);
  return s == it->second.series.end() ? 0 : s->second.value;
}

void Telemetry::RenderFamily(std::string& out, const std::string& name, const Family& f) {
  static constexpr std::string_view kTypeNames[] = {"counter", "gauge", "histogram"};
  AppendHeader(out, name, f.help, kTypeNames[static_cast<int>(f.type)]);
  for (const auto& [labels, s] : f.series) {
    if (f.type != Type::kHistogram) {
      AppendSample(out, name, labels, nullptr, s.value);
      continue;
    }
    const std::string bucket = name + "_bucket";
    for (size_t i = 0; i < f.bounds.size(); ++i) {
      const std::pair<std::string, std::string> le{"le", FormatValue(f.bounds[i])};
      AppendSample(out, bucket, labels, &le, s.buckets[i]);
    }
    const std::pair<std::string, std::string> inf{"le", "+Inf"};
    AppendSample(out, bucket, labels, &inf, s.count);
    AppendSample(out, name + "_sum", labels, nullptr, s.sum);
    AppendSample(out, name + "_count", labels, nullptr, s.count);
  }
}

std::string Telemetry::RenderText() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  bool misuse_done = false;
  auto render_misuse = [&] {
    AppendHeader(out, kMisuseName, kMisuseHelp, "counter");
    AppendSample(out, kMisuseName, {}, nullptr, misuse_);
    misuse_done = true;
  };
  // Families sorted by name, the misuse counter (always present) in its place among them.
  for (const auto& [name, family] : families_) {
    if (!misuse_done && name > kMisuseName) render_misuse();
    RenderFamily(out, name, family);
  }
  if (!misuse_done) render_misuse();
  return out;
}

}  // namespace aiscale
