// TrainingPolicy::ShrinkCost: what a shared pool's shrink costs a training job, from the same
// learned throughput curve the policy sizes the job with (throughput_model.h).
#include <algorithm>

#include "decide/policies/training.h"
#include "decide/training/throughput_model.h"

namespace aiscale::decide {

std::optional<double> TrainingPolicy::ShrinkCost(const PersistentState& state, int from, int to,
                                                 double horizon_s, int gpus_per_replica) const {
  if (from <= 0 || to >= from) return 0.0;
  ThroughputPrior prior;
  prior.efficiency = c_.expected_efficiency;
  prior.reference_nodes = std::max(1, c_.reference_replicas > 0 ? c_.reference_replicas : from);
  prior.compute_bound_util = c_.compute_bound_util;
  static const std::vector<double> kNone;
  const std::vector<double>* buckets = state.FindVec("tr.compute.buckets");
  const ThroughputModel model = ThroughputModel::LoadFrom(buckets ? *buckets : kNone, prior);
  // The share of its throughput the job keeps at the smaller size: the learned curve where it
  // has data, else what linear scaling would keep (the prior alone predicts nothing).
  double kept = static_cast<double>(std::max(to, 0)) / from;
  if (to > 0) {
    const auto at_from = model.Predict(from), at_to = model.Predict(to);
    if (at_from && at_to && *at_from > 0) kept = std::clamp(*at_to / *at_from, 0.0, 1.0);
  } else {
    kept = 0;
  }
  // Seconds of full-speed progress lost: the restart (nothing trains while it lasts), then the
  // share the smaller size loses for the rest of the horizon. Times the GPUs it ran on.
  const double restart = std::min(c_.restart_cost_s, std::max(horizon_s, 0.0));
  const double lost_s = restart + std::max(0.0, horizon_s - restart) * (1 - kept);
  return lost_s * from * std::max(1, gpus_per_replica);
}

}  // namespace aiscale::decide
