// InferenceSpec: the `service` block of an InferenceService workload in a scenario: the
// trace to replay, the replica capacity model, cold start, price, SLO, queue limits and the
// oracle's interval. Parsed and validated once (docs/architecture.md, practice 7): errors carry
// file:line:column and the field path; a spec exists only when there are none.
//
//   service:
//     trace: {format: azure_llm, path: ../../shared/traces/...csv, rate_multiplier: 1}
//     replica: {kind: llm, gpus: 1, max_batch: 64, kv_capacity_tokens: 400000, ...}
//     cold_start: {provisioning_s: 30, model_load_s: 90}   # each in [0, 1e9] s
//     price_per_gpu_hour: 2.5                               # >= 0
//     slo: {ttft_s: 2, latency_s: 20, attainment: 0.99}    # > 0, > 0, (0, 1]
//     queue: {timeout_s: 60, max_len: 0}                   # > 0, >= 0 (0 = unbounded)
//     metrics_window_s: 15                                 # (0, 86400] (default: scrape interval)
//     oracle: {interval_s: 60}                             # [1, 1e9] s
//     warm: {wake_s: 5, cost_fraction: 0.1}                # the warm tier (vLLM sleep mode);
//                                                          # absent: none
#pragma once

#include <memory>
#include <string>

#include "core/config/config_node.h"
#include "sim/inference/serving_engine.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::inference {

struct InferenceSpec {
  std::shared_ptr<const traces::RequestSource> trace;
  EngineOptions engine;
  double provisioning_s = 30;
  double model_load_s = 60;
  double price_per_gpu_hour = 0;
  double oracle_interval_s = 60;
  // The warm tier: an asleep replica wakes in wake_s and is billed cost_fraction of a GPU-hour
  // per GPU-hour asleep (the GPU memory it frees serves others). Off unless `warm:` is given.
  bool warm = false;
  double wake_s = 5;
  double asleep_cost_fraction = 0.1;
  double ColdStartSeconds() const { return provisioning_s + model_load_s; }

  // `default_window_s` is the scenario's scrape interval. Null on any error (see
  // node.errors()). Relative trace paths resolve against the scenario file's directory.
  static std::unique_ptr<InferenceSpec> Parse(const config::ConfigNode& node,
                                              double default_window_s, uint64_t seed);
};

}  // namespace aiscale::sim::inference
