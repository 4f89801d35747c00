#include "sim/sweep.h"

#include <cmath>
#include <limits>
#include <map>

#include <yaml-cpp/yaml.h>

#include "report/svg_chart.h"

namespace aiscale::sim {
namespace {

// Sets `k` to `v` on `node` (a policy's config, a copy); false when it has nothing to set it on
// (an hpa entry without metrics, a kpa one without a target: the factor needs a value).
bool SetKnob(const SweepKnob& k, YAML::Node node, double v) {
  if (k.policy == "hpa") {
    YAML::Node metrics = node["metrics"];
    if (!metrics.IsSequence() || metrics.size() == 0) return false;
    for (YAML::Node m : metrics) {
      YAML::Node target = m["target"];
      if (!target.IsMap() || !target["value"]) return false;
      target["value"] = target["value"].as<double>() * v;
    }
    return true;
  }
  if (k.policy == "kpa") {
    if (!node["target"]) return false;
    node["target"] = node["target"].as<double>() * v;
    return true;
  }
  if (k.policy == "predictive") {
    node["target_utilization"] = v;
    return true;
  }
  if (k.policy == "slo") {
    node["headroom"]["prior"] = v;
    return true;
  }
  return false;
}

const SweepKnob* KnobOf(const std::string& policy) {
  for (const SweepKnob& k : SweepKnobs()) {
    if (k.policy == policy) return &k;
  }
  return nullptr;
}

std::string PointLabel(const std::string& family, const SweepKnob& k, double v) {
  return family + " " + (k.factor ? "x" : k.knob + "=") + report::CompactNumber(v);
}

// One compare entry: its variants appended to `out`, its family to `layout`.
void Expand(const YAML::Node& entry, const YAML::Node& own, YAML::Node& out,
            report::Sweep& layout) {
  const std::string own_name = own["name"] ? own["name"].as<std::string>() : "";
  YAML::Node node;
  std::string name, label;
  if (entry.IsScalar()) {
    name = label = entry.as<std::string>();
    if (name == own_name) node = YAML::Clone(own);
  } else {
    node = YAML::Clone(entry);
    name = node["name"] ? node["name"].as<std::string>() : "";
    label = node["label"] ? node["label"].as<std::string>() : name;
  }
  report::SweepFamily f{label, name, "", {}};
  const SweepKnob* k = KnobOf(name);
  if (k && !node.IsMap()) {
    node = YAML::Node(YAML::NodeType::Map);
    node["name"] = name;
  }
  if (k && SetKnob(*k, YAML::Clone(node), 1)) {
    f.knob = k->factor ? k->knob + " (x configured)" : k->knob;
    for (double v : k->values) {
      YAML::Node variant = YAML::Clone(node);
      SetKnob(*k, variant, v);
      variant["label"] = PointLabel(label, *k, v);
      out.push_back(variant);
      f.points.push_back({PointLabel(label, *k, v), v, 0, 0, false});
    }
  } else {
    if (k) {
      layout.notes.push_back(label + ": not swept (its " + k->knob +
                             " is not set in the compare entry, and the sweep scales it)");
    }
    out.push_back(entry);
    f.points.push_back({label, std::numeric_limits<double>::quiet_NaN(), 0, 0, false});
  }
  layout.families.push_back(std::move(f));
}

}  // namespace

const std::vector<SweepKnob>& SweepKnobs() {
  static const std::vector<SweepKnob> knobs = {
      {"hpa", "target", true, {0.25, 0.5, 0.75, 1, 1.5, 2}},
      {"kpa", "target", true, {0.25, 0.5, 0.75, 1, 1.5, 2}},
      {"predictive", "target_utilization", false, {0.4, 0.5, 0.6, 0.7, 0.8, 0.9}},
      {"slo", "headroom.prior", false, {0, 0.25, 0.5, 1, 2, 3}},
  };
  return knobs;
}

Result<SweepPlan> PlanSweep(const config::ConfigNode& root, const std::string& file) {
  try {
    YAML::Node doc = YAML::Clone(root.raw());
    YAML::Node spec = doc["spec"];
    const YAML::Node workloads = spec["workloads"];
    if (!workloads.IsSequence() || workloads.size() != 1) {
      return Status::Invalid(file + ": --sweep takes a scenario with one workload (this one has " +
                             std::to_string(workloads.IsSequence() ? workloads.size() : 0) + ")");
    }
    const YAML::Node own = workloads[0]["policy"];
    YAML::Node entries = spec["compare"];
    if (!entries.IsSequence()) {
      entries = YAML::Node(YAML::NodeType::Sequence);
      entries.push_back(own["name"]);
    }
    SweepPlan plan;
    YAML::Node expanded(YAML::NodeType::Sequence);
    for (const YAML::Node& e : entries) Expand(e, own, expanded, plan.layout);
    spec["compare"] = expanded;
    spec.remove("targets");
    YAML::Emitter em;
    em << doc;
    auto s = ParseScenario(em.c_str(), file);
    if (!s.ok()) return Status::Invalid("--sweep: the expanded scenario: " + s.status().message());
    plan.scenario = std::move(*s);
    return plan;
  } catch (const YAML::Exception& e) {
    return Status::Invalid(file + ": --sweep: " + e.what());
  }
}

report::Sweep CollectSweep(const report::Sweep& layout, const ScenarioResult& r) {
  std::map<std::string, const RunResult*> runs;
  for (const RunResult& run : r.runs) runs[run.policy] = &run;
  report::Sweep out = layout;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (report::SweepFamily& f : out.families) {
    for (report::SweepPoint& p : f.points) {
      const auto it = runs.find(p.label);
      const bool found = it != runs.end() && !it->second->workloads.empty();
      const report::WorkloadSummary* w = found ? &it->second->workloads.front().summary : nullptr;
      p.gpu_hours = w ? w->gpu_hours : nan;
      p.slo_attainment = w && w->serving ? w->serving->slo_attainment : nan;
      if (w && w->serving && std::isfinite(w->serving->slo.attainment)) {
        out.target = w->serving->slo.attainment;
      }
    }
  }
  report::JudgeSweep(out);
  return out;
}

}  // namespace aiscale::sim
