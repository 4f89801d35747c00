#include "sim/inference/replica_model.h"

#include <algorithm>
#include <cmath>

#include "core/numeric.h"

namespace aiscale::sim::inference {
namespace {

// The engine keeps one list per in-flight count, so the slots of a replica stay within
// kMaxSlots; the KV cache is counted in int64 tokens.
constexpr double kMaxSlots = 65536;
constexpr double kMaxKvTokens = 1e12;
// One request's service (or one step) is at most 1e9 s, so now + service stays in int64 ns;
// before this bound a 1e10 s service time wrapped to 1 ns and reported a perfect SLO.
constexpr int64_t kMaxServiceNs = 1'000'000'000'000'000'000;
// Per-token and per-request model times: an hour per token, a day per request (docs/limits.md).
constexpr double kMaxPerTokenSeconds = 3600;
constexpr double kMaxRequestSeconds = 86400;

int64_t ToNs(double s) {
  return SaturatingToInt64(std::round(s * 1e9), 1, kMaxServiceNs);  // NaN -> 1 ns
}

}  // namespace

int64_t ReplicaModel::StepNs(int batch, int64_t kv) const {
  return ToNs(llm.decode_base_s + llm.decode_per_seq_s * batch +
              llm.decode_per_kv_token_s * static_cast<double>(kv));
}

int64_t ReplicaModel::PrefillNs(int64_t input_tokens) const {
  return SaturatingToInt64(
      std::round(llm.prefill_s_per_token * static_cast<double>(input_tokens) * 1e9), 0,
      kMaxServiceNs);
}

int64_t ReplicaModel::ServiceNs(uint32_t output_tokens, double u, double z) const {
  double s = plain.mean_s;
  switch (plain.dist) {
    case PlainReplica::Dist::kConstant:
      break;
    case PlainReplica::Dist::kExponential:
      s = -plain.mean_s * std::log1p(-u);
      break;
    case PlainReplica::Dist::kLognormal: {
      // Mean and cv of the lognormal itself: sigma^2 = ln(1 + cv^2), mu = ln(mean) - sigma^2/2.
      const double sigma2 = std::log1p(plain.cv * plain.cv);
      s = std::exp(std::log(plain.mean_s) - sigma2 / 2 + std::sqrt(sigma2) * z);
      break;
    }
  }
  return ToNs(s + plain.per_output_token_s * output_tokens);
}

ReplicaModel ReplicaModel::Parse(const config::ConfigNode& node) {
  using config::Above;
  using config::AtLeast;
  using config::Between;
  ReplicaModel m;
  if (!node.IsDefined()) {
    node.Error("is required (the replica capacity model)");
    return m;
  }
  const std::string kind = node.Enum("kind", "llm", {"llm", "plain"});
  m.gpus_per_replica = node.Int("gpus", 1, Between(1, 4096));
  if (kind == "llm") {
    m.kind = Kind::kLlm;
    node.CheckKnown({"kind", "gpus", "max_batch", "kv_capacity_tokens", "prefill_s_per_token",
                     "decode_base_s", "decode_per_seq_s", "decode_per_kv_token_s"});
    m.llm.max_batch = node.Int("max_batch", m.llm.max_batch, Between(1, kMaxSlots));
    m.llm.kv_capacity_tokens = static_cast<int64_t>(
        node.Number("kv_capacity_tokens", static_cast<double>(m.llm.kv_capacity_tokens),
                    Between(1, kMaxKvTokens)));
    const config::Bounds per_token = Between(0, kMaxPerTokenSeconds);
    m.llm.prefill_s_per_token =
        node.Number("prefill_s_per_token", m.llm.prefill_s_per_token, per_token);
    m.llm.decode_base_s = node.Number("decode_base_s", m.llm.decode_base_s,
                                      config::Bounds{0, kMaxPerTokenSeconds, true});
    m.llm.decode_per_seq_s = node.Number("decode_per_seq_s", m.llm.decode_per_seq_s, per_token);
    m.llm.decode_per_kv_token_s =
        node.Number("decode_per_kv_token_s", m.llm.decode_per_kv_token_s, per_token);
  } else {
    m.kind = Kind::kPlain;
    node.CheckKnown({"kind", "gpus", "concurrency", "service_time", "per_output_token_s"});
    m.plain.concurrency = node.Int("concurrency", 1, Between(1, kMaxSlots));
    m.plain.per_output_token_s =
        node.Number("per_output_token_s", 0, Between(0, kMaxPerTokenSeconds));
    const auto st = node.Child("service_time");
    if (!st.IsDefined()) {
      node.ErrorAt("service_time", "is required for kind plain");
    } else {
      st.CheckKnown({"dist", "mean_s", "cv"});
      const std::string d = st.Enum("dist", "constant", {"constant", "exponential", "lognormal"});
      m.plain.dist = d == "constant"      ? PlainReplica::Dist::kConstant
                     : d == "exponential" ? PlainReplica::Dist::kExponential
                                          : PlainReplica::Dist::kLognormal;
      m.plain.mean_s = st.Number("mean_s", 1, config::Bounds{0, kMaxRequestSeconds, true});
      m.plain.cv = st.Number("cv", 0.5, Between(0, 100));
    }
  }
  return m;
}

}  // namespace aiscale::sim::inference
