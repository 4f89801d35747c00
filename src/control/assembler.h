// Assemble: builds a workload's Controller binding from its typed spec, the sources it may
// read and its actuator. The simulator's runner and `aiscale run` both use it, so a workload is
// wired the same way in both.
//
// Binding rules: with `fallback` set (the simulator), every signal the policy reads, required
// and optional, comes from that one source. Otherwise each of the spec's signals names its
// source, which must exist; a required signal without an entry is an error, an optional one
// is simply not fetched. Errors are kInvalid and name the workload and the signal.
#pragma once

#include <functional>
#include <string>

#include "control/controller.h"
#include "core/result.h"
#include "core/spec.h"

namespace aiscale::control {

struct SourceLookup {
  // The named source, or null when there is none by that name.
  std::function<MetricSource*(const std::string& name)> by_name;
  MetricSource* fallback = nullptr;
};

// `pool` (may be null): the controller's shared GPU pool; the workload's place in it
// (spec.pool) is resolved to indices, an unknown tenant or priority class being kInvalid.
Result<WorkloadBinding> Assemble(const WorkloadSpec& spec, const PolicySpec& pipeline,
                                 const SourceLookup& sources, Actuator* actuator,
                                 const PoolSpec* pool = nullptr);

// spec.pool resolved against `pool`: tenant and priority as indices; elastic (shrinkable)
// workloads have their shrink floor, others (reducible serving) their min_replicas as floor.
Result<PoolMember> ResolvePoolMember(const PoolSpec& pool, const WorkloadSpec& spec);

}  // namespace aiscale::control
