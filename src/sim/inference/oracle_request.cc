#include "sim/inference/oracle_request.h"

#include <algorithm>

#include "core/numeric.h"

namespace aiscale::sim::inference {

SoloOutcome Solo(const traces::TraceRequest& r, const EngineOptions& e, int64_t wait_ns) {
  SoloOutcome out;
  const ReplicaModel& m = e.model;
  if (m.kind == ReplicaModel::Kind::kPlain) {
    out.latency_ns = wait_ns + PlainServiceNs(r, e);
    out.ttft_ns = out.latency_ns;  // a plain server's first result is its whole answer
    return out;
  }
  const int64_t kv = static_cast<int64_t>(r.input_tokens) + r.output_tokens;
  if (kv > m.llm.kv_capacity_tokens) {
    out.fits = false;
    return out;
  }
  // As ServingEngine::StartSegment runs a batch of one: the first step also prefills the
  // prompt and yields the first token; every later step yields one more.
  const int64_t dt = m.StepNs(1, kv);
  const int64_t d0 = dt + m.PrefillNs(r.input_tokens);
  const int64_t later_steps = std::max<int64_t>(r.output_tokens, 1) - 1;
  out.ttft_ns = wait_ns + d0;
  out.latency_ns = SaturatingAdd(out.ttft_ns, SaturatingMul(later_steps, dt));
  return out;
}

bool SoloWithinSlo(const traces::TraceRequest& r, const EngineOptions& e, int64_t wait_ns) {
  if (wait_ns > SaturatingNanos(e.queue_timeout_s)) return false;
  const SoloOutcome s = Solo(r, e, wait_ns);
  return s.fits && s.ttft_ns <= SaturatingNanos(e.slo.ttft_s) &&
         s.latency_ns <= SaturatingNanos(e.slo.latency_s);
}

double MinBusySeconds(const traces::TraceRequest& r, const EngineOptions& e) {
  const ReplicaModel& m = e.model;
  if (m.kind == ReplicaModel::Kind::kLlm) {
    // Prefill runs inside steps one replica takes one at a time; a token costs at least a
    // full batch's share of a step (base / max_batch + per_seq).
    const double per_token = m.llm.decode_base_s / m.llm.max_batch + m.llm.decode_per_seq_s;
    return r.input_tokens * m.llm.prefill_s_per_token + r.output_tokens * per_token;
  }
  return static_cast<double>(PlainServiceNs(r, e)) / 1e9 / m.plain.concurrency;
}

}  // namespace aiscale::sim::inference
