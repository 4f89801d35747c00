// Presets: the well-known metric names of dcgm-exporter, vLLM and the aiscale training contract,
// mapped onto canonical signals (core/signal.h), so a config says `preset: vllm` and a signal
// `ttft_p99_s` needs no expression.
//
// Each signal lists its metric names newest first; the first one a target actually exposes is
// used, so old and new exporter versions both work. Where every name comes from is noted in
// presets.cc. Static, immutable data; safe from any thread.
#pragma once

#include <string_view>
#include <vector>

#include "monitor/selector.h"

namespace aiscale::monitor {

enum class PresetKind {
  kSelect,        // metrics[i] read as a selector (gauge: value; counter: rate; histogram: p99)
  kUsedFraction,  // metrics[2i] / (metrics[2i] + metrics[2i+1]) per series (used, free)
  kPhase,         // a 0/1 gauge per phase{phase="load|compute|eval"} -> signals::Phase number
};

struct PresetSignal {
  std::string_view signal;
  PresetKind kind = PresetKind::kSelect;
  std::vector<std::string_view> metrics;         // alternatives, preferred first
  Aggregation aggregation = Aggregation::kNone;  // within one target
  double quantile = 0.99;                        // for histograms
};

struct Preset {
  std::string_view name;
  std::vector<PresetSignal> signals;
  // Labels naming the machine a series was measured on (dcgm: Hostname, hostname); when
  // present and the target is a fixed URL, it replaces host:port in Observation.instance.
  std::vector<std::string_view> host_labels;
  // Labels naming a series within a target, tried in order ("gpu", then UUID...), and whether
  // the instance always carries it (per-GPU signals) or only when a target has several series.
  std::vector<std::string_view> series_labels;
  std::string_view series_prefix;  // "gpu" -> "node3/gpu5"
  bool always_name_series = false;

  const PresetSignal* Find(std::string_view signal) const;
};

// "" (no preset: expressions only), "dcgm", "vllm", "training"; nullptr for anything else.
const Preset* FindPreset(std::string_view name);
std::vector<std::string_view> PresetNames();

// Canonical-name extensions used by the presets (custom signals: docs/architecture.md, "Signals").
inline constexpr std::string_view kGrEngineActive = "gr_engine_active";  // 0-1, dcgm
inline constexpr std::string_view kWorldSize = "world_size";             // training
inline constexpr std::string_view kLastRestartTimestampS = "last_restart_timestamp_s";

}  // namespace aiscale::monitor
