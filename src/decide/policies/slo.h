// slo: the default inference policy. Its target is the SLO itself (TTFT and latency p99 within
// bounds for `attainment` of requests), not a utilization number; everything else it needs is
// learned online from what the replicas report (docs/slo-policy.md):
//
//   capacity c   requests/s one replica serves while the SLO holds (serving/capacity_learner.h)
//   lead L       the measured cold start + one control period (serving/lead_learner.h)
//   forecast F   the most demand over the next L: recent peaks, trend, and a daily season once
//                it has seen one (serving/demand_forecast.h)
//   headroom h   how far demand has risen above F within L before, at the SLO's quantile
//                (serving/headroom.h)
//
//   up    = ceil((F + h) / c)
//   hold  = ceil((peak over the last L + drain, + its headroom) / c): a replica is removed when
//           demand has stayed below it for longer than re-adding it would take (cold start)
//           plus draining it: keeping it any shorter costs more than it saves
//   breach: the SLO is broken now with requests waiting: enough to drain the queue in one period
//   desired = max(up, hold, breach), at least 1 (0 only with min_replicas 0)
//   warm tier (optional): awake = the same over the wake lead (measured wake + one period) with
//           its own headroom and a hold of wake + drain; asleep = desired - awake (the burst
//           insurance, waking in seconds instead of a cold start)
//
// Promises: pure; all learned state in the PersistentState. Missing demand holds (never a
// scale-down); invalid input (a negative queue, TTFT p99 above latency p99, a negative rate)
// holds the capacity at its last good estimate, says why, and never scales down that tick.
// Before a capacity is learned it holds the size it found, and grows it by a quarter on an SLO
// breach. Every recommendation carries the facts behind it; rules: forecast | hold_down |
// slo_breach | learning | missing_data | bad_input.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "decide/policy_registry.h"
#include "decide/serving/capacity_learner.h"
#include "decide/serving/demand_forecast.h"
#include "decide/serving/headroom.h"

namespace aiscale::decide {

struct SloConfig {
  std::string signal = "request_rate";  // the service's demand (sum over instances)
  double ttft_s = 2;
  double latency_s = 20;
  double attainment = 0.99;
  serving::CapacityParams capacity;
  serving::DemandForecastParams forecast;
  serving::HeadroomParams headroom;
  double cold_start_s = 0;  // the prior for the measured lead (WorkloadContext)
  double control_period_s = 15;
  double breach_growth = 0.25;  // before a capacity is learned: growth on an SLO breach
  bool scale_to_zero = false;   // WorkloadContext.min_replicas == 0
  int max_replicas = 100;       // WorkloadContext: awake + asleep stay within it
  // The warm tier (docs/slo-policy.md): replicas needed within the wake lead stay awake, those
  // needed only within the cold-start lead are kept asleep. Off unless `warm:` is given.
  struct Warm {
    bool on = false;
    double wake_s = 5;     // how long an asleep replica takes to serve again (a prior: measured)
    int max_asleep = 100;  // the most kept asleep
    // Sleepers cost a fraction of an awake replica, so they insure past the awake sizing: the
    // tier holds the forecast over the cold-start lead plus `reserve` times its headroom.
    double reserve = 2;
  } warm;
};

class SloPolicy final : public Policy {
 public:
  explicit SloPolicy(SloConfig cfg);
  // Reads the `policy:` node; problems go to the node's errors with their field paths.
  static SloConfig Parse(const config::ConfigNode& node, const WorkloadContext& ctx);
  static std::unique_ptr<Policy> Make(const config::ConfigNode& node, const WorkloadContext& ctx);

  std::string_view Name() const override { return "slo"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override;
  std::vector<std::string> Signals() const override { return {cfg_.signal}; }
  std::vector<std::string> OptionalSignals() const override;
  const SloConfig& config() const { return cfg_; }

 private:
  struct Inputs;  // this tick's signals, checked
  Inputs Read(const PolicyInput& in) const;
  int NeedFor(double demand, double capacity) const;
  // The warm tier's split of `total` (the cold-lead need): the awake need over the wake lead
  // and the rest asleep; sets r.asleep and returns the awake count.
  // `insured`: the demand the tier (awake + asleep) covers over the cold-start lead.
  int SplitWarm(const PolicyInput& in, PersistentState& state, double c, double floor, int total,
                int drain, double insured, Recommendation& r) const;

  SloConfig cfg_;
};

}  // namespace aiscale::decide
