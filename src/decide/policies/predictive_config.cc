// PredictivePolicy::Parse: the `policy:` fields of `predictive`, their defaults and bounds, and
// the cross-field rules (season a multiple of the bucket, bounded state, reactive target).
#include <cmath>
#include <string>

#include "decide/policies/predictive.h"

namespace aiscale::decide {
namespace {

using config::Above;
using config::AtLeast;
using config::Between;
using config::ConfigNode;

// A duration, or `none` / 0 for "no such season".
double SeasonSeconds(const ConfigNode& node, const std::string& key, double fallback) {
  if (node.Has(key) && node.raw()[key].IsScalar() && node.raw()[key].Scalar() == "none") return 0;
  return node.DurationSeconds(key, fallback, AtLeast(0));
}

bool IsMultiple(double a, double b) {
  const double r = a / b;
  return std::abs(r - std::round(r)) < 1e-6;
}

// Level, trend and damping are given as time constants so that they mean the same at any
// bucket size; each becomes a per-bucket factor 1 - exp(-bucket / tau) (damping exp(-b/tau)).
// Defaults (10 m, 3 h, 3 h) were the best 10-minute-ahead settings on the alibaba_genai trace
// at 60 s buckets (docs/predictive.md); a trend or damping of 0 means none / undamped.
constexpr double kLevelTau = 600, kTrendTau = 3 * 3600, kDampingTau = 3 * 3600;

void SetTimeConstants(double bucket_s, double level, double trend, double damping,
                      forecast::HoltWintersParams& p) {
  p.alpha = 1 - std::exp(-bucket_s / level);
  p.beta = trend > 0 ? 1 - std::exp(-bucket_s / trend) : 0;
  p.phi = damping > 0 ? std::exp(-bucket_s / damping) : 1;
}

void ParseSmoothing(const ConfigNode& n, double bucket_s, forecast::HoltWintersParams& p) {
  n.CheckKnown({"level", "trend", "damping", "season", "long_season", "season_kernel"});
  SetTimeConstants(bucket_s, n.DurationSeconds("level", kLevelTau, Between(1, 30 * 86400)),
                   n.DurationSeconds("trend", kTrendTau, AtLeast(0)),
                   n.DurationSeconds("damping", kDampingTau, AtLeast(0)), p);
  p.gamma = n.Number("season", p.gamma, Between(0, 1));
  p.omega = n.Number("long_season", p.omega, Between(0, 1));
  p.season_kernel = n.Int("season_kernel", p.season_kernel, Between(0, 60));
}

void ParseReactive(const ConfigNode& n, const PredictiveConfig& c, ReactiveRule& r) {
  n.CheckKnown({"signal", "target", "aggregate", "window"});
  r.signal = n.String("signal", c.signal);
  if (r.signal.empty()) n.ErrorAt("signal", "must not be empty");
  if (r.signal == c.signal) {
    r.target = n.Number("target", c.capacity_per_replica * c.target_utilization, Above(0));
  } else if (!n.Has("target")) {
    n.Error("missing required field 'target' (needed when reactive.signal differs from signal)");
  } else {
    r.target = n.Number("target", 1, Above(0));
  }
  r.aggregate = n.Enum("aggregate", "sum", {"sum", "mean"}) == "mean"
                    ? ReactiveRule::Aggregate::kMean
                    : ReactiveRule::Aggregate::kSum;
  r.window_s = n.DurationSeconds("window", 0, Between(0, 3600));
}

}  // namespace

PredictiveConfig PredictivePolicy::Parse(const ConfigNode& node, const WorkloadContext& ctx) {
  node.CheckKnown({"name", "signal", "capacity_per_replica", "target_utilization", "reactive",
                   "bucket", "season", "long_season", "long_season_slot", "smoothing", "quantile",
                   "margin", "margin_window", "min_errors", "lead", "scale_down_window",
                   "scale_down_rate", "idle_fraction"});
  PredictiveConfig c;
  c.signal = node.String("signal", c.signal);
  if (c.signal.empty()) node.ErrorAt("signal", "must not be empty");
  c.capacity_per_replica = node.RequiredNumber("capacity_per_replica", Above(0));
  c.target_utilization = node.Number("target_utilization", c.target_utilization, Between(0.05, 1));
  c.bucket_s = node.DurationSeconds("bucket", c.bucket_s, Between(1, 3600));
  c.season_s = SeasonSeconds(node, "season", c.season_s);
  c.long_season_s = SeasonSeconds(node, "long_season", c.long_season_s);
  c.long_season_slot_s =
      node.DurationSeconds("long_season_slot", c.long_season_slot_s, Between(1, 86400));
  // Children are read only when present: an absent key's yaml-cpp node is not safe to query.
  SetTimeConstants(c.bucket_s, kLevelTau, kTrendTau, kDampingTau, c.smoothing);
  if (node.Has("smoothing")) ParseSmoothing(node.Child("smoothing"), c.bucket_s, c.smoothing);
  c.quantile = node.Number("quantile", c.quantile, Between(0.5, 0.999));
  c.margin_mode = node.Enum("margin", "relative", {"relative", "absolute"}) == "absolute"
                      ? forecast::ErrorMode::kAbsolute
                      : forecast::ErrorMode::kRelative;
  c.margin_window_s = node.DurationSeconds("margin_window", c.margin_window_s, Above(0));
  c.min_errors = node.Int("min_errors", c.min_errors, Between(1, 100000));
  c.control_period_s = ctx.control_period_s;
  c.lead_s = node.DurationSeconds("lead", ctx.cold_start_s + ctx.control_period_s, AtLeast(0));
  c.scale_down_window_s =
      node.DurationSeconds("scale_down_window", c.scale_down_window_s, Between(0, 7 * 86400));
  c.scale_down_rate = node.Number("scale_down_rate", c.scale_down_rate, Between(0, 1));
  c.idle_fraction = node.Number("idle_fraction", c.idle_fraction, Between(0, 1));
  c.scale_to_zero = ctx.min_replicas == 0;
  if (node.Has("reactive")) {
    ParseReactive(node.Child("reactive"), c, c.reactive);
  } else {
    c.reactive.signal = c.signal;
    c.reactive.target = c.capacity_per_replica * c.target_utilization;
  }

  // Cross-field rules: the state must stay bounded and the seasons must line up with buckets.
  if (c.season_s > 0) {
    if (!IsMultiple(c.season_s, c.bucket_s) || c.season_s < 2 * c.bucket_s) {
      node.ErrorAt("season", "must be a multiple of bucket (" + std::to_string(c.bucket_s) +
                                 " s) and at least two buckets, or none");
    } else if (c.season_s / c.bucket_s > forecast::kMaxSeasonBuckets) {
      node.ErrorAt("season", "is more than " + std::to_string(forecast::kMaxSeasonBuckets) +
                                 " buckets; use a larger bucket");
    }
  }
  if (c.long_season_s > 0) {
    if (c.season_s <= 0 || c.long_season_s <= c.season_s) {
      node.ErrorAt("long_season", "needs a season and must be longer than it");
    } else if (!IsMultiple(c.long_season_slot_s, c.bucket_s) ||
               !IsMultiple(c.long_season_s, c.long_season_slot_s)) {
      node.ErrorAt("long_season",
                   "must be a multiple of long_season_slot, itself a multiple of bucket");
    } else if (c.long_season_s / c.long_season_slot_s > forecast::kMaxSeasonBuckets) {
      node.ErrorAt("long_season_slot", "gives too many slots; use a larger slot");
    }
  }
  if (c.lead_s / c.bucket_s > 1000) {
    node.ErrorAt(node.Has("lead") ? "lead" : "bucket",
                 "lead is more than 1000 buckets ahead; use a larger bucket");
  }
  if (c.margin_window_s / c.bucket_s > 100000) {
    node.ErrorAt("margin_window", "keeps more than 100000 errors; use a shorter window");
  } else if (c.margin_window_s / c.bucket_s < c.min_errors) {
    node.ErrorAt("margin_window",
                 "holds fewer errors than min_errors (" + std::to_string(c.min_errors) + ")");
  }
  return c;
}

std::unique_ptr<Policy> PredictivePolicy::Make(const ConfigNode& node, const WorkloadContext& ctx) {
  return std::make_unique<PredictivePolicy>(Parse(node, ctx));
}

int PredictiveConfig::season_buckets() const {
  return season_s > 0 ? static_cast<int>(std::lround(season_s / bucket_s)) : 0;
}

int PredictiveConfig::horizon_buckets() const {
  return static_cast<int>(std::floor(lead_s / bucket_s + 1e-9)) + 1;
}

}  // namespace aiscale::decide
