#include "sim/inference/inference_spec.h"

#include <filesystem>

#include "sim/traces/trace_spec.h"

namespace aiscale::sim::inference {

namespace {

// Every time is kept in integer nanoseconds, so no duration may pass 1e9 s (31 years; 1e18 ns
// fits an int64 with room for sums). The metrics window keeps one bucket per second, so it
// stays within a day; the oracle resizes no faster than once a second.
constexpr double kMaxSeconds = 1e9;
constexpr double kMaxWindowSeconds = 86400;
config::Bounds Positive(double max) { return config::Bounds{0, max, true}; }

}  // namespace

std::unique_ptr<InferenceSpec> InferenceSpec::Parse(const config::ConfigNode& node,
                                                    double default_window_s, uint64_t seed) {
  using config::AtLeast;
  using config::Between;
  const size_t before = node.errors()->size();
  if (!node.IsDefined() || !node.IsMap()) {
    node.Error("is required: the service's trace, replica model, cold start, price and SLO");
    return nullptr;
  }
  node.CheckKnown({"trace", "replica", "cold_start", "price_per_gpu_hour", "slo", "queue",
                   "metrics_window_s", "oracle", "warm"});
  auto spec = std::make_unique<InferenceSpec>();
  spec->engine.model = ReplicaModel::Parse(node.Child("replica"));

  const auto cs = node.Child("cold_start");
  cs.CheckKnown({"provisioning_s", "model_load_s"});
  spec->provisioning_s = cs.DurationSeconds("provisioning_s", 30, Between(0, kMaxSeconds));
  spec->model_load_s = cs.DurationSeconds("model_load_s", 60, Between(0, kMaxSeconds));
  spec->price_per_gpu_hour = node.Number("price_per_gpu_hour", 0, Between(0, 1e6));

  const auto slo = node.Child("slo");
  if (!slo.IsDefined()) node.ErrorAt("slo", "is required (ttft_s, latency_s)");
  slo.CheckKnown({"ttft_s", "latency_s", "attainment"});
  spec->engine.slo.ttft_s = slo.DurationSeconds("ttft_s", 2, Positive(kMaxSeconds));
  spec->engine.slo.latency_s = slo.DurationSeconds("latency_s", 20, Positive(kMaxSeconds));
  spec->engine.slo.attainment = slo.Number("attainment", 0.99, Between(0, 1));
  if (slo.Has("attainment") && spec->engine.slo.attainment == 0) {
    slo.ErrorAt("attainment", "must be > 0");
  }

  const auto q = node.Child("queue");
  q.CheckKnown({"timeout_s", "max_len"});
  spec->engine.queue_timeout_s = q.DurationSeconds("timeout_s", 60, Positive(kMaxSeconds));
  spec->engine.max_queue = q.Int("max_len", 0, Between(0, 1e8));
  spec->engine.window_s =
      node.DurationSeconds("metrics_window_s", default_window_s, Positive(kMaxWindowSeconds));
  spec->engine.seed = seed;
  const auto oracle = node.Child("oracle");
  oracle.CheckKnown({"interval_s"});
  spec->oracle_interval_s = oracle.DurationSeconds("interval_s", 60, Between(1, kMaxSeconds));

  if (node.Has("warm")) {
    const auto warm = node.Child("warm");
    warm.CheckKnown({"wake_s", "cost_fraction"});
    spec->warm = true;
    spec->wake_s = warm.DurationSeconds("wake_s", spec->wake_s, Between(0, 3600));
    spec->asleep_cost_fraction =
        warm.Number("cost_fraction", spec->asleep_cost_fraction, Between(0, 1));
  }

  const std::string file = node.file();
  const std::string dir =
      file.empty() ? std::string() : std::filesystem::path(file).parent_path().string();
  if (!node.Child("trace").IsDefined()) {
    node.ErrorAt("trace", "is required");
  } else {
    spec->trace = traces::ParseTraceSpec(node.Child("trace"), dir);
  }
  if (node.errors()->size() != before) return nullptr;
  return spec;
}

}  // namespace aiscale::sim::inference
