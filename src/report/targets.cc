#include "report/targets.h"

#include "core/utf8.h"

namespace aiscale::report {
namespace {

// A ratio to another run or to the oracle: positive, and at most 100x (a bar past that
// judges nothing).
const config::Bounds kRatio = config::Bounds{0, 100, true};
const config::Bounds kFraction = config::Between(0, 1);

std::optional<double> Optional(const config::ConfigNode& n, const std::string& key,
                               config::Bounds b) {
  if (!n.Has(key)) return std::nullopt;
  return n.Number(key, 0, b);
}

}  // namespace

bool Targets::empty() const {
  return !gpu_hours_over_oracle && !completion_vs_static && !rescales_per_hour &&
         !failure_replaced_s && !seed_gpu_hours_vs_static && !seed_mean_gpu_util &&
         !seed_speed_vs_static && !slo_attainment && !slo_from_service && no_worse_than.empty() &&
         !fewer_gpu_hours_than_static_peak;
}

Targets ParseTargets(const config::ConfigNode& node) {
  Targets t;
  if (!node.IsDefined()) return t;
  if (!node.IsMap()) {
    node.Error("targets must be a map of target name to bar, e.g. {gpu_hours_over_oracle: 1.1}");
    return t;
  }
  node.CheckKnown({"gpu_hours_over_oracle", "completion_vs_static", "rescales_per_hour",
                   "failure_replaced_s", "seed_gpu_hours_vs_static", "seed_mean_gpu_util",
                   "seed_speed_vs_static", "slo_attainment", "no_worse_than",
                   "fewer_gpu_hours_than_static_peak"});
  t.gpu_hours_over_oracle = Optional(node, "gpu_hours_over_oracle", kRatio);
  t.completion_vs_static = Optional(node, "completion_vs_static", kRatio);
  t.rescales_per_hour = Optional(node, "rescales_per_hour", config::Between(0, 3600));
  if (node.Has("failure_replaced_s")) {
    t.failure_replaced_s = node.DurationSeconds("failure_replaced_s", 0, config::AtLeast(0));
  }
  t.seed_gpu_hours_vs_static = Optional(node, "seed_gpu_hours_vs_static", kRatio);
  t.seed_mean_gpu_util = Optional(node, "seed_mean_gpu_util", kFraction);
  t.seed_speed_vs_static = Optional(node, "seed_speed_vs_static", kRatio);
  const config::ConfigNode slo = node.Child("slo_attainment");
  if (slo.IsDefined() && slo.raw().IsScalar() && slo.raw().Scalar() == "slo") {
    t.slo_from_service = true;
  } else {
    t.slo_attainment = Optional(node, "slo_attainment", kFraction);
  }
  for (const config::ConfigNode& p : node.Child("no_worse_than").Items()) {
    if (!p.raw().IsScalar() || p.raw().Scalar().empty() || !IsValidUtf8(p.raw().Scalar())) {
      p.Error("must be a policy name, e.g. hpa");
      continue;
    }
    t.no_worse_than.push_back(p.raw().Scalar());
  }
  t.fewer_gpu_hours_than_static_peak =
      Optional(node, "fewer_gpu_hours_than_static_peak", config::Between(0, 1));
  return t;
}

}  // namespace aiscale::report
