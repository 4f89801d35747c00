#include "decide/policies/hpa_replica_calc.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>

#include "core/numeric.h"

namespace aiscale::decide::hpa {
namespace {

// Stands in for "started long ago": finite, so that the readiness-delay comparison
// (transition + delay > start) still holds for a pod that was never ready.
constexpr double kLongAgoS = 1e12;

bool IsWithin(double ratio, const CalcOptions& o) {
  return (1.0 - o.tolerance_down) <= ratio && ratio <= (1.0 + o.tolerance_up);
}

int CeilToInt(double v) {
  const double c = std::ceil(v);
  if (!(c < static_cast<double>(INT_MAX))) return INT_MAX;  // also NaN -> INT_MAX
  if (c < static_cast<double>(INT_MIN)) return INT_MIN;
  return static_cast<int>(c);
}

struct Groups {
  int ready = 0;
  std::vector<size_t> unready, missing, ignored;
};

// groupPods: which pods count, which are unready, which lack a metric.
Groups GroupPods(const std::vector<Pod>& pods, bool cpu, const CalcOptions& o) {
  Groups g;
  for (size_t i = 0; i < pods.size(); ++i) {
    const Pod& p = pods[i];
    if (p.deleting || p.phase == PodPhase::kFailed) {
      g.ignored.push_back(i);
      continue;
    }
    if (p.phase == PodPhase::kPending) {
      g.unready.push_back(i);
      continue;
    }
    if (!p.value) {
      g.missing.push_back(i);
      continue;
    }
    if (cpu) {
      bool unready = false;
      if (!p.has_ready_condition) {
        unready = true;
      } else {
        const double started = p.started_s_ago.value_or(kLongAgoS);
        const double transition = p.ready_transition_s_ago.value_or(started);
        if (started < o.cpu_initialization_period_s) {
          // Still initializing: unready, or the metric window does not yet postdate the last
          // readiness transition (the metric's timestamp is now).
          unready = !p.ready || transition < o.metric_window_s;
        } else {
          // Unready and never been ready since start.
          unready = !p.ready && transition + o.delay_of_initial_readiness_status_s > started;
        }
      }
      if (unready) {
        g.unready.push_back(i);
        continue;
      }
    }
    ++g.ready;
  }
  return g;
}

// replica_calculator.go's PodMetricsInfo: a value per counted pod, by index into `pods`. A
// flat vector, not a map: the pods are already numbered, and it is built on every evaluation.
class PodMetrics {
 public:
  explicit PodMetrics(size_t pods) : values_(pods) {}
  void Set(size_t i, int64_t v) {
    if (!values_[i]) ++count_;
    values_[i] = v;
  }
  void Erase(size_t i) {
    if (values_[i]) --count_;
    values_[i].reset();
  }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Calls f(index, value) for each counted pod, in index order.
  template <typename Fn>
  void ForEach(Fn&& f) const {
    for (size_t i = 0; i < values_.size(); ++i) {
      if (values_[i]) f(i, *values_[i]);
    }
  }

 private:
  std::vector<std::optional<int64_t>> values_;
  size_t count_ = 0;
};

struct ResourceRatio {
  double ratio;
  int32_t utilization;
  int64_t raw_average;
};

Result<ResourceRatio> ResourceUtilizationRatio(const PodMetrics& metrics,
                                               const std::vector<Pod>& pods, int64_t target) {
  int64_t metrics_total = 0;
  int64_t requests_total = 0;
  // Saturating: pods may report anything (5e15 each is 5e18 milli-units), and a wrapped sum
  // read as a negative usage and scaled 4 -> 1. Kubernetes' int64 sums would wrap too; here a
  // huge usage stays huge.
  metrics.ForEach([&](size_t i, int64_t v) {
    metrics_total = SaturatingAdd(metrics_total, v);
    requests_total = SaturatingAdd(requests_total, pods[i].request);
  });
  if (requests_total == 0) return Status::Error("no metrics returned matched known pods");
  const int64_t pct = SaturatingMul(metrics_total, 100) / requests_total;
  const int32_t util = static_cast<int32_t>(std::clamp<int64_t>(pct, INT32_MIN, INT32_MAX));
  return ResourceRatio{static_cast<double>(util) / static_cast<double>(target), util,
                       metrics_total / static_cast<int64_t>(metrics.size())};
}

std::pair<double, int64_t> MetricUsageRatio(const PodMetrics& metrics, int64_t target) {
  int64_t total = 0;
  metrics.ForEach([&](size_t, int64_t v) { total = SaturatingAdd(total, v); });
  const int64_t usage = total / static_cast<int64_t>(metrics.size());
  return {static_cast<double>(usage) / static_cast<double>(target), usage};
}

// GetResourceReplicas (Utilization) and calcPlainMetricReplicas (AverageValue) share one shape;
// they differ in how the ratio is computed and what a missing pod is assumed to use.
Result<CalcResult> PerPodReplicas(const MetricSpec& spec, const std::vector<Pod>& pods, int current,
                                  const CalcOptions& o) {
  if (pods.empty()) {
    return Status::Error("no pods returned by selector while calculating replica count");
  }
  const bool utilization = spec.target == TargetType::kUtilization;
  const bool cpu = spec.source == SourceType::kResource && spec.resource_is_cpu;
  const Groups g = GroupPods(pods, cpu, o);
  PodMetrics metrics(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].value) metrics.Set(i, *pods[i].value);
  }
  for (size_t i : g.ignored) metrics.Erase(i);
  for (size_t i : g.unready) metrics.Erase(i);
  if (metrics.empty()) {
    return Status::Error("did not receive metrics for targeted pods (pods might be unready)");
  }
  if (utilization) {
    for (const Pod& p : pods) {
      if (!p.has_request) return Status::Error("missing request for pod " + std::string(p.name));
    }
  }
  auto ratio_of = [&](const PodMetrics& m) -> Result<ResourceRatio> {
    if (utilization) return ResourceUtilizationRatio(m, pods, spec.target_value);
    auto [r, usage] = MetricUsageRatio(m, spec.target_value);
    return ResourceRatio{r, 0, usage};
  };

  CalcResult out;
  out.ready_pods = g.ready;
  out.unready_pods = static_cast<int>(g.unready.size());
  out.missing_pods = static_cast<int>(g.missing.size());
  out.ignored_pods = static_cast<int>(g.ignored.size());
  ASSIGN_OR_RETURN(const ResourceRatio first, ratio_of(metrics));
  out.usage_ratio = out.new_usage_ratio = first.ratio;
  out.usage = first.raw_average;
  if (utilization) out.utilization = first.utilization;

  const double ratio = first.ratio;
  const bool scale_up_with_unready = !g.unready.empty() && ratio > 1.0;
  if (!scale_up_with_unready && g.missing.empty()) {
    if (IsWithin(ratio, o)) {
      out.replicas = current;
      out.rule = "within_tolerance";
    } else {
      out.replicas = CeilToInt(ratio * static_cast<double>(g.ready));
      out.rule = "ratio";
    }
    return out;
  }
  if (!g.missing.empty()) {
    if (ratio < 1.0) {
      // Scale-down: a pod without a metric is assumed to use its share in full.
      for (size_t i : g.missing) {
        metrics.Set(
            i, utilization
                   ? SaturatingMul(pods[i].request, std::max<int64_t>(100, spec.target_value)) / 100
                   : spec.target_value);
      }
    } else if (ratio > 1.0) {
      for (size_t i : g.missing) metrics.Set(i, 0);  // scale-up: assumed idle
    }
  }
  if (scale_up_with_unready) {
    for (size_t i : g.unready) metrics.Set(i, 0);
  }
  ASSIGN_OR_RETURN(const ResourceRatio second, ratio_of(metrics));
  const double new_ratio = second.ratio;
  out.new_usage_ratio = new_ratio;
  if (IsWithin(new_ratio, o) || (ratio < 1.0 && new_ratio > 1.0) ||
      (ratio > 1.0 && new_ratio < 1.0)) {
    out.replicas = current;
    out.rule = IsWithin(new_ratio, o) ? "within_tolerance" : "direction_flip";
    return out;
  }
  const int next = CeilToInt(new_ratio * static_cast<double>(metrics.size()));
  if ((new_ratio < 1.0 && next > current) || (new_ratio > 1.0 && next < current)) {
    out.replicas = current;
    out.rule = "direction_flip";
    return out;
  }
  out.replicas = next;
  out.rule = "rebalanced";
  return out;
}

int ReadyPodCount(const std::vector<Pod>& pods) {
  int n = 0;
  for (const Pod& p : pods) n += (p.phase == PodPhase::kRunning && p.ready) ? 1 : 0;
  return n;
}

// GetObjectMetricReplicas / GetExternalMetricReplicas (Value targets).
Result<CalcResult> ValueReplicas(const MetricSpec& spec, const std::vector<Pod>& pods, int current,
                                 const CalcOptions& o, int64_t total) {
  CalcResult out;
  out.usage = total;
  out.usage_ratio = out.new_usage_ratio =
      static_cast<double>(total) / static_cast<double>(spec.target_value);
  if (current == 0) {
    out.replicas = CeilToInt(out.usage_ratio);  // scale from (or to) zero: no tolerance
    out.rule = "scale_from_zero";
    return out;
  }
  if (IsWithin(out.usage_ratio, o)) {
    out.replicas = current;
    out.rule = "within_tolerance";
    return out;
  }
  if (pods.empty()) {
    return Status::Error("unable to calculate ready pods: no pods returned by selector");
  }
  out.ready_pods = ReadyPodCount(pods);
  out.replicas = CeilToInt(out.usage_ratio * static_cast<double>(out.ready_pods));
  out.rule = "ratio";
  return out;
}

// GetObjectPerPodMetricReplicas / GetExternalPerPodMetricReplicas (AverageValue targets).
CalcResult AverageValueReplicas(const MetricSpec& spec, int current, const CalcOptions& o,
                                int64_t total) {
  CalcResult out;
  const double target = static_cast<double>(spec.target_value);
  out.replicas = current;
  out.usage_ratio = out.new_usage_ratio =
      static_cast<double>(total) / (target * static_cast<double>(current));
  out.rule = "within_tolerance";
  if (!IsWithin(out.usage_ratio, o)) {
    out.replicas = CeilToInt(static_cast<double>(total) / target);
    out.rule = "ratio";
  }
  out.usage = current > 0 ? static_cast<int64_t>(std::ceil(static_cast<double>(total) /
                                                           static_cast<double>(current)))
                          : total;
  return out;
}

}  // namespace

std::string_view SourceTypeName(SourceType t) {
  switch (t) {
    case SourceType::kResource:
      return "Resource";
    case SourceType::kPods:
      return "Pods";
    case SourceType::kObject:
      return "Object";
    case SourceType::kExternal:
      return "External";
  }
  return "?";
}

std::string_view TargetTypeName(TargetType t) {
  switch (t) {
    case TargetType::kUtilization:
      return "Utilization";
    case TargetType::kAverageValue:
      return "AverageValue";
    case TargetType::kValue:
      return "Value";
  }
  return "?";
}

std::optional<SourceType> ParseSourceType(std::string_view s) {
  for (SourceType t :
       {SourceType::kResource, SourceType::kPods, SourceType::kObject, SourceType::kExternal}) {
    if (SourceTypeName(t) == s) return t;
  }
  return std::nullopt;
}

std::optional<TargetType> ParseTargetType(std::string_view s) {
  for (TargetType t : {TargetType::kUtilization, TargetType::kAverageValue, TargetType::kValue}) {
    if (TargetTypeName(t) == s) return t;
  }
  return std::nullopt;
}

std::optional<PodPhase> ParsePodPhase(std::string_view s) {
  if (s == "Pending") return PodPhase::kPending;
  if (s == "Running") return PodPhase::kRunning;
  if (s == "Succeeded") return PodPhase::kSucceeded;
  if (s == "Failed") return PodPhase::kFailed;
  return std::nullopt;
}

bool TargetAllowed(SourceType s, TargetType t) {
  switch (s) {
    case SourceType::kResource:
      return t != TargetType::kValue;
    case SourceType::kPods:
      return t == TargetType::kAverageValue;
    case SourceType::kObject:
    case SourceType::kExternal:
      return t != TargetType::kUtilization;
  }
  return false;
}

Result<CalcResult> CalcReplicas(const MetricSpec& spec, const std::vector<Pod>& pods,
                                int current_replicas, const CalcOptions& opts,
                                std::optional<int64_t> total) {
  if (!TargetAllowed(spec.source, spec.target)) {
    return Status::Error("target type " + std::string(TargetTypeName(spec.target)) +
                         " is not valid for a " + std::string(SourceTypeName(spec.source)) +
                         " metric");
  }
  if (spec.target_value <= 0) return Status::Error("target value must be > 0");
  switch (spec.source) {
    case SourceType::kResource:
    case SourceType::kPods:
      return PerPodReplicas(spec, pods, current_replicas, opts);
    case SourceType::kObject:
    case SourceType::kExternal:
      if (!total) return Status::Error("no value for the object/external metric");
      if (spec.target == TargetType::kValue) {
        return ValueReplicas(spec, pods, current_replicas, opts, *total);
      }
      return AverageValueReplicas(spec, current_replicas, opts, *total);
  }
  return Status::Error("unknown metric source type");
}

}  // namespace aiscale::decide::hpa
