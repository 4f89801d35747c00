// Canonical signal names (docs/architecture.md, "Signals") and the valid range of each.
//
// Why: every source maps its native metric names onto these, so a policy reads `gpu_util`
// whether it came from dcgm-exporter, Prometheus or the simulator. Custom names are allowed;
// they are only checked for being finite.
#pragma once

#include <cmath>

#include <string_view>

namespace aiscale::signals {

// Hardware, per GPU (instance label = GPU or pod).
inline constexpr std::string_view kGpuUtil = "gpu_util";                  // 0-100
inline constexpr std::string_view kSmActive = "sm_active";                // 0-1
inline constexpr std::string_view kGpuMemUsedFrac = "gpu_mem_used_frac";  // 0-1
inline constexpr std::string_view kGpuPowerW = "gpu_power_w";             // >= 0
// Node.
inline constexpr std::string_view kNetRxBytesPerS = "net_rx_bytes_per_s";
inline constexpr std::string_view kCpuUtil = "cpu_util";  // 0-100
// Training (one value for the job unless an instance label says otherwise).
inline constexpr std::string_view kSamplesPerS = "samples_per_s";
inline constexpr std::string_view kStepsPerS = "steps_per_s";
inline constexpr std::string_view kPhase = "phase";                   // Phase enum as a number
inline constexpr std::string_view kEpochProgress = "epoch_progress";  // 0-1 within the epoch
inline constexpr std::string_view kLoss = "loss";
// Training extensions the simulator and torchrun jobs report (custom names: docs/architecture.md,
// named here so the training policy and the sources agree on them).
inline constexpr std::string_view kEpoch = "epoch";               // completed epochs, >= 0
inline constexpr std::string_view kJobProgress = "job_progress";  // 0-1 of all samples
inline constexpr std::string_view kSamplesRemaining = "samples_remaining";  // >= 0
// Serving.
inline constexpr std::string_view kRequestRate = "request_rate";  // requests/s, whole service
inline constexpr std::string_view kConcurrency = "concurrency";   // in flight, per replica
inline constexpr std::string_view kQueueLen = "queue_len";
inline constexpr std::string_view kLatencyP99S = "latency_p99_s";
inline constexpr std::string_view kTtftP99S = "ttft_p99_s";
inline constexpr std::string_view kTokensPerS = "tokens_per_s";
inline constexpr std::string_view kKvCacheUsage = "kv_cache_usage";  // 0-1

// Training phases as carried in the `phase` signal.
enum class Phase { kLoad = 0, kCompute = 1, kEval = 2 };
std::string_view PhaseName(Phase p);

struct Range {
  double min;
  double max;
  // True when `v` is finite and inside [min, max].
  bool Contains(double v) const { return std::isfinite(v) && v >= min && v <= max; }
};
// The valid range of a signal; custom signals get (-inf, inf). NaN/inf are never valid.
Range ValidRange(std::string_view signal);
// True when `v` is finite and inside ValidRange(signal).
bool IsValidValue(std::string_view signal, double v);

}  // namespace aiscale::signals
