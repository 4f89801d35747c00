// ReplicaModel: how fast one serving replica works, for the two kinds the simulator knows.
//
//  - kLlm, an LLM server with continuous batching (iteration-level scheduling, as vLLM/TGI):
//    every step emits one token for each running request; a step lasts
//      decode_base_s + decode_per_seq_s * batch + decode_per_kv_token_s * kv_reserved
//    and, when it admits new requests, also prefill_s_per_token * (their input tokens), so the
//    first token of a request ends the step that prefilled it. A request reserves
//    input + output tokens of KV cache when admitted (no preemption), so admission is bounded
//    by max_batch and kv_capacity_tokens.
//  - kPlain, a plain model server: up to `concurrency` requests at once, each taking a
//    service time drawn from a fixed distribution (constant, exponential or lognormal with the
//    given mean and cv) plus per_output_token_s for each output token / work unit.
// Values are validated by Parse (zero capacity or a zero step time is an error).
#pragma once

#include <cstdint>
#include <string>

#include "core/config/config_node.h"

namespace aiscale::sim::inference {

struct LlmReplica {
  int max_batch = 64;
  int64_t kv_capacity_tokens = 400'000;
  double prefill_s_per_token = 0.00008;
  double decode_base_s = 0.012;
  double decode_per_seq_s = 0.0004;
  double decode_per_kv_token_s = 0;
};

struct PlainReplica {
  enum class Dist { kConstant, kExponential, kLognormal };
  int concurrency = 1;
  Dist dist = Dist::kConstant;
  double mean_s = 1.0;
  double cv = 0.5;  // lognormal only
  double per_output_token_s = 0;
};

struct ReplicaModel {
  enum class Kind { kLlm, kPlain };
  Kind kind = Kind::kLlm;
  LlmReplica llm;
  PlainReplica plain;
  int gpus_per_replica = 1;

  // Duration of one decode step with `batch` running requests and `kv` reserved tokens (ns,
  // at least 1).
  int64_t StepNs(int batch, int64_t kv) const;
  int64_t PrefillNs(int64_t input_tokens) const;
  // Plain server: service time for a request, from a uniform draw u in (0, 1) and a standard
  // normal draw z (so a request's time depends only on its own draws, not on who else runs).
  int64_t ServiceNs(uint32_t output_tokens, double u, double z) const;
  // Concurrency limit: max_batch or concurrency.
  int Slots() const { return kind == Kind::kLlm ? llm.max_batch : plain.concurrency; }

  // Reads a `replica` block; errors are recorded in node.errors().
  //   replica: {kind: llm, gpus: 1, max_batch: 64, kv_capacity_tokens: 400000,
  //             prefill_s_per_token: 8e-5, decode_base_s: 0.012, decode_per_seq_s: 4e-4,
  //             decode_per_kv_token_s: 0}
  //   replica: {kind: plain, gpus: 1, concurrency: 1, service_time: {dist: lognormal,
  //             mean_s: 30, cv: 0.3}, per_output_token_s: 0}
  static ReplicaModel Parse(const config::ConfigNode& node);
};

}  // namespace aiscale::sim::inference
