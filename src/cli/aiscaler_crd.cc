#include "cli/aiscaler_crd.h"

#include <cmath>
#include <regex>
#include <set>

#include "cli/aiscaler_spec.h"
#include "cli/controller_config.h"
#include "core/config/config_node.h"
#include "decide/pool_config.h"

namespace aiscale::cli {
namespace {

using config::FieldSchema;
using config::FieldType;
using nlohmann::json;
using Fields = std::map<std::string, FieldSchema>;

// One workload per policy, with every field set, so that every reader (and every branch of
// it) runs: the corpus the schema is recorded over. A reader's new field that no sample sets
// is caught below as "allowed but never read".
constexpr const char* kSamples[] = {
    R"(
name: hpa
kind: InferenceService
min_replicas: 1
max_replicas: 8
granularity: 1
scale_to_zero: false
staleness: 45s
cold_start: 2m
behavior:
  scaleUp:
    stabilizationWindowSeconds: 0
    selectPolicy: Max
    policies: [{type: Pods, value: 4, periodSeconds: 60}]
  scaleDown:
    stabilizationWindowSeconds: 300
    selectPolicy: Min
    policies: [{type: Percent, value: 25, periodSeconds: 60}]
policy:
  name: hpa
  tolerance: 0.1
  metrics:
    - {signal: concurrency, type: Pods, target: {type: AverageValue, value: 16}}
    - {signal: cpu_util, type: Resource, resource: cpu, request: 1,
       target: {type: Utilization, value: 70}}
    - {signal: queue_len, type: External, target: {type: Value, value: 10}}
signals:
  - {name: concurrency, source: prom, query: 'sum(x)', interval: 15s, timeout: 5s}
  - {name: cpu_util, source: prom}
  - {name: queue_len, source: prom}
)",
    R"(
name: kpa
kind: InferenceService
scale_to_zero: true
min_replicas: 0
policy:
  name: kpa
  signal: concurrency
  target: 10
  target_utilization: 0.7
  stable_window: 60s
  panic_window_percentage: 10
  panic_threshold_percentage: 200
  max_scale_up_rate: 1000
  max_scale_down_rate: 2
  activation_scale: 1
  scale_to_zero_grace_period: 30s
  allow_zero_initial_scale: false
  activation_signal: queue_len
signals: [{name: concurrency, source: prom}, {name: queue_len, source: prom}]
)",
    R"(
name: predictive
kind: InferenceService
policy:
  name: predictive
  signal: request_rate
  capacity_per_replica: 10
  target_utilization: 0.8
  reactive: {signal: concurrency, target: 4, aggregate: sum, window: 60s}
  bucket: 60s
  season: 1d
  long_season: 7d
  long_season_slot: 1h
  smoothing: {level: 10m, trend: 3h, damping: 3h, season: 0.1, long_season: 0.05,
              season_kernel: 1}
  quantile: 0.9
  margin: relative
  margin_window: 1d
  min_errors: 10
  lead: 5m
  scale_down_window: 10m
  scale_down_rate: 0.1
  idle_fraction: 0.1
signals: [{name: request_rate, source: prom}, {name: concurrency, source: prom}]
)",
    R"(
name: training
kind: TrainingJob
policy:
  name: training
  rescales_per_hour: 1
  rescale_burst: 2
  min_dwell: 15m
  restart_cost: 2m
  max_slowdown: 0.5
  gain_margin: 0.1
  grace_period: 5m
  warmup: 2m
  reference_replicas: 0
  expected_efficiency: 0.9
  compute_bound_util: 80
  load_util_max: 30
  idle_util_max: 5
  phase_hysteresis: 5
  phase_dwell: 1m
signals: [{name: samples_per_s, source: prom}, {name: samples_remaining, source: prom}]
)",
    R"(
name: static
kind: InferenceService
policy: {name: static, replicas: 2}
)",
    R"(
name: static-peak
kind: InferenceService
policy: {name: static-peak, replicas: 2}
)",
};

// Keys a reader knows only to refuse them with a better message (training's old `cooldown`
// and `min_epochs`): left out of the schema.
// A workload in a shared GPU pool (its fields are read only when the config has a `pool:`),
// read with kSamplePool.
constexpr const char* kPoolSample = R"(
name: pooled
kind: TrainingJob
min_replicas: 1
max_replicas: 8
tenant: research
priority: training
gpus_per_replica: 8
shrinkable: true
shrink_floor: 2
policy: {name: static, replicas: 2}
)";
constexpr const char* kSamplePool = R"(
pool:
  size: 64
  tenants: [{name: research, guaranteed: 16}, {name: prod, guaranteed: 32}]
)";

const std::set<std::string> kRefused = {"policy.cooldown", "policy.min_epochs"};
// The file's ways of naming a workload and its engine; an AIScaler has metadata and
// scaleTargetRef instead.
const std::set<std::string> kNotInSpec = {"name", "namespace", "target"};

// A sample as the `spec:` of a document, so recorded paths start with "spec.".
std::string AsSpec(const std::string& sample) {
  std::string out = "spec:";
  for (char c : sample) out += c == '\n' ? std::string("\n  ") : std::string(1, c);
  return out;
}

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// A bound as the schema states it: a whole number as an integer ("minimum: 1", not 1.0).
json Bound(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return static_cast<int64_t>(v);
  return v;
}

json Scalar(const std::string& path, const FieldSchema& f, std::vector<std::string>& problems) {
  const std::set<FieldType>& t = f.types;
  json s;
  if (t.count(FieldType::kDuration)) {
    // A number of seconds or "30s", "5m": as HPA-style durations are in other CRDs.
    if (t.size() > 2 || (t.size() == 2 && !t.count(FieldType::kString))) {
      problems.push_back(path + ": read as a duration and as something else");
    }
    return {{"x-kubernetes-int-or-string", true},
            {"anyOf", json::array({{{"type", "integer"}}, {{"type", "string"}}})}};
  }
  if (t == std::set<FieldType>{FieldType::kInteger}) {
    s["type"] = "integer";
  } else if (t == std::set<FieldType>{FieldType::kNumber} ||
             t == std::set<FieldType>{FieldType::kInteger, FieldType::kNumber}) {
    s["type"] = "number";
  } else if (t == std::set<FieldType>{FieldType::kString}) {
    s["type"] = "string";
    if (!f.enum_values.empty()) s["enum"] = f.enum_values;
  } else if (t == std::set<FieldType>{FieldType::kBoolean}) {
    s["type"] = "boolean";
  } else {
    problems.push_back(path + ": readers disagree on its type");
    return s;
  }
  if (f.numeric_reads > 0 && f.min_reads == f.numeric_reads && f.min) {
    s["minimum"] = Bound(*f.min);
    if (f.min_exclusive) s["exclusiveMinimum"] = true;
  }
  if (f.numeric_reads > 0 && f.max_reads == f.numeric_reads && f.max) s["maximum"] = Bound(*f.max);
  return s;
}

json SchemaAt(const std::string& path, const Fields& fields, std::vector<std::string>& problems) {
  const auto it = fields.find(path);
  if (it == fields.end()) {
    problems.push_back(path +
                       ": allowed by a reader but never read by a sample (add one to "
                       "kSamples in src/cli/aiscaler_crd.cc)");
    return json::object();
  }
  const FieldSchema& f = it->second;
  if (f.types.count(FieldType::kArray)) {
    return {{"type", "array"}, {"items", SchemaAt(path + "[]", fields, problems)}};
  }
  if (f.types.count(FieldType::kMap)) {
    return {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  }
  if (!f.types.count(FieldType::kObject)) return Scalar(path, f, problems);
  json s = {{"type", "object"}, {"properties", json::object()}};
  std::vector<std::string> required;
  for (const std::string& k : f.known) {
    const std::string child = Join(path, k);
    if (kRefused.count(child) || (path.empty() && kNotInSpec.count(k))) continue;
    s["properties"][k] = SchemaAt(child, fields, problems);
    const auto c = fields.find(child);
    if (c != fields.end() && c->second.required && c->second.required_reads >= f.object_reads) {
      required.push_back(k);
    }
  }
  if (!required.empty()) s["required"] = required;
  return s;
}

json ScaleTargetRef() {
  return {{"type", "object"},
          {"description",
           "What to scale: an object with a /scale subresource, as HPA's scaleTargetRef. "
           "Deployment, StatefulSet and PyTorchJob are known; another kind names its plural "
           "`resource` and `ready_path` under its status."},
          {"required", json::array({"kind", "name"})},
          {"properties",
           {{"apiVersion", {{"type", "string"}}},
            {"kind", {{"type", "string"}}},
            {"name", {{"type", "string"}}},
            {"resource", {{"type", "string"}}},
            {"ready_path", {{"type", "string"}}},
            {"gpu_capacity", {{"type", "boolean"}}}}}};
}

json StatusSchema() {
  const json condition = {
      {"type", "object"},
      {"required", json::array({"type", "status"})},
      {"properties",
       {{"type", {{"type", "string"}}},
        {"status", {{"type", "string"}, {"enum", {"True", "False", "Unknown"}}}},
        {"reason", {{"type", "string"}}},
        {"message", {{"type", "string"}}},
        {"lastTransitionTime", {{"type", "string"}, {"format", "date-time"}}}}}};
  const json metric = {{"type", "object"},
                       {"required", json::array({"name", "status"})},
                       {"properties",
                        {{"name", {{"type", "string"}}},
                         {"status", {{"type", "string"}}},
                         {"value", {{"type", "number"}}},
                         {"instances", {{"type", "integer"}}}}}};
  return {{"type", "object"},
          {"properties",
           {{"observedGeneration", {{"type", "integer"}, {"format", "int64"}}},
            {"reference", {{"type", "string"}}},
            {"currentReplicas", {{"type", "integer"}, {"format", "int32"}}},
            {"desiredReplicas", {{"type", "integer"}, {"format", "int32"}}},
            {"lastScaleTime", {{"type", "string"}, {"format", "date-time"}}},
            {"targets", {{"type", "string"}}},
            {"currentMetrics", {{"type", "array"}, {"items", metric}}},
            {"conditions",
             {{"type", "array"},
              {"items", condition},
              {"x-kubernetes-list-type", "map"},
              {"x-kubernetes-list-map-keys", json::array({"type"})}}}}}};
}

json PrinterColumns() {
  const auto col = [](const char* name, const char* type, const char* path, const char* d) {
    return json{{"name", name}, {"type", type}, {"jsonPath", path}, {"description", d}};
  };
  return json::array(
      {col("Reference", "string", ".status.reference", "The scaled object, Kind/name."),
       col("Targets", "string", ".status.targets", "Each signal's current/target value."),
       col("Min", "integer", ".spec.min_replicas", "min_replicas"),
       col("Max", "integer", ".spec.max_replicas", "max_replicas"),
       col("Replicas", "integer", ".status.currentReplicas", "Replicas the target has."),
       col("Age", "date", ".metadata.creationTimestamp", "")});
}

// The spec: the workload's recorded schema with scaleTargetRef in place of target, the
// defaults of the bounds, and the policy names the registry knows.
Result<json> SpecSchema() {
  ASSIGN_OR_RETURN(Fields fields, RecordWorkloadSchema());
  std::vector<std::string> problems;
  json spec = SchemaAt("", fields, problems);
  if (!problems.empty()) {
    std::string all;
    for (const std::string& p : problems) all += "\n  " + p;
    return Status::Internal("the AIScaler schema cannot be generated from the readers:" + all);
  }
  spec["properties"]["scaleTargetRef"] = ScaleTargetRef();
  spec["required"] = json::array({"scaleTargetRef", "policy"});
  for (const char* bound : {"min_replicas", "max_replicas"}) {
    const FieldSchema& f = fields.at(bound);
    if (f.fallbacks.size() == 1) {
      spec["properties"][bound]["default"] = std::stoi(*f.fallbacks.begin());
    }
  }
  ASSIGN_OR_RETURN(WorkloadRegistries reg, WorkloadRegistries::Default());
  spec["properties"]["policy"]["properties"]["name"]["enum"] = reg.policies.Names();
  spec["properties"]["kind"]["description"] =
      "The workload's kind as aiscale reports it (InferenceService, TrainingJob); default: "
      "scaleTargetRef.kind.";
  spec["description"] =
      "A workload as a controller config file's spec.workloads entry (docs/kubernetes.md), "
      "with scaleTargetRef instead of name, namespace and target.";
  return spec;
}

}  // namespace

Result<Fields> RecordWorkloadSchema() {
  ASSIGN_OR_RETURN(WorkloadRegistries reg, WorkloadRegistries::Default());
  std::vector<SourceSpec> sources(1);
  sources[0].name = "prom";
  config::SchemaRecorder recorder("spec");
  for (const char* sample : kSamples) {
    config::ConfigErrors errors;
    errors.set_recorder(&recorder);
    const config::ConfigNode root = config::ParseConfig(AsSpec(sample), "sample", errors);
    ParseWorkloadEntry(root.Child("spec"), reg, 15, sources);
    if (!errors.empty()) {
      return Status::Internal("a CRD sample does not read: " + errors.ToStatus().message());
    }
  }
  config::ConfigErrors pool_errors;  // the pool's own fields are not a workload's: not recorded
  const PoolSpec pool =
      decide::ParsePool(config::ParseConfig(kSamplePool, "sample pool", pool_errors).Child("pool"));
  config::ConfigErrors errors;
  errors.set_recorder(&recorder);
  const config::ConfigNode root = config::ParseConfig(AsSpec(kPoolSample), "sample", errors);
  ParseWorkloadEntry(root.Child("spec"), reg, 15, sources, &pool);
  if (!errors.empty() || !pool_errors.empty()) {
    return Status::Internal("the CRD's pool sample does not read: " +
                            (errors.empty() ? pool_errors : errors).ToStatus().message());
  }
  return recorder.fields();
}

Result<json> AiScalerCrd() {
  ASSIGN_OR_RETURN(json spec, SpecSchema());
  const json schema = {{"type", "object"},
                       {"required", json::array({"spec"})},
                       {"properties",
                        {{"apiVersion", {{"type", "string"}}},
                         {"kind", {{"type", "string"}}},
                         {"metadata", {{"type", "object"}}},
                         {"spec", spec},
                         {"status", StatusSchema()}}}};
  const json version = {{"name", kAiScalerVersion},
                        {"served", true},
                        {"storage", true},
                        {"subresources", {{"status", json::object()}}},
                        {"additionalPrinterColumns", PrinterColumns()},
                        {"schema", {{"openAPIV3Schema", schema}}}};
  return json{{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata",
               {{"name", std::string(kAiScalerPlural) + "." + kAiScalerGroup},
                {"labels", {{"app.kubernetes.io/name", "aiscale"}}}}},
              {"spec",
               {{"group", kAiScalerGroup},
                {"scope", "Namespaced"},
                {"names",
                 {{"kind", kAiScalerKind},
                  {"listKind", std::string(kAiScalerKind) + "List"},
                  {"plural", kAiScalerPlural},
                  {"singular", "aiscaler"},
                  {"shortNames", json::array({"ais"})},
                  {"categories", json::array({"autoscaling"})}}},
                {"versions", json::array({version})}}}};
}

namespace {

bool Plain(const std::string& s) {
  static const std::regex kSafe("[A-Za-z_/][A-Za-z0-9_./-]*");
  static const std::set<std::string> kReserved = {"true", "false", "null", "yes",  "no",    "on",
                                                  "off",  "y",     "n",    "True", "False", "Null",
                                                  "Yes",  "No",    "On",   "Off"};
  return std::regex_match(s, kSafe) && !kReserved.count(s);
}

std::string ScalarText(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    return Plain(s) ? s : v.dump();
  }
  return v.dump();
}

void Emit(const json& v, int indent, std::string& out);

void EmitValue(const json& v, int indent, std::string& out) {
  if ((v.is_object() || v.is_array()) && !v.empty()) {
    out += "\n";
    Emit(v, indent, out);
  } else if (v.is_object()) {
    out += " {}\n";
  } else if (v.is_array()) {
    out += " []\n";
  } else {
    out += " " + ScalarText(v) + "\n";
  }
}

void Emit(const json& v, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (v.is_object()) {
    for (const auto& [k, child] : v.items()) {
      out += pad + (Plain(k) ? k : json(k).dump()) + ":";
      EmitValue(child, indent + 2, out);
    }
    return;
  }
  for (const json& item : v) {
    if (item.is_object() && !item.empty()) {
      std::string nested;
      Emit(item, indent + 2, nested);
      out += pad + "- " + nested.substr(indent + 2);
    } else {
      out += pad + "-";
      EmitValue(item, indent + 2, out);
    }
  }
}

}  // namespace

std::string ToYaml(const json& doc, const std::string& header_comment) {
  std::string out;
  size_t start = 0;
  while (start < header_comment.size()) {
    const size_t nl = header_comment.find('\n', start);
    const size_t end = nl == std::string::npos ? header_comment.size() : nl;
    const std::string line = header_comment.substr(start, end - start);
    out += (line.empty() ? "#" : "# " + line) + "\n";
    start = end + 1;
  }
  Emit(doc, 0, out);
  return out;
}

}  // namespace aiscale::cli
