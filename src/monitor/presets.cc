#include "monitor/presets.h"

#include <utility>

#include "core/signal.h"

namespace aiscale::monitor {
namespace {

using signals::kEpoch;
using signals::kEpochProgress;
using signals::kGpuMemUsedFrac;
using signals::kGpuPowerW;
using signals::kGpuUtil;
using signals::kJobProgress;
using signals::kLoss;
using signals::kSamplesPerS;
using signals::kSamplesRemaining;
using signals::kSmActive;
using signals::kStepsPerS;

PresetSignal Sig(std::string_view signal, PresetKind kind, std::vector<std::string_view> metrics,
                 Aggregation aggregation = Aggregation::kNone) {
  PresetSignal s;
  s.signal = signal;
  s.kind = kind;
  s.metrics = std::move(metrics);
  s.aggregation = aggregation;
  return s;
}

// dcgm-exporter (NVIDIA/dcgm-exporter). DCGM_FI_* names: etc/default-counters.csv (GPU_UTIL,
// POWER_USAGE, FB_USED, FB_FREE) and its "Datacenter Profiling (DCP) metrics" section
// (PROF_SM_ACTIVE, PROF_GR_ENGINE_ACTIVE). Labels, from the exporter's exposition template:
// gpu, UUID, pci_bus_id, device, modelName, Hostname (+ pod/namespace/container on Kubernetes);
// relabelled deployments and some forks write `hostname`, so both are accepted. The older
// NVIDIA/gpu-monitoring-tools dcgm-exporter 1.x wrote lower-case dcgm_gpu_utilization,
// dcgm_power_usage (its README's sample output), dcgm_fb_used and dcgm_fb_free.
Preset MakeDcgm() {
  Preset p;
  p.name = "dcgm";
  p.signals = {
      Sig(kGpuUtil, PresetKind::kSelect, {"DCGM_FI_DEV_GPU_UTIL", "dcgm_gpu_utilization"}),
      Sig(kGpuMemUsedFrac, PresetKind::kUsedFraction,
          {"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "dcgm_fb_used", "dcgm_fb_free"}),
      Sig(kGpuPowerW, PresetKind::kSelect, {"DCGM_FI_DEV_POWER_USAGE", "dcgm_power_usage"}),
      Sig(kSmActive, PresetKind::kSelect, {"DCGM_FI_PROF_SM_ACTIVE"}),
      Sig(kGrEngineActive, PresetKind::kSelect, {"DCGM_FI_PROF_GR_ENGINE_ACTIVE"}),
  };
  p.host_labels = {"Hostname", "hostname"};
  p.series_labels = {"gpu", "UUID", "uuid"};
  p.series_prefix = "gpu";
  p.always_name_series = true;
  return p;
}

// vLLM (vllm-project/vllm). v1 engine: vllm/v1/metrics/loggers.py PrometheusStatLogger, labels
// model_name and engine; v0 engine: vllm/engine/metrics.py, label model_name. Names:
//   vllm:num_requests_running, vllm:num_requests_waiting     gauges, v0 and v1
//   vllm:kv_cache_usage_perc                                 gauge 0-1, v1 (>= 0.9)
//   vllm:gpu_cache_usage_perc                                gauge 0-1, v0 and v1 <= 0.10
//                                                            ("DEPRECATED: use kv_cache_usage")
//   vllm:time_to_first_token_seconds                         histogram, v0 and v1
//   vllm:e2e_request_latency_seconds                         histogram, v0 and v1
//   vllm:request_success (sample vllm:request_success_total) counter by finished_reason
// Several engines (data parallel) in one server are summed (requests) or averaged (cache).
Preset MakeVllm() {
  Preset p;
  p.name = "vllm";
  p.signals = {
      Sig(signals::kConcurrency, PresetKind::kSelect, {"vllm:num_requests_running"},
          Aggregation::kSum),
      Sig(signals::kQueueLen, PresetKind::kSelect, {"vllm:num_requests_waiting"},
          Aggregation::kSum),
      Sig(signals::kKvCacheUsage, PresetKind::kSelect,
          {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, Aggregation::kAvg),
      Sig(signals::kTtftP99S, PresetKind::kSelect, {"vllm:time_to_first_token_seconds"},
          Aggregation::kSum),
      Sig(signals::kLatencyP99S, PresetKind::kSelect, {"vllm:e2e_request_latency_seconds"},
          Aggregation::kSum),
      Sig(signals::kRequestRate, PresetKind::kSelect, {"vllm:request_success_total"},
          Aggregation::kSum),
  };
  p.series_labels = {"engine", "model_name"};
  return p;
}

// The aiscale training contract (docs/training-engine-contract.md, "Metrics"): what a training
// job exposes on /metrics. Throughput may come as a gauge or as a counter (turned into a rate).
Preset MakeTraining() {
  Preset p;
  p.name = "training";
  p.signals = {
      Sig(kSamplesPerS, PresetKind::kSelect,
          {"aiscale_training_samples_per_second", "aiscale_training_samples_total"},
          Aggregation::kSum),
      Sig(kStepsPerS, PresetKind::kSelect, {"aiscale_training_steps_total"}, Aggregation::kMax),
      Sig(signals::kPhase, PresetKind::kPhase, {"aiscale_training_phase"}),
      Sig(kEpochProgress, PresetKind::kSelect, {"aiscale_training_epoch_progress"},
          Aggregation::kMax),
      Sig(kEpoch, PresetKind::kSelect, {"aiscale_training_epoch"}, Aggregation::kMax),
      Sig(kJobProgress, PresetKind::kSelect, {"aiscale_training_job_progress"}, Aggregation::kMax),
      Sig(kSamplesRemaining, PresetKind::kSelect, {"aiscale_training_samples_remaining"},
          Aggregation::kMin),
      Sig(kLoss, PresetKind::kSelect, {"aiscale_training_loss"}, Aggregation::kAvg),
      Sig(kWorldSize, PresetKind::kSelect, {"aiscale_training_world_size"}, Aggregation::kMax),
      Sig(kLastRestartTimestampS, PresetKind::kSelect,
          {"aiscale_training_last_restart_timestamp_seconds"}, Aggregation::kMax),
  };
  p.series_labels = {"rank", "pod"};
  return p;
}

struct Presets {
  Preset none;
  Preset dcgm = MakeDcgm();
  Preset vllm = MakeVllm();
  Preset training = MakeTraining();
};

const Presets& All() {
  static const Presets kPresets;  // immutable after first use (thread-safe static init)
  return kPresets;
}

}  // namespace

const PresetSignal* Preset::Find(std::string_view signal) const {
  for (const PresetSignal& s : signals) {
    if (s.signal == signal) return &s;
  }
  return nullptr;
}

const Preset* FindPreset(std::string_view name) {
  const Presets& p = All();
  for (const Preset* preset : {&p.none, &p.dcgm, &p.vllm, &p.training}) {
    if (preset->name == name) return preset;
  }
  return nullptr;
}

std::vector<std::string_view> PresetNames() { return {"", "dcgm", "vllm", "training"}; }

}  // namespace aiscale::monitor
