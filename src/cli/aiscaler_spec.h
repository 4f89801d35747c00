// AIScaler objects (aiscalers.aiscale.dev/v1alpha1) read into the same typed WorkloadSpec as a
// config file's workload, by the same reader.
//
// How: the object's spec is turned into a workload map (its metadata.name and namespace as
// name and namespace, `kind` defaulting to scaleTargetRef.kind, and a kubernetes `target:`
// built from scaleTargetRef with the connection of the `aiscalers:` config) and read by
// ParseWorkloadEntry, so fields, defaults, bounds and messages are the config file's. Errors
// name their field path in the object ("spec.policy.metrics[0].target.value: must be > 0"); the
// synthesized target's paths read spec.scaleTargetRef. The hold annotations (decide/pause.h)
// are read here too. Pure apart from the registries it is given; never throws.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/aiscaler_config.h"
#include "cli/controller_config.h"
#include "core/spec.h"
#include "decide/pause.h"

namespace aiscale::cli {

inline constexpr const char* kAiScalerGroup = "aiscale.dev";
inline constexpr const char* kAiScalerVersion = "v1alpha1";
inline constexpr const char* kAiScalerKind = "AIScaler";
inline constexpr const char* kAiScalerPlural = "aiscalers";

// What an AIScaler is read with.
struct AiScalerContext {
  const WorkloadRegistries* registries = nullptr;
  const std::vector<SourceSpec>* sources = nullptr;  // the config file's named sources
  double period_s = 15;
  act::KubeAuthConfig auth;  // how its target is reached (the watch's own connection)
  Duration call_timeout = Seconds(10);
  const PoolSpec* pool = nullptr;  // the config file's shared GPU pool, if it has one
};

struct ParsedAiScaler {
  std::string key;  // "namespace/name"
  std::string namespace_, name, uid, resource_version;
  int64_t generation = 0;
  // Everything a binding is made from (spec, hold annotations, uid): an object whose
  // fingerprint did not change needs no new binding (a status write changes only its
  // resourceVersion).
  std::string fingerprint;
  std::optional<WorkloadSpec> workload;  // set when the spec is valid
  std::vector<std::string> errors;       // "spec.x: message", one per problem
  decide::PauseSpec pause;
  std::string pause_error;  // a hold annotation that cannot be read (the workload then holds)
  std::string reference;    // "Deployment/llm", for status and `kubectl get`
  // Each signal's target as the policy states it ("16", "70%"), for the TARGETS column.
  std::map<std::string, std::string> targets;
  std::vector<std::string> signal_order;  // the signals in spec order
};

ParsedAiScaler ParseAiScaler(const nlohmann::json& object, const AiScalerContext& ctx);

}  // namespace aiscale::cli
