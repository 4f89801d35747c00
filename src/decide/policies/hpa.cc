#include "decide/policies/hpa.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/numeric.h"

namespace aiscale::decide {
namespace {

// "%.4g" as printf writes it: std::to_chars is specified to produce printf's output for a
// precision, at a fraction of the cost (formatting was a sixth of a tick: bench/controller_bench).
std::string Num(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 4);
  return std::string(buf, r.ptr);
}

HpaMetricConfig ParseMetric(const config::ConfigNode& m) {
  HpaMetricConfig c;
  if (!m.IsMap()) {
    m.Error("must be a map with signal, type, target");
    return c;
  }
  m.CheckKnown({"signal", "type", "resource", "target", "request"});
  c.signal = m.RequiredString("signal");
  const std::string type = m.Enum("type", "Pods", {"Resource", "Pods", "Object", "External"});
  c.spec.source = hpa::ParseSourceType(type).value_or(hpa::SourceType::kPods);
  if (m.Has("resource") && c.spec.source != hpa::SourceType::kResource) {
    m.ErrorAt("resource", "only Resource metrics name a resource");
  }
  c.spec.resource_is_cpu = m.String("resource", "cpu") == "cpu";

  const config::ConfigNode t = m.Child("target");
  if (!m.Has("target")) {
    m.Error("missing required field 'target'");
    return c;
  }
  if (!t.IsMap()) {
    m.ErrorAt("target", "must be a map {type: Utilization|AverageValue|Value, value: N}");
    return c;
  }
  t.CheckKnown({"type", "value"});
  const std::string ttype =
      t.Enum("type", "AverageValue", {"Utilization", "AverageValue", "Value"});
  c.spec.target = hpa::ParseTargetType(ttype).value_or(hpa::TargetType::kAverageValue);
  if (!hpa::TargetAllowed(c.spec.source, c.spec.target)) {
    t.ErrorAt("type", "target type " + ttype + " is not valid for a " + type +
                          " metric (Resource: Utilization|AverageValue; Pods: AverageValue; "
                          "Object/External: Value|AverageValue)");
  }
  if (c.spec.target == hpa::TargetType::kUtilization) {
    // averageUtilization is an integer percent in autoscaling/v2.
    if (!t.Has("value")) t.Error("missing required field 'value'");
    c.target = t.Int("value", 0, config::Above(0));
    c.spec.target_value = static_cast<int64_t>(c.target);
    if (!m.Has("request")) m.Error("missing required field 'request' (Utilization targets)");
    c.request = m.Number("request", 1, config::Above(0));
  } else {
    c.target = t.RequiredNumber("value", config::Above(0));
    c.spec.target_value = ToMilli(c.target);
    if (m.Has("request")) m.ErrorAt("request", "only Utilization targets use a request");
  }
  if (c.spec.target_value <= 0) c.spec.target_value = 1;  // error already recorded
  return c;
}

struct MetricOutcome {
  const HpaMetricConfig* metric;
  std::optional<hpa::CalcResult> result;
  std::string error;
};

MetricOutcome Evaluate(const HpaMetricConfig& m, const PolicyInput& in, double tolerance) {
  MetricOutcome o{&m, std::nullopt, ""};
  const SignalSnapshot& snap = in.signals.Get(m.signal);
  if (!snap.ok()) {
    o.error = m.signal + " is " + std::string(SignalStatusName(snap.status)) +
              (snap.detail.empty() ? "" : " (" + snap.detail + ")");
    return o;
  }
  hpa::CalcOptions opts;
  opts.tolerance_down = opts.tolerance_up = tolerance;
  std::vector<hpa::Pod> pods;
  std::optional<int64_t> total;
  if (m.spec.source == hpa::SourceType::kResource || m.spec.source == hpa::SourceType::kPods) {
    for (const InstanceValue& iv : snap.instances) {
      hpa::Pod p;
      p.name = iv.instance;
      p.ready = iv.ready;
      p.value = ToMilli(iv.value);
      p.request = ToMilli(m.request);
      pods.push_back(p);
    }
    // Replicas that report nothing are pods whose metric is missing.
    for (int i = static_cast<int>(snap.instances.size()); i < in.current; ++i) {
      hpa::Pod p;
      p.name = "(replica " + std::to_string(i) + " without a value)";
      p.request = ToMilli(m.request);
      pods.push_back(p);
    }
  } else {
    total = ToMilli(snap.sum);
    for (int i = 0; i < in.current; ++i) {
      hpa::Pod p;
      p.name = "replica-" + std::to_string(i);
      p.ready = i < in.ready;
      pods.push_back(p);
    }
  }
  auto r = hpa::CalcReplicas(m.spec, pods, in.current, opts, total);
  if (!r.ok()) {
    o.error = "unable to compute replicas from " + m.signal + ": " + r.status().message();
  } else {
    o.result = *r;
  }
  return o;
}

std::string Describe(const MetricOutcome& o) {
  const HpaMetricConfig& m = *o.metric;
  if (!o.result) return o.error;
  const hpa::CalcResult& r = *o.result;
  std::string s = m.signal + " (" + std::string(hpa::SourceTypeName(m.spec.source)) + ", " +
                  std::string(hpa::TargetTypeName(m.spec.target)) + " " + Num(m.target) + "): ";
  if (r.utilization) {
    s += "utilization " + std::to_string(*r.utilization) + "%";
  } else {
    s += "usage " + Num(static_cast<double>(r.usage) / 1000.0);
  }
  s += ", ratio " + Num(r.usage_ratio);
  if (r.new_usage_ratio != r.usage_ratio) s += " (rebalanced " + Num(r.new_usage_ratio) + ")";
  if (r.unready_pods + r.missing_pods > 0) {
    s += ", " + std::to_string(r.unready_pods) + " unready and " + std::to_string(r.missing_pods) +
         " without a value";
  }
  return s + " -> " + std::to_string(r.replicas) + " [" + r.rule + "]";
}

void AddFacts(const MetricOutcome& o, std::vector<Fact>& facts) {
  const std::string p = o.metric->signal + ".";
  facts.emplace_back(p + "target", o.metric->target);
  if (!o.result) {
    facts.emplace_back(p + "valid", 0);
    return;
  }
  const hpa::CalcResult& r = *o.result;
  facts.emplace_back(p + "usage_ratio", r.usage_ratio);
  facts.emplace_back(p + "new_usage_ratio", r.new_usage_ratio);
  if (r.utilization) {
    facts.emplace_back(p + "utilization_pct", *r.utilization);
  } else {
    facts.emplace_back(p + "usage", static_cast<double>(r.usage) / 1000.0);
  }
  facts.emplace_back(p + "proposal", r.replicas);
  facts.emplace_back(p + "ready_pods", r.ready_pods);
  facts.emplace_back(p + "unready_pods", r.unready_pods);
  facts.emplace_back(p + "missing_pods", r.missing_pods);
}

}  // namespace

int64_t ToMilli(double v) {
  const double m = v * 1000.0;
  // Saturating: an observed 1e300 must read as "huge", not as an undefined cast.
  return SaturatingToInt64(std::ceil(m - 1e-6 * std::max(1.0, std::abs(m))));
}

HpaConfig HpaConfig::Parse(const config::ConfigNode& node) {
  HpaConfig c;
  node.CheckKnown({"name", "metrics", "tolerance"});
  c.tolerance = node.Number("tolerance", 0.1, config::AtLeast(0));
  const config::ConfigNode list = node.Child("metrics");
  if (!list.IsDefined()) {
    node.Error("missing required field 'metrics' (a list of {signal, type, target})");
    return c;
  }
  std::set<std::string> seen;
  for (const config::ConfigNode& m : list.Items()) {
    HpaMetricConfig mc = ParseMetric(m);
    if (!mc.signal.empty() && !seen.insert(mc.signal).second) {
      m.ErrorAt("signal", "signal '" + mc.signal + "' is listed twice");
    }
    c.metrics.push_back(std::move(mc));
  }
  if (list.IsSequence() && c.metrics.empty()) list.Error("must list at least one metric");
  return c;
}

std::unique_ptr<Policy> HpaPolicy::Make(const config::ConfigNode& node,
                                        const WorkloadContext& ctx) {
  (void)ctx;  // min/max are the Constraints' job, as in the HPA's normalization step
  return std::make_unique<HpaPolicy>(HpaConfig::Parse(node));
}

std::vector<std::string> HpaPolicy::Signals() const {
  std::vector<std::string> out;
  for (const auto& m : cfg_.metrics) out.push_back(m.signal);
  return out;
}

Recommendation HpaPolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  (void)state;
  Recommendation rec;
  rec.desired = in.current;
  std::vector<MetricOutcome> outcomes;
  int invalid = 0;
  int best = 0;
  const MetricOutcome* winner = nullptr;
  for (const auto& m : cfg_.metrics) {
    outcomes.push_back(Evaluate(m, in, cfg_.tolerance));
  }
  std::string reasons;
  for (const MetricOutcome& o : outcomes) {
    AddFacts(o, rec.facts);
    reasons += (reasons.empty() ? "" : "; ") + Describe(o);
    if (!o.result) {
      ++invalid;
    } else if (!winner || o.result->replicas > best) {
      best = o.result->replicas;
      winner = &o;
    }
  }
  rec.facts.emplace_back("current", in.current);
  rec.facts.emplace_back("invalid_metrics", invalid);
  if (!winner) {
    rec.rule = "hpa_missing_data";
    rec.reason =
        "no metric could be computed, holding " + std::to_string(in.current) + ": " + reasons;
    return rec;
  }
  if (invalid > 0 && best < in.current) {
    // computeReplicasForMetrics: an invalid metric blocks a scale-down.
    rec.rule = "hpa_no_scale_down_on_missing_data";
    rec.reason = "would scale down to " + std::to_string(best) + " but " + std::to_string(invalid) +
                 " metric(s) have no data, holding " + std::to_string(in.current) + ": " + reasons;
    return rec;
  }
  rec.valid = true;
  rec.desired = best;
  rec.facts.emplace_back("desired", best);
  rec.rule = "hpa_" + winner->result->rule;
  rec.reason = "desired " + std::to_string(best) + " = max over " +
               std::to_string(outcomes.size()) + " metric(s) (" + winner->metric->signal +
               "): " + reasons;
  return rec;
}

}  // namespace aiscale::decide
