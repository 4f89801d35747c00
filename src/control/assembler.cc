#include "control/assembler.h"

#include <algorithm>

namespace aiscale::control {
namespace {

std::vector<SignalBinding> FromFallback(const Policy& policy, MetricSource* source) {
  std::vector<std::string> names = policy.Signals();
  for (const auto& o : policy.OptionalSignals()) {
    if (std::find(names.begin(), names.end(), o) == names.end()) names.push_back(o);
  }
  std::vector<SignalBinding> out;
  for (const auto& n : names) out.push_back({n, "", source, {}, {}});
  return out;
}

Result<std::vector<SignalBinding>> FromSpec(const WorkloadSpec& spec, const Policy& policy,
                                            const SourceLookup& sources) {
  std::vector<SignalBinding> out;
  for (const SignalSpec& s : spec.signals) {
    MetricSource* src = sources.by_name ? sources.by_name(s.source) : nullptr;
    if (!src) {
      return Status::Invalid("unable to bind signal " + s.name + " of workload " + spec.ref.Key() +
                             ": no source named '" + s.source + "'");
    }
    out.push_back({s.name, s.query, src, s.interval, s.timeout});
  }
  for (const auto& required : policy.Signals()) {
    const bool bound = std::any_of(out.begin(), out.end(),
                                   [&](const SignalBinding& b) { return b.signal == required; });
    if (!bound) {
      return Status::Invalid("unable to bind workload " + spec.ref.Key() + ": policy " +
                             std::string(policy.Name()) + " reads " + required +
                             " but no signal entry binds it");
    }
  }
  return out;
}

}  // namespace

Result<PoolMember> ResolvePoolMember(const PoolSpec& pool, const WorkloadSpec& spec) {
  const PoolMembership& m = spec.pool;
  PoolMember out;
  out.tenant = pool.TenantIndex(m.tenant);
  out.priority = pool.PriorityRank(m.priority);
  if (out.tenant < 0 || out.priority < 0) {
    return Status::Invalid("unable to place workload " + spec.ref.Key() + " in the pool: " +
                           (out.tenant < 0 ? "unknown tenant '" + m.tenant + "'"
                                           : "unknown priority class '" + m.priority + "'"));
  }
  out.gpus_per_replica = std::max(1, m.gpus_per_replica);
  out.granularity = std::max(1, spec.granularity);
  out.elastic = m.shrinkable;
  out.reducible = !m.shrinkable && m.reducible;
  out.floor = m.shrinkable ? std::max(m.shrink_floor, spec.min_replicas) : spec.min_replicas;
  out.restart_s = spec.cold_start_s;
  out.regrows_whole = m.shrinkable && m.restarts_to_resize;
  return out;
}

Result<WorkloadBinding> Assemble(const WorkloadSpec& spec, const PolicySpec& pipeline,
                                 const SourceLookup& sources, Actuator* actuator,
                                 const PoolSpec* pool) {
  if (!pipeline.policy) {
    return Status::Invalid("unable to assemble workload " + spec.ref.Key() + ": no policy");
  }
  WorkloadBinding b;
  b.ref = spec.ref;
  if (sources.fallback) {
    b.signals = FromFallback(*pipeline.policy, sources.fallback);
  } else {
    ASSIGN_OR_RETURN(b.signals, FromSpec(spec, *pipeline.policy, sources));
  }
  b.policy = pipeline.policy;
  b.stabilizer = pipeline.stabilizer;
  b.constraints = pipeline.constraints;
  b.actuator = actuator;
  b.staleness = Seconds(spec.staleness_s);
  b.min_replicas = spec.min_replicas;
  b.max_replicas = spec.max_replicas;
  if (pool) {
    ASSIGN_OR_RETURN(PoolMember m, ResolvePoolMember(*pool, spec));
    b.pool = m;
  }
  return b;
}

}  // namespace aiscale::control
