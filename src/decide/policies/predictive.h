// predictive: sizes an inference service for the demand forecast at now + lead (the time a
// replica asked for now becomes useful), plus a margin learned from the forecast's own recent
// misses, never below what a reactive rule needs now, and scales down slowly.
//
//   desired = max(ceil((forecast(now + lead) + margin) / (capacity_per_replica *
//                      target_utilization)), reactive_need_now)
//   then: the max of that over the last scale_down_window, and at most scale_down_rate of
//   the current size per minute downwards.
//
// Promises: pure (time comes from PolicyInput.now); all learned state (the Holt-Winters
// model, the error window, the open bucket, the scale-down window) lives in the
// PersistentState; a Recommend call is O(1) amortized (O(window) once per bucket for the
// sorted error window, a memmove). Missing or stale demand never scales down: with a valid
// reactive signal it may still scale up, otherwise the recommendation is invalid. With too
// little forecast history it is the reactive rule alone and says so. Every recommendation
// carries the facts forecast, margin, lead_s, reactive_need and names the rule that won:
// forecast | reactive | hold_down | fallback_reactive | missing_data.
// docs/predictive.md explains the method and its knobs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "decide/forecast/error_quantile.h"
#include "decide/forecast/holt_winters.h"
#include "decide/policy_registry.h"

namespace aiscale::decide {

struct ReactiveRule {
  enum class Aggregate {
    kSum,   // need = ceil(sum over instances / target): total in flight / per-replica target
    kMean,  // need = ceil(mean * ready / target): HPA-style ratio on a per-replica signal
  };
  std::string signal;  // default: the policy's demand signal
  double target = 0;   // per replica; default capacity_per_replica * target_utilization
  Aggregate aggregate = Aggregate::kSum;
  double window_s = 0;  // 0: the latest value; else the mean of per-tick values over it
};

struct PredictiveConfig {
  std::string signal = "request_rate";  // the service's total demand (sum over instances)
  double capacity_per_replica = 0;      // demand one replica serves within the SLO, > 0
  double target_utilization = 0.8;
  ReactiveRule reactive;
  double bucket_s = 60;              // forecaster step; ticks are averaged into buckets
  double season_s = 86400;           // 0: no season
  double long_season_s = 0;          // 0: none; e.g. 7d
  double long_season_slot_s = 3600;  // resolution of the long season
  forecast::HoltWintersParams smoothing;
  double quantile = 0.95;
  forecast::ErrorMode margin_mode = forecast::ErrorMode::kRelative;
  double margin_window_s = 86400;  // errors kept, as time (window / bucket errors)
  int min_errors = 60;             // scored forecasts before the forecast is trusted
  double lead_s = 0;               // default cold_start_s + control_period_s
  double control_period_s = 15;
  double scale_down_window_s = 600;
  double scale_down_rate = 0;   // max fraction of current removed per minute; 0: no limit
  double idle_fraction = 0.01;  // forecast need under this many replicas counts as none
  bool scale_to_zero = false;   // WorkloadContext.min_replicas == 0

  int season_buckets() const;
  int horizon_buckets() const;  // how far ahead, in buckets, forecasts are scored
};

class PredictivePolicy final : public Policy {
 public:
  explicit PredictivePolicy(PredictiveConfig cfg);
  // Reads the `policy:` node; every problem is recorded in the node's errors with its field
  // path (the returned config is then not to be used).
  static PredictiveConfig Parse(const config::ConfigNode& node, const WorkloadContext& ctx);
  // The registry's factory (PolicyFactory): Parse, then construct.
  static std::unique_ptr<Policy> Make(const config::ConfigNode& node, const WorkloadContext& ctx);

  std::string_view Name() const override { return "predictive"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override;
  std::vector<std::string> Signals() const override;
  const PredictiveConfig& config() const { return cfg_; }

 private:
  struct Reactive {
    bool ok = false;
    int need = 0;
    double value = 0;
  };
  Reactive ReactiveNeed(const PolicyInput& in) const;
  int NeedFor(double demand) const;
  // Folds this tick's demand into the open bucket, closing finished ones into the models.
  void Aggregate(const PolicyInput& in, PersistentState& state, forecast::HoltWinters& hw,
                 forecast::ErrorQuantile& eq) const;
  // Max over the scale-down window including `raw`, then the per-minute rate limit.
  int SlowDown(int raw, const PolicyInput& in, PersistentState& state) const;

  PredictiveConfig cfg_;
  forecast::ErrorQuantileParams eq_params_;
  // Config numbers as the reasons write them, formatted once: lead_s and quantile * 100.
  std::string lead_text_;
  std::string quantile_text_;
};

}  // namespace aiscale::decide
