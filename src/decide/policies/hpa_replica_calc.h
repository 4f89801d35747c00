// The Kubernetes HorizontalPodAutoscaler replica calculation, as a pure function.
//
// Why: `hpa` must match pkg/controller/podautoscaler/replica_calculator.go exactly, including
// its integer arithmetic (milli-units, truncated utilization percent), pod grouping (deleted
// and failed pods ignored, pending and not-yet-ready CPU pods unready, pods without a metric
// missing), the rebalancing of missing/unready pods and the "keep current when the new ratio
// flips direction or is within tolerance" rules. The conformance vectors run this directly.
//
//   hpa::MetricSpec m;  // Resource cpu, Utilization 50
//   auto r = hpa::CalcReplicas(m, pods, /*current=*/3, hpa::CalcOptions{});
//   if (r.ok()) use(r->replicas);
//
// Thread safety: stateless; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace aiscale::decide::hpa {

enum class SourceType { kResource, kPods, kObject, kExternal };
enum class TargetType { kUtilization, kAverageValue, kValue };
enum class PodPhase { kPending, kRunning, kSucceeded, kFailed };

std::string_view SourceTypeName(SourceType t);
std::string_view TargetTypeName(TargetType t);
// Parse the Kubernetes spellings ("Resource", "Utilization", "Running", ...).
std::optional<SourceType> ParseSourceType(std::string_view s);
std::optional<TargetType> ParseTargetType(std::string_view s);
std::optional<PodPhase> ParsePodPhase(std::string_view s);

// Which targets a source type accepts, as the autoscaling/v2 validation does.
bool TargetAllowed(SourceType s, TargetType t);

struct MetricSpec {
  SourceType source = SourceType::kPods;
  TargetType target = TargetType::kAverageValue;
  // Utilization: percent of request (integer, as averageUtilization is). Otherwise milli-units.
  int64_t target_value = 0;
  // Resource metrics: the CPU readiness rules apply only to cpu.
  bool resource_is_cpu = true;
};

// One pod as the calculation sees it. Times are seconds before `now`; metric timestamps are
// taken to be `now` (the conformance schema says so and the policy has no better).
struct Pod {
  std::string_view name;  // for messages; the caller keeps the text alive through the call
  PodPhase phase = PodPhase::kRunning;
  bool ready = true;  // the Ready condition's status
  bool has_ready_condition = true;
  std::optional<int64_t> value;  // milli-units; nullopt = no metric for this pod
  int64_t request = 0;           // milli-units, Resource metrics
  bool has_request = true;
  // nullopt: started (or transitioned) long ago, outside every initialization window.
  std::optional<double> started_s_ago;
  std::optional<double> ready_transition_s_ago;  // nullopt: same as started_s_ago
  bool deleting = false;
};

// Controller flags; defaults are kube-controller-manager's.
struct CalcOptions {
  double tolerance_down = 0.1;
  double tolerance_up = 0.1;
  double cpu_initialization_period_s = 300;
  double delay_of_initial_readiness_status_s = 30;
  double metric_window_s = 30;  // the metrics-server sample window
};

struct CalcResult {
  int replicas = 0;
  double usage_ratio = 0;      // first pass, over ready pods with metrics
  double new_usage_ratio = 0;  // after rebalancing missing/unready pods (= usage_ratio if none)
  // Utilization targets: current utilization, percent of request (truncated like Kubernetes).
  std::optional<int32_t> utilization;
  int64_t usage = 0;  // average milli-value per pod, or the object/external total for Value
  int ready_pods = 0;
  int unready_pods = 0;
  int missing_pods = 0;
  int ignored_pods = 0;
  // Which branch decided: "within_tolerance", "ratio", "rebalanced", "direction_flip",
  // "scale_from_zero".
  std::string rule;
};

// Resource and Pods metrics: per-pod values in `pods`. Object and External metrics: `total`
// is the object's value (External: the sum of its series) and `pods` is only used to count
// ready pods. Errors are what Kubernetes treats as "unable to compute": no pods, no metrics
// for any ready pod, a missing request, a non-positive target.
Result<CalcResult> CalcReplicas(const MetricSpec& spec, const std::vector<Pod>& pods,
                                int current_replicas, const CalcOptions& opts,
                                std::optional<int64_t> total = std::nullopt);

}  // namespace aiscale::decide::hpa
