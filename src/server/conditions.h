// Conditions: a workload's state in the words `kubectl describe hpa` uses (AbleToScale,
// ScalingActive, ScalingLimited), plus SignalsFresh (every signal has current data) and Paused
// (an operator's override, as KEDA reports it), derived from the last decision and the view.
// Also the target each signal is held to, read from the policy's facts.
//
// Why derived, not stored: they are a reading of what the Decision already records, so the
// API, `aiscale status` and the dashboard say the same thing. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/workload_view.h"

namespace aiscale::server {

struct Condition {
  std::string type;    // "AbleToScale", "ScalingActive", "ScalingLimited", "SignalsFresh", "Paused"
  bool status = true;  // True / False
  std::string reason;  // CamelCase, e.g. "TooManyReplicas"
  std::string message;
};

std::vector<Condition> ConditionsOf(const WorkloadView& w);

// The target the policy holds `signal` to, from the last decision's facts: "<signal>.target"
// (hpa), or "target" when the policy reads one signal (kpa); NaN when none is known.
double SignalTarget(const WorkloadView& w, std::string_view signal);

}  // namespace aiscale::server
