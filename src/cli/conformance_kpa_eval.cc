#include "cli/conformance_kpa_eval.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/bounded_file.h"
#include "core/strict_json.h"
#include "decide/policies/kpa_algorithm.h"

namespace aiscale::cli {
namespace {

using nlohmann::json;
using namespace aiscale::decide;

// Parsing errors stay inside this file: thrown at the field, caught in EvaluateKpaVectors.
struct BadVector {
  std::string where;
  std::string what;
};

std::string TypeName(const json& j) { return j.type_name(); }

const json& Field(const json& obj, const std::string& key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) throw BadVector{where, "missing required field '" + key + "'"};
  return *it;
}

double Number(const json& j, const std::string& where) {
  if (!j.is_number()) throw BadVector{where, "expected a number, got " + TypeName(j)};
  return j.get<double>();
}

int Integer(const json& j, const std::string& where) {
  const double v = Number(j, where);
  if (v != std::floor(v) || std::abs(v) > 2e9) {
    throw BadVector{where, "expected an integer, got " + j.dump()};
  }
  return static_cast<int>(v);
}

double OptNumber(const json& obj, const std::string& key, double fallback,
                 const std::string& where) {
  auto it = obj.find(key);
  return it == obj.end() ? fallback : Number(*it, where + "." + key);
}

// A number, or null; absent counts as null.
std::optional<double> NullableNumber(const json& obj, const std::string& key,
                                     const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  return Number(*it, where + "." + key);
}

struct Case {
  std::string name;
  double target = 0, utilization = 0.7, stable_window_s = 60, panic_pct = 10, threshold_pct = 200;
  double up_rate = 1000, down_rate = 2, grace_s = 30;
  int activation_scale = 1;
  bool allow_zero_initial = false;
  int ready = 0;
  std::vector<std::pair<double, double>> samples;  // (secondsAgo, value)
  std::optional<double> panic_since;
  int max_panic_pods = 0;
  int expected_pods = 0;
  bool expected_panic = false;
  bool gate = false;  // run the scale-to-zero grace period too (aiscale extension)
  std::optional<double> last_nonzero_ago;
  int current = 0;
};

Case ParseCase(const json& c, const std::string& where) {
  if (!c.is_object()) throw BadVector{where, "expected an object, got " + TypeName(c)};
  Case k;
  const json& name = Field(c, "name", where);
  if (!name.is_string()) throw BadVector{where + ".name", "expected a string"};
  k.name = name.get<std::string>();
  const std::string w = where + " (" + k.name + ")";
  const json& cfg = Field(c, "config", w);
  if (!cfg.is_object()) throw BadVector{w + ".config", "expected an object"};
  const std::string wc = w + ".config";
  k.target = Number(Field(cfg, "targetConcurrency", wc), wc + ".targetConcurrency");
  k.utilization = OptNumber(cfg, "targetUtilization", k.utilization, wc);
  k.stable_window_s = OptNumber(cfg, "stableWindowSeconds", k.stable_window_s, wc);
  k.panic_pct = OptNumber(cfg, "panicWindowPercentage", k.panic_pct, wc);
  k.threshold_pct = OptNumber(cfg, "panicThresholdPercentage", k.threshold_pct, wc);
  k.up_rate = OptNumber(cfg, "maxScaleUpRate", k.up_rate, wc);
  k.down_rate = OptNumber(cfg, "maxScaleDownRate", k.down_rate, wc);
  k.grace_s = OptNumber(cfg, "scaleToZeroGracePeriodSeconds", k.grace_s, wc);
  if (cfg.contains("activationScale")) {
    k.activation_scale = Integer(cfg["activationScale"], wc + ".activationScale");
  }
  if (cfg.contains("allowZeroInitialScale")) {
    if (!cfg["allowZeroInitialScale"].is_boolean()) {
      throw BadVector{wc + ".allowZeroInitialScale", "expected true or false"};
    }
    k.allow_zero_initial = cfg["allowZeroInitialScale"].get<bool>();
  }
  k.ready = Integer(Field(c, "readyPods", w), w + ".readyPods");
  const json& samples = Field(c, "samples", w);
  if (!samples.is_array()) throw BadVector{w + ".samples", "expected an array"};
  for (size_t i = 0; i < samples.size(); ++i) {
    const std::string ws = w + ".samples[" + std::to_string(i) + "]";
    const json& s = samples[i];
    if (!s.is_object()) throw BadVector{ws, "expected an object"};
    const double ago = Number(Field(s, "secondsAgo", ws), ws + ".secondsAgo");
    const char* key = s.contains("concurrency") ? "concurrency" : "rps";
    if (!s.contains(key)) throw BadVector{ws, "missing required field 'concurrency' (or 'rps')"};
    k.samples.emplace_back(ago, Number(s[key], ws + "." + key));
  }
  k.panic_since = NullableNumber(c, "panicSinceSecondsAgo", w);
  if (c.contains("maxPanicPods"))
    k.max_panic_pods = Integer(c["maxPanicPods"], w + ".maxPanicPods");
  k.expected_pods = Integer(Field(c, "expectedPods", w), w + ".expectedPods");
  const json& ep = Field(c, "expectedPanic", w);
  if (!ep.is_boolean()) throw BadVector{w + ".expectedPanic", "expected true or false"};
  k.expected_panic = ep.get<bool>();
  k.gate = c.contains("lastNonZeroSecondsAgo");
  k.last_nonzero_ago = NullableNumber(c, "lastNonZeroSecondsAgo", w);
  k.current = c.contains("currentPods") ? Integer(c["currentPods"], w + ".currentPods") : k.ready;
  // A negative pod count is an invalid vector: an error for the file naming the case.
  for (const auto& [field, v] : {std::pair{"readyPods", k.ready},
                                 {"maxPanicPods", k.max_panic_pods},
                                 {"expectedPods", k.expected_pods},
                                 {"currentPods", k.current}}) {
    if (v < 0) throw BadVector{w + "." + field, "must be >= 0, got " + std::to_string(v)};
  }
  return k;
}

// Bound on every time in a vector, in seconds.
constexpr double kMaxSeconds = 1e6;

// Why the algorithm cannot take these inputs; empty when it can.
std::string Unrepresentable(const Case& k) {
  if (!(k.target * k.utilization > 0)) return "target per pod must be > 0";
  if (!(k.stable_window_s >= 1) || k.stable_window_s != std::floor(k.stable_window_s)) {
    return "stableWindowSeconds must be a whole number of seconds >= 1";
  }
  // Times become int64 seconds and nanoseconds below; bounded so the conversions cannot
  // overflow (found by tests/fuzz/conformance_kpa_fuzz).
  if (k.stable_window_s > kMaxSeconds) return "stableWindowSeconds must be <= 1000000";
  if (!(k.panic_pct > 0 && k.panic_pct <= 100)) return "panicWindowPercentage must be in (0, 100]";
  if (!(k.up_rate > 0) || !(k.down_rate > 0)) return "scale rates must be > 0";
  if (k.ready < 0 || k.max_panic_pods < 0 || k.current < 0) return "negative pod count";
  for (const auto& [ago, v] : k.samples) {
    if (ago < 0) return "a sample in the future (secondsAgo < 0)";
    if (!(ago <= kMaxSeconds)) return "a sample older than 1000000 s";
    if (!std::isfinite(v)) return "a non-finite sample";
  }
  return "";
}

std::string Outcome(int pods, bool panic) {
  return std::to_string(pods) + " (panic " + (panic ? "true" : "false") + ")";
}

KpaCaseOutcome Evaluate(const Case& k) {
  KpaCaseOutcome out;
  out.name = k.name;
  auto fail = [&](const std::string& why) {
    out.passed = false;
    out.line = "FAIL " + k.name + ": " + why;
    return out;
  };
  if (std::string why = Unrepresentable(k); !why.empty()) {
    return fail("expected " + Outcome(k.expected_pods, k.expected_panic) +
                " got nothing: cannot represent: " + why);
  }
  // An arbitrary positive "now"; only differences matter.
  const TimePoint now = AtSeconds(1e6);
  const int64_t now_s = 1'000'000;
  std::vector<std::pair<int64_t, double>> by_second;
  for (const auto& [ago, v] : k.samples) {
    by_second.emplace_back(now_s - static_cast<int64_t>(std::ceil(ago)), v);
  }
  std::stable_sort(by_second.begin(), by_second.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<KpaBucket> buckets;
  std::vector<int> counts;
  for (const auto& [s, v] : by_second) {
    if (!buckets.empty() && buckets.back().second == s) {
      buckets.back().value += v;
      ++counts.back();
    } else {
      buckets.push_back({s, v});
      counts.push_back(1);
    }
  }
  for (size_t i = 0; i < buckets.size(); ++i) buckets[i].value /= counts[i];

  KpaParams p;
  p.target = k.target * k.utilization;
  p.panic_threshold = k.threshold_pct / 100.0;
  p.max_scale_up_rate = k.up_rate;
  p.max_scale_down_rate = k.down_rate;
  p.activation_scale = k.activation_scale;
  p.stable_window = Seconds(k.stable_window_s);
  const int stable_buckets = static_cast<int>(k.stable_window_s);
  const KpaWindow stable = KpaWindowAverage(buckets, now_s, stable_buckets);
  const KpaWindow panic =
      KpaWindowAverage(buckets, now_s, KpaPanicBuckets(p.stable_window, k.panic_pct));
  if (stable.empty) {
    return fail("expected " + Outcome(k.expected_pods, k.expected_panic) +
                " got no valid scale (no data in the stable window)");
  }
  KpaPanicState st;
  if (k.panic_since) st.panic_time = now - Seconds(*k.panic_since);
  st.max_panic_pods = k.max_panic_pods;
  const KpaDecision d = KpaScale(p, stable.value, panic.value, k.ready, now, st);
  int pods = d.desired;
  if (k.gate) {
    std::optional<TimePoint> last;
    if (k.last_nonzero_ago) {
      last = now - Seconds(*k.last_nonzero_ago);
    } else if (!k.allow_zero_initial) {
      last = now;  // the autoscaler started now, as the policy does
    }
    pods = KpaApplyScaleToZero(d.desired, k.current, now, Seconds(k.grace_s), last).desired;
  }
  if (pods != k.expected_pods || d.in_panic != k.expected_panic) {
    return fail("expected " + Outcome(k.expected_pods, k.expected_panic) + " got " +
                Outcome(pods, d.in_panic));
  }
  out.passed = true;
  out.line = "PASS " + k.name;
  return out;
}

}  // namespace

std::string KpaConformanceReport::Summary() const {
  return std::to_string(passed) + " passed, " + std::to_string(failed) + " failed";
}

Result<KpaConformanceReport> EvaluateKpaVectors(const std::string& json_text,
                                                const std::string& file) {
  std::vector<Case> cases;
  try {
    // Strict: a repeated key or absurd nesting is an error, not silently the last value.
    auto parsed = ParseStrictJson(json_text);
    if (!parsed.ok()) throw BadVector{"", parsed.status().message()};
    const json root = std::move(*parsed);
    if (!root.is_object()) throw BadVector{"", "top level must be an object"};
    const json& kind = Field(root, "kind", "top level");
    if (kind != "kpa") throw BadVector{"kind", "expected \"kpa\", got " + kind.dump()};
    const json& list = Field(root, "cases", "top level");
    if (!list.is_array()) throw BadVector{"cases", "expected an array"};
    std::set<std::string> names;
    for (size_t i = 0; i < list.size(); ++i) {
      cases.push_back(ParseCase(list[i], "cases[" + std::to_string(i) + "]"));
      if (!names.insert(cases.back().name).second) {
        throw BadVector{"cases[" + std::to_string(i) + "].name",
                        "duplicate case name '" + cases.back().name + "'"};
      }
    }
  } catch (const BadVector& m) {
    return Status::Error("malformed KPA vector file " + file + ": " +
                         (m.where.empty() ? "" : m.where + ": ") + m.what);
  } catch (const json::exception& e) {
    return Status::Error("malformed KPA vector file " + file + ": " + e.what());
  }
  KpaConformanceReport report;
  for (const Case& k : cases) {
    report.cases.push_back(Evaluate(k));
    ++(report.cases.back().passed ? report.passed : report.failed);
  }
  return report;
}

Result<KpaConformanceReport> EvaluateKpaVectorFile(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, ReadBoundedFile(path, kConformanceFileLimit));
  return EvaluateKpaVectors(text, path);
}

}  // namespace aiscale::cli
