#include "cli/conformance_hpa_eval.h"

#include <cmath>
#include <deque>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/bounded_file.h"
#include "core/config/config_node.h"
#include "core/strict_json.h"
#include "decide/policies/hpa_replica_calc.h"
#include "decide/stabilizer.h"

namespace aiscale::cli {
namespace {

using nlohmann::json;
namespace hpa = decide::hpa;

// Thrown only inside this file, for a malformed field; caught per case.
struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Thrown for a well-formed input the implementation cannot represent: the case fails.
struct Unrepresentable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Typed access to a JSON object with the field path in every error.
class Obj {
 public:
  Obj(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw Malformed(path_ + ": must be an object");
  }
  bool Has(const std::string& k) const { return j_.contains(k) && !j_.at(k).is_null(); }
  const json& Raw(const std::string& k) const { return j_.at(k); }
  std::string Path(const std::string& k) const { return path_.empty() ? k : path_ + "." + k; }

  double Number(const std::string& k) const {
    if (!Has(k)) throw Malformed(Path(k) + ": missing required number");
    if (!j_.at(k).is_number()) throw Malformed(Path(k) + ": must be a number");
    return j_.at(k).get<double>();
  }
  std::optional<double> OptNumber(const std::string& k) const {
    if (!Has(k)) return std::nullopt;
    return Number(k);
  }
  int Int(const std::string& k) const {
    const double v = Number(k);
    if (v != std::floor(v) || std::abs(v) > 2e9) throw Malformed(Path(k) + ": must be an integer");
    return static_cast<int>(v);
  }
  // A replica count: an invalid vector when negative (an error for the file, not a FAIL).
  int Count(const std::string& k) const {
    const int v = Int(k);
    if (v < 0) throw Malformed(Path(k) + ": must be >= 0, got " + std::to_string(v));
    return v;
  }
  // A time in the past: an invalid vector when negative.
  double Ago(const std::string& k) const {
    const double v = Number(k);
    if (!(v >= 0)) throw Malformed(Path(k) + ": must be >= 0 (a time in the past)");
    return v;
  }
  std::optional<int> OptInt(const std::string& k) const {
    if (!Has(k)) return std::nullopt;
    return Int(k);
  }
  std::string String(const std::string& k) const {
    if (!Has(k)) throw Malformed(Path(k) + ": missing required string");
    if (!j_.at(k).is_string()) throw Malformed(Path(k) + ": must be a string");
    return j_.at(k).get<std::string>();
  }
  std::string String(const std::string& k, const std::string& fallback) const {
    return Has(k) ? String(k) : fallback;
  }
  bool Bool(const std::string& k, bool fallback) const {
    if (!Has(k)) return fallback;
    if (!j_.at(k).is_boolean()) throw Malformed(Path(k) + ": must be true or false");
    return j_.at(k).get<bool>();
  }
  Obj Child(const std::string& k) const {
    if (!Has(k)) throw Malformed(Path(k) + ": missing required object");
    return Obj(j_.at(k), Path(k));
  }
  std::vector<Obj> List(const std::string& k) const {
    std::vector<Obj> out;
    if (!Has(k)) return out;
    if (!j_.at(k).is_array()) throw Malformed(Path(k) + ": must be a list");
    for (size_t i = 0; i < j_.at(k).size(); ++i) {
      out.emplace_back(j_.at(k)[i], Path(k) + "[" + std::to_string(i) + "]");
    }
    return out;
  }

 private:
  const json& j_;
  std::string path_;
};

int64_t Milli(const Obj& o, const std::string& k) { return std::llround(o.Number(k)); }

// Case fields override the file's defaults.
double Setting(const Obj& c, const std::optional<Obj>& defaults, const std::string& k,
               double fallback) {
  if (c.Has(k)) return c.Number(k);
  if (defaults && defaults->Has(k)) return defaults->Number(k);
  return fallback;
}

HpaCaseOutcome Compare(const std::string& name, const std::string& what, int64_t expected,
                       int64_t got) {
  HpaCaseOutcome o;
  o.name = name;
  o.passed = expected == got;
  if (!o.passed) {
    o.detail = "expected " + what + std::to_string(expected) + " got " + std::to_string(got);
  }
  return o;
}

HpaCaseOutcome RunReplicas(const Obj& c, const std::optional<Obj>& defaults,
                           const std::string& name) {
  const int current = c.Count("currentReplicas");
  const int expected = c.Count("expectedReplicas");
  const std::optional<int> expected_util = c.OptInt("expectedUtilization");
  hpa::CalcOptions opts;
  opts.tolerance_down = opts.tolerance_up = Setting(c, defaults, "tolerance", 0.1);
  opts.cpu_initialization_period_s =
      Setting(c, defaults, "cpuInitializationPeriodSeconds", opts.cpu_initialization_period_s);
  opts.delay_of_initial_readiness_status_s =
      Setting(c, defaults, "delayOfInitialReadinessStatusSeconds",
              opts.delay_of_initial_readiness_status_s);
  opts.metric_window_s = Setting(c, defaults, "metricWindowSeconds", opts.metric_window_s);

  const Obj metric = c.Child("metric");
  const Obj target = metric.Child("target");
  hpa::MetricSpec spec;
  const std::string type = metric.String("type");
  const std::string ttype = target.String("type");
  auto source = hpa::ParseSourceType(type);
  auto tt = hpa::ParseTargetType(ttype);
  if (!source) throw Unrepresentable("unsupported metric type '" + type + "'");
  if (!tt) throw Unrepresentable("unsupported target type '" + ttype + "'");
  spec.source = *source;
  spec.target = *tt;
  spec.target_value = Milli(target, "value");
  // Kubernetes' validation: every target (value, averageValue, averageUtilization) is > 0.
  if (!(target.Number("value") > 0)) throw Malformed(target.Path("value") + ": must be > 0");
  const std::string resource = c.String("resource", "cpu");
  if (resource != "cpu" && resource != "memory") {
    throw Unrepresentable("unsupported resource '" + resource + "'");
  }
  spec.resource_is_cpu = resource == "cpu";

  std::vector<hpa::Pod> pods;
  std::deque<std::string> names;  // what pods[i].name views, through CalcReplicas
  for (const Obj& p : c.List("pods")) {
    hpa::Pod pod;
    pod.name = names.emplace_back(p.String("name", "pod-" + std::to_string(pods.size())));
    const std::string phase = p.String("phase", "Running");
    auto ph = hpa::ParsePodPhase(phase);
    if (!ph) throw Unrepresentable("unsupported pod phase '" + phase + "'");
    pod.phase = *ph;
    pod.ready = p.Bool("ready", true);
    if (p.Has("value")) pod.value = Milli(p, "value");
    // Resource usage (CPU, memory) is never negative; custom metrics may be.
    if (p.Has("value") && *source == hpa::SourceType::kResource && p.Number("value") < 0) {
      throw Malformed(p.Path("value") + ": resource usage must be >= 0");
    }
    pod.has_request = p.Has("request");
    if (pod.has_request) pod.request = Milli(p, "request");
    if (p.Has("startedSecondsAgo")) pod.started_s_ago = p.Ago("startedSecondsAgo");
    if (p.Has("readyTransitionSecondsAgo")) {
      pod.ready_transition_s_ago = p.Ago("readyTransitionSecondsAgo");
    }
    pod.deleting = p.Bool("deleting", false);
    pods.push_back(pod);
  }
  std::optional<int64_t> total;
  if (c.Has("objectValue")) total = Milli(c, "objectValue");

  auto r = hpa::CalcReplicas(spec, pods, current, opts, total);
  if (!r.ok()) {
    HpaCaseOutcome o{
        name, false,
        "expected " + std::to_string(expected) + " got an error: " + r.status().message()};
    return o;
  }
  HpaCaseOutcome o = Compare(name, "", expected, r->replicas);
  if (o.passed && expected_util) {
    if (!r->utilization) {
      o.passed = false;
      o.detail = "expected utilization " + std::to_string(*expected_util) +
                 " got none (not a Utilization target)";
    } else {
      o = Compare(name, "utilization ", *expected_util, *r->utilization);
    }
  }
  return o;
}

decide::HpaBehavior ParseBehavior(const Obj& c) {
  if (!c.Has("behavior")) return decide::HpaBehavior::Defaults();
  // JSON is YAML: reuse the config reader so the vectors get Kubernetes' validation.
  config::ConfigErrors errors;
  const config::ConfigNode node =
      config::ParseConfig(c.Raw("behavior").dump(), c.Path("behavior"), errors);
  const decide::HpaBehavior b = decide::HpaBehavior::Parse(node);
  if (!errors.empty()) {
    std::string msg;
    for (const auto& e : errors.all()) msg += (msg.empty() ? "" : "; ") + e.path + ": " + e.message;
    throw Unrepresentable("invalid behavior: " + msg);
  }
  return b;
}

HpaCaseOutcome RunBehavior(const Obj& c, const std::string& name) {
  decide::NormalizeInput in;
  in.current = c.Count("currentReplicas");
  in.desired = c.Count("recommendation");
  in.min_replicas = c.Has("minReplicas") ? c.Count("minReplicas") : 1;
  in.max_replicas = c.Count("maxReplicas");
  if (in.min_replicas > in.max_replicas) {
    throw Malformed("minReplicas " + std::to_string(in.min_replicas) + " > maxReplicas " +
                    std::to_string(in.max_replicas));
  }
  const int expected = c.Count("expectedReplicas");
  const decide::HpaBehavior b = ParseBehavior(c);
  // Any fixed instant works: only the differences to it matter.
  const TimePoint now = AtSeconds(1e6);
  decide::BehaviorHistory h;
  for (const Obj& r : c.List("history")) {
    h.recommendations.push_back({now - Seconds(r.Ago("secondsAgo")), r.Count("replicas"), false});
  }
  for (const Obj& e : c.List("scaleEvents")) {
    const int change = e.Int("change");
    const decide::TimedValue v{now - Seconds(e.Ago("secondsAgo")), std::abs(change), false};
    if (change > 0) h.scale_up_events.push_back(v);
    if (change < 0) h.scale_down_events.push_back(v);
  }
  const decide::Normalized n = decide::Normalize(b, h, in, now);
  return Compare(name, "", expected, n.replicas);
}

}  // namespace

std::string HpaCaseOutcome::Line() const {
  return passed ? "PASS " + name : "FAIL " + name + ": " + detail;
}

std::string HpaVectorReport::Summary() const {
  return std::to_string(passed) + " passed, " + std::to_string(failed) + " failed";
}

Result<HpaVectorReport> EvaluateHpaVectors(const std::string& json_text,
                                           const std::string& source_name) {
  // Strict: a repeated key or absurd nesting is an error, not silently the last value.
  auto parsed = ParseStrictJson(json_text);
  if (!parsed.ok()) return Status::Error(source_name + ": " + parsed.status().message());
  const json root = std::move(*parsed);
  HpaVectorReport report;
  std::string where = source_name;
  try {
    const Obj top(root, "");
    if (top.Has("kind") && top.String("kind") != "hpa") {
      throw Malformed("kind: must be \"hpa\", got \"" + top.String("kind") + "\"");
    }
    if (!top.Has("cases")) throw Malformed("cases: missing required list");
    std::optional<Obj> defaults;
    if (top.Has("defaults")) defaults.emplace(top.Raw("defaults"), "defaults");
    const std::vector<Obj> cases = top.List("cases");
    for (size_t i = 0; i < cases.size(); ++i) {
      const Obj& c = cases[i];
      where = source_name + ": case " + std::to_string(i);
      const std::string name = c.String("name");
      where += " (" + name + ")";
      const std::string step = c.String("step", "replicas");
      HpaCaseOutcome o;
      try {
        if (step == "replicas") {
          o = RunReplicas(c, defaults, name);
        } else if (step == "behavior") {
          o = RunBehavior(c, name);
        } else {
          throw Unrepresentable("unsupported step '" + step + "'");
        }
      } catch (const Unrepresentable& e) {
        o = HpaCaseOutcome{name, false, std::string("cannot represent the inputs: ") + e.what()};
      }
      (o.passed ? report.passed : report.failed)++;
      report.cases.push_back(o);
    }
  } catch (const Malformed& e) {
    return Status::Error(where + ": " + e.what());
  } catch (const json::exception& e) {
    return Status::Error(where + ": " + e.what());
  }
  return report;
}

Result<HpaVectorReport> EvaluateHpaVectorsFile(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, ReadBoundedFile(path, kConformanceFileLimit));
  return EvaluateHpaVectors(text, path);
}

}  // namespace aiscale::cli
