// HpaBehavior defaults and parsing: the autoscaling/v2 field names, defaulting and validation
// (pkg/apis/autoscaling/v2/defaults.go and pkg/apis/autoscaling/validation).
#include "decide/stabilizer.h"

namespace aiscale::decide {
namespace {

constexpr int kMaxStabilizationWindowSeconds = 3600;
constexpr int kMaxPeriodSeconds = 1800;

HpaScalingRules ParseRules(const config::ConfigNode& n, HpaScalingRules rules) {
  if (!n.IsDefined()) return rules;
  if (!n.IsMap()) {
    n.Error("must be a map with stabilizationWindowSeconds, selectPolicy, policies");
    return rules;
  }
  n.CheckKnown({"stabilizationWindowSeconds", "selectPolicy", "policies"});
  rules.stabilization_window_seconds =
      n.Int("stabilizationWindowSeconds", rules.stabilization_window_seconds,
            config::Between(0, kMaxStabilizationWindowSeconds));
  if (n.Has("selectPolicy")) {
    const std::string select = n.Enum("selectPolicy", "Max", {"Max", "Min", "Disabled"});
    rules.select_policy = select == "Min"        ? SelectPolicy::kMin
                          : select == "Disabled" ? SelectPolicy::kDisabled
                                                 : SelectPolicy::kMax;
  }
  if (!n.Has("policies")) return rules;  // defaulted, as the API server does
  const config::ConfigNode list = n.Child("policies");
  if (!list.IsSequence()) {
    list.Error("must be a list of {type, value, periodSeconds}");
    return rules;
  }
  const std::vector<config::ConfigNode> items = list.Items();
  if (items.empty()) list.Error("must specify at least one Policy");
  rules.policies.clear();
  for (const config::ConfigNode& item : items) {
    if (!item.IsMap()) {
      item.Error("must be a map with type, value, periodSeconds");
      continue;
    }
    item.CheckKnown({"type", "value", "periodSeconds"});
    HpaScalingPolicy p;
    for (const char* field : {"type", "value", "periodSeconds"}) {
      if (!item.Has(field)) item.Error(std::string("missing required field '") + field + "'");
    }
    const std::string type = item.Enum("type", "Pods", {"Pods", "Percent"});
    p.type = type == "Percent" ? HpaScalingPolicy::Type::kPercent : HpaScalingPolicy::Type::kPods;
    p.value = item.Int("value", 1, config::Above(0));
    p.period_seconds = item.Int("periodSeconds", 15, config::Between(1, kMaxPeriodSeconds));
    rules.policies.push_back(p);
  }
  return rules;
}

}  // namespace

HpaBehavior HpaBehavior::Defaults() {
  HpaBehavior b;
  b.scale_up.stabilization_window_seconds = 0;
  b.scale_up.select_policy = SelectPolicy::kMax;
  b.scale_up.policies = {{HpaScalingPolicy::Type::kPods, 4, 15},
                         {HpaScalingPolicy::Type::kPercent, 100, 15}};
  b.scale_down.stabilization_window_seconds = 300;
  b.scale_down.select_policy = SelectPolicy::kMax;
  b.scale_down.policies = {{HpaScalingPolicy::Type::kPercent, 100, 15}};
  return b;
}

HpaBehavior HpaBehavior::Parse(const config::ConfigNode& node) {
  HpaBehavior b = Defaults();
  if (!node.IsDefined()) return b;
  if (!node.IsMap()) {
    node.Error("must be a map with scaleUp and/or scaleDown");
    return b;
  }
  node.CheckKnown({"scaleUp", "scaleDown"});
  b.scale_up = ParseRules(node.Child("scaleUp"), b.scale_up);
  b.scale_down = ParseRules(node.Child("scaleDown"), b.scale_down);
  return b;
}

}  // namespace aiscale::decide
