// kpa: the Knative Pod Autoscaler as an aiscale Policy (knative/serving KPA defaults).
//
// Why: it is the reactive baseline users of serverless inference know. The decision itself is
// kpa_algorithm.h; this file adds config, the bridge from the Controller's signals to
// Knative's per-second buckets, panic and scale-to-zero memory in PersistentState, and the
// Decision's rule, reason and facts.
//
// Signals: Knative scales on the TOTAL concurrency (or request rate) of the revision, while
// aiscale's `concurrency` signal is per replica (docs/architecture.md, "Signals"), so the policy
// uses the snapshot's sum over instances (WorkloadSignals::SumHistory), for whatever signal is
// configured. Each per-tick total is held in every 1 s bucket until the next tick, so a 15 s
// control period sees the same averages as Knative's one scrape per second would on a steady
// load.
//
// Missing, stale or invalid data (or a stable window with nothing in it): an invalid
// recommendation (hold), never a scale-down. At zero ready replicas the configured signal
// usually has no instances; `activation_signal` (e.g. queue_len, the requests waiting at the
// load balancer, which is what Knative's activator reports) then supplies the demand that
// activates the workload with at least `activation_scale` replicas. It is an optional signal:
// without it the policy holds at zero, and it never vetoes a scale-down.
//
// Example (a workload's `policy:` map):
//   name: kpa
//   signal: concurrency        # or request_rate, or any serving signal
//   target: 100                # per replica; times target_utilization (0.7) is the aim
//   stable_window: 60s
//   scale_to_zero_grace_period: 30s
//
// Thread safety: const and stateless; all memory is in the PersistentState passed in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "core/time_series.h"
#include "decide/policies/kpa_algorithm.h"
#include "decide/policy_registry.h"

namespace aiscale::decide {

struct KpaConfig {
  std::string signal = "concurrency";
  double target = 100;              // per replica (Knative container-concurrency-target-default)
  double target_utilization = 0.7;  // container-concurrency-target-percentage / 100
  double stable_window_s = 60;      // [6 s, 1 h], whole seconds (1 s buckets)
  double panic_window_percentage = 10;       // [1, 100]
  double panic_threshold_percentage = 200;   // [110, 1000]
  double max_scale_up_rate = 1000;           // > 1
  double max_scale_down_rate = 2;            // > 1
  int activation_scale = 1;                  // >= 1
  double scale_to_zero_grace_period_s = 30;  // >= 6 s
  bool allow_zero_initial_scale = false;
  std::string activation_signal;  // empty: none

  // Reads the fields of a `policy:` map; errors are recorded at the field.
  static KpaConfig Parse(const config::ConfigNode& node);
  KpaParams Params() const;
};

class KpaPolicy final : public Policy {
 public:
  explicit KpaPolicy(KpaConfig c);
  std::string_view Name() const override { return "kpa"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override;
  // The demand signal only: a missing `activation_signal` must not veto a scale-down.
  std::vector<std::string> Signals() const override { return {c_.signal}; }
  std::vector<std::string> OptionalSignals() const override;
  const KpaConfig& config() const { return c_; }

 private:
  Recommendation Activate(const PolicyInput& in, PersistentState& state) const;

  KpaConfig c_;
  KpaParams params_;
  std::string target_text_;  // params_.target as the reasons write it, formatted once
};

// The registry's factory for `name: kpa`.
std::unique_ptr<Policy> MakeKpaPolicy(const config::ConfigNode& node, const WorkloadContext& ctx);

// Per-second buckets from a per-tick history: samples in one second are averaged, and each
// value is held until the next sample (or `now`) unless a whole window separates them.
std::vector<KpaBucket> KpaBucketsFromSamples(const std::vector<Sample>& samples, TimePoint now,
                                             int window_buckets);

}  // namespace aiscale::decide
