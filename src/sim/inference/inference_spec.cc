#include "sim/inference/inference_spec.h"

#include <filesystem>

#include "sim/traces/trace_spec.h"

namespace aiscale::sim::inference {

std::unique_ptr<InferenceSpec> InferenceSpec::Parse(const config::ConfigNode& node,
                                                    double default_window_s, uint64_t seed) {
  using config::Above;
  using config::AtLeast;
  using config::Between;
  const size_t before = node.errors()->size();
  if (!node.IsDefined() || !node.IsMap()) {
    node.Error("is required: the service's trace, replica model, cold start, price and SLO");
    return nullptr;
  }
  node.CheckKnown({"trace", "replica", "cold_start", "price_per_gpu_hour", "slo", "queue",
                   "metrics_window_s", "oracle"});
  auto spec = std::make_unique<InferenceSpec>();
  spec->engine.model = ReplicaModel::Parse(node.Child("replica"));

  const auto cs = node.Child("cold_start");
  cs.CheckKnown({"provisioning_s", "model_load_s"});
  spec->provisioning_s = cs.DurationSeconds("provisioning_s", 30, AtLeast(0));
  spec->model_load_s = cs.DurationSeconds("model_load_s", 60, AtLeast(0));
  spec->price_per_gpu_hour = node.Number("price_per_gpu_hour", 0, AtLeast(0));

  const auto slo = node.Child("slo");
  if (!slo.IsDefined()) node.ErrorAt("slo", "is required (ttft_s, latency_s)");
  slo.CheckKnown({"ttft_s", "latency_s", "attainment"});
  spec->engine.slo.ttft_s = slo.DurationSeconds("ttft_s", 2, Above(0));
  spec->engine.slo.latency_s = slo.DurationSeconds("latency_s", 20, Above(0));
  spec->engine.slo.attainment = slo.Number("attainment", 0.99, Between(0, 1));
  if (slo.Has("attainment") && spec->engine.slo.attainment == 0) {
    slo.ErrorAt("attainment", "must be > 0");
  }

  const auto q = node.Child("queue");
  q.CheckKnown({"timeout_s", "max_len"});
  spec->engine.queue_timeout_s = q.DurationSeconds("timeout_s", 60, Above(0));
  spec->engine.max_queue = q.Int("max_len", 0, AtLeast(0));
  spec->engine.window_s = node.DurationSeconds("metrics_window_s", default_window_s, Above(0));
  spec->engine.seed = seed;
  const auto oracle = node.Child("oracle");
  oracle.CheckKnown({"interval_s"});
  spec->oracle_interval_s = oracle.DurationSeconds("interval_s", 60, Above(0));

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
