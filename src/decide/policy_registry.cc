#include "decide/policy_registry.h"

#include <set>

#include "decide/policies/hpa.h"
#include "decide/policies/kpa.h"
#include "decide/policies/predictive.h"
#include "decide/policies/slo.h"
#include "decide/policies/static_peak.h"
#include "decide/policies/static_policy.h"
#include "decide/policies/training.h"

namespace aiscale::decide {
namespace {

std::unique_ptr<Policy> MakeStatic(const config::ConfigNode& node, const WorkloadContext& ctx) {
  node.CheckKnown({"name", "replicas"});
  return std::make_unique<StaticPolicy>(StaticPolicy::Parse(node, ctx.min_replicas));
}

}  // namespace

Result<PolicyRegistry> PolicyRegistry::Default() {
  // One line per policy. Keep alphabetical.
  return FromEntries({
      {"hpa", &HpaPolicy::Make, /*hpa_behavior=*/true},
      {"kpa", &MakeKpaPolicy},
      {"predictive", &PredictivePolicy::Make},
      {"slo", &SloPolicy::Make},
      {"static", &MakeStatic},
      {"static-peak", &StaticPeakPolicy::Make},
      {"training", &TrainingPolicy::Make},
  });
}

Result<PolicyRegistry> PolicyRegistry::FromEntries(std::vector<PolicyEntry> entries) {
  std::set<std::string> seen;
  for (const auto& e : entries) {
    if (!seen.insert(e.name).second) {
      return Status::Error("duplicate policy name in registry: " + e.name);
    }
  }
  PolicyRegistry r;
  r.entries_ = std::move(entries);
  return r;
}

Result<MadePolicy> PolicyRegistry::Create(const config::ConfigNode& node,
                                          const WorkloadContext& ctx) const {
  const size_t errors_before = node.errors()->size();
  const std::string name = node.RequiredString("name");
  for (const auto& e : entries_) {
    if (e.name != name) continue;
    std::unique_ptr<Policy> p = e.factory(node, ctx);
    if (node.errors()->size() > errors_before || !p) {
      return Status::Invalid("unable to create policy '" + name + "' at " + node.path() +
                             ": see config errors");
    }
    return MadePolicy{e.name, std::move(p), e.hpa_behavior};
  }
  std::string list;
  for (const auto& n : Names()) list += (list.empty() ? "" : ", ") + n;
  if (node.Has("name")) node.ErrorAt("name", "unknown policy '" + name + "' (known: " + list + ")");
  return Status::Invalid("unknown policy '" + name + "'");
}

std::vector<std::string> PolicyRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

}  // namespace aiscale::decide
