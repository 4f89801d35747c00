#include "decide/policies/hpa.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/numeric.h"
#include "core/signal.h"
#include "decide/text.h"

namespace aiscale::decide {
namespace {

// "%.4g" as printf writes it (decide/text.h).

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

struct PodValue {
  std::string name;
  double value = 0;
  bool ready = true;
  int series = 0;
};

// One value per replica. A replica may report several series ("<pod>/gpu0", "<pod>/gpu1": the
// dcgm preset, or a data-parallel server's engines); counted as pods, 2 replicas of 4 GPUs were
// 8 pods, so a stale replica went unnoticed and the size came out per GPU. A share (a signal
// bounded to 0-100 or 0-1) is averaged over the replica's series, an amount adds up.
std::vector<PodValue> ByReplica(const SignalSnapshot& snap, std::string_view signal) {
  const bool share = signals::ValidRange(signal).max <= 100;
  std::vector<PodValue> pods;
  std::unordered_map<std::string_view, size_t> index;
  for (const InstanceValue& iv : snap.instances) {
    const std::string_view name = std::string_view(iv.instance).substr(0, iv.instance.find('/'));
    auto [it, added] = index.emplace(name, pods.size());
    if (added) pods.push_back({std::string(name), 0, true, 0});
    PodValue& p = pods[it->second];
    p.value += iv.value;
    p.ready = p.ready && iv.ready;
    ++p.series;
  }
  if (share) {
    for (PodValue& p : pods) p.value /= p.series;
  }
  return pods;
}

MetricOutcome Evaluate(const HpaMetricConfig& m, const PolicyInput& in, double tolerance) {
  MetricOutcome o{&m, std::nullopt, ""};
  const SignalSnapshot& snap = in.signals.Get(m.signal);
  if (!snap.ok()) {
    o.error = StrCat(m.signal, " is ", SignalStatusName(snap.status));
    if (!snap.detail.empty()) StrAppend(o.error, " (", snap.detail, ")");
    return o;
  }
  if (snap.AnyNegative()) {
    o.error = StrCat(m.signal, " has a negative value (", snap.detail.empty() ? "" : snap.detail,
                     snap.detail.empty() ? "" : "; ", "not a load a target divides)");
    return o;
  }
  hpa::CalcOptions opts;
  opts.tolerance_down = opts.tolerance_up = tolerance;
  std::vector<hpa::Pod> pods;
  pods.reserve(static_cast<size_t>(
      std::max<int64_t>(in.current, static_cast<int64_t>(snap.instances.size()))));
  std::optional<int64_t> total;
  if (m.spec.source == hpa::SourceType::kResource || m.spec.source == hpa::SourceType::kPods) {
    const int64_t request = ToMilli(m.request);
    for (const PodValue& pv : ByReplica(snap, m.signal)) {
      hpa::Pod& p = pods.emplace_back();
      p.name = pv.name;
      p.ready = pv.ready;
      p.value = ToMilli(pv.value);
      p.request = request;
    }
    // Replicas that report nothing are pods whose metric is missing (named in no message:
    // they have a request).
    for (int i = static_cast<int>(pods.size()); i < in.current; ++i) {
      hpa::Pod& p = pods.emplace_back();
      p.name = "(a replica without a value)";
      p.request = request;
    }
  } else {
    total = ToMilli(snap.sum);
    for (int i = 0; i < in.current; ++i) {
      hpa::Pod& p = pods.emplace_back();
      p.name = "(a replica)";  // named in no message: no request check for these sources
      p.ready = i < in.ready;
    }
  }
  auto r = hpa::CalcReplicas(m.spec, pods, in.current, opts, total);
  if (!r.ok()) {
    o.error = StrCat("unable to compute replicas from ", m.signal, ": ", r.status().message());
  } else {
    o.result = std::move(*r);
  }
  return o;
}

HpaMetricText MakeText(const HpaMetricConfig& m) {
  HpaMetricText t;
  t.reason_head = StrCat(m.signal, " (", hpa::SourceTypeName(m.spec.source), ", ",
                         hpa::TargetTypeName(m.spec.target), " ", Num(m.target), "): ");
  const auto name = [&](std::string_view fact) { return StrCat(m.signal, ".", fact); };
  t.target = name("target");
  t.valid = name("valid");
  t.usage_ratio = name("usage_ratio");
  t.new_usage_ratio = name("new_usage_ratio");
  t.utilization_pct = name("utilization_pct");
  t.usage = name("usage");
  t.proposal = name("proposal");
  t.ready_pods = name("ready_pods");
  t.unready_pods = name("unready_pods");
  t.missing_pods = name("missing_pods");
  return t;
}

// Appends the metric's part of the reason to `s`; `head` is its MakeText().reason_head.
void Describe(const MetricOutcome& o, std::string_view head, std::string& s) {
  if (!o.result) {
    s += o.error;
    return;
  }
  const hpa::CalcResult& r = *o.result;
  s += head;
  if (r.utilization) {
    StrAppend(s, "utilization ", *r.utilization, "%");
  } else {
    StrAppend(s, "usage ", Num(static_cast<double>(r.usage) / 1000.0));
  }
  StrAppend(s, ", ratio ", Num(r.usage_ratio));
  if (r.new_usage_ratio != r.usage_ratio)
    StrAppend(s, " (rebalanced ", Num(r.new_usage_ratio), ")");
  if (r.unready_pods + r.missing_pods > 0) {
    StrAppend(s, ", ", r.unready_pods, " unready and ", r.missing_pods, " without a value");
  }
  StrAppend(s, " -> ", r.replicas, " [", r.rule, "]");
}

void AddFacts(const MetricOutcome& o, const HpaMetricText& t, std::vector<Fact>& facts) {
  facts.emplace_back(t.target, o.metric->target);
  if (!o.result) {
    facts.emplace_back(t.valid, 0);
    return;
  }
  const hpa::CalcResult& r = *o.result;
  facts.emplace_back(t.usage_ratio, r.usage_ratio);
  facts.emplace_back(t.new_usage_ratio, r.new_usage_ratio);
  if (r.utilization) {
    facts.emplace_back(t.utilization_pct, *r.utilization);
  } else {
    facts.emplace_back(t.usage, static_cast<double>(r.usage) / 1000.0);
  }
  facts.emplace_back(t.proposal, r.replicas);
  facts.emplace_back(t.ready_pods, r.ready_pods);
  facts.emplace_back(t.unready_pods, r.unready_pods);
  facts.emplace_back(t.missing_pods, r.missing_pods);
}

}  // namespace

int64_t ToMilli(double v) {
  const double m = v * 1000.0;
  // Saturating: an observed 1e300 must read as "huge", not as an undefined cast. An infinite m
  // is answered first: inf - inf below is NaN, which saturates to the lowest value.
  if (std::isinf(m)) return SaturatingToInt64(m);
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

HpaPolicy::HpaPolicy(HpaConfig cfg) : cfg_(std::move(cfg)) {
  text_.reserve(cfg_.metrics.size());
  for (const HpaMetricConfig& m : cfg_.metrics) text_.push_back(MakeText(m));
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

bool HpaPolicy::HandlesPartial(std::string_view signal) const {
  for (const auto& m : cfg_.metrics) {
    if (m.signal == signal) {
      return m.spec.source == hpa::SourceType::kResource || m.spec.source == hpa::SourceType::kPods;
    }
  }
  return false;
}

Recommendation HpaPolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  (void)state;
  Recommendation rec;
  rec.desired = in.current;
  std::vector<MetricOutcome> outcomes;
  outcomes.reserve(cfg_.metrics.size());
  int invalid = 0;
  int best = 0;
  const MetricOutcome* winner = nullptr;
  for (const auto& m : cfg_.metrics) {
    outcomes.push_back(Evaluate(m, in, cfg_.tolerance));
  }
  // Per metric: 8 facts with a result, 2 without; then current, invalid_metrics, desired.
  rec.facts.reserve(8 * outcomes.size() + 3);
  std::string reasons;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const MetricOutcome& o = outcomes[i];
    AddFacts(o, text_[i], rec.facts);
    if (!reasons.empty()) reasons += "; ";
    Describe(o, text_[i].reason_head, reasons);
    if (!o.result) {
      ++invalid;
    } else if (!winner || o.result->replicas > best) {
      // Saturated as every policy's output is (a need of INT_MAX replicas is "the most").
      best = std::clamp(o.result->replicas, 0, kMaxReplicaCount);
      winner = &o;
    }
  }
  rec.facts.emplace_back("current", in.current);
  rec.facts.emplace_back("invalid_metrics", invalid);
  if (!winner) {
    rec.rule = "hpa_missing_data";
    rec.reason = StrCat("no metric could be computed, holding ", in.current, ": ", reasons);
    return rec;
  }
  if (invalid > 0 && best < in.current) {
    // computeReplicasForMetrics: an invalid metric blocks a scale-down.
    rec.rule = "hpa_no_scale_down_on_missing_data";
    rec.reason = StrCat("would scale down to ", best, " but ", invalid,
                        " metric(s) have no data, holding ", in.current, ": ", reasons);
    return rec;
  }
  rec.valid = true;
  rec.desired = best;
  rec.facts.emplace_back("desired", best);
  rec.rule = StrCat("hpa_", winner->result->rule);
  rec.reason = StrCat("desired ", best, " = max over ", outcomes.size(), " metric(s) (",
                      winner->metric->signal, "): ", reasons);
  return rec;
}

}  // namespace aiscale::decide
