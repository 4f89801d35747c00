#include "sim/scenario.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/utf8.h"

#include "decide/pipeline.h"
#include "decide/policy_registry.h"
#include "decide/pool_config.h"
#include "sim/event_queue.h"
#include "sim/noise.h"
#include "sim/report_files.h"
#include "sim/run_budget.h"
#include "sim/scenario_pool.h"
#include "sim/workload_factory.h"

namespace aiscale::sim {
namespace {

// The scenario's workload fields: the shared ones (decide::CommonWorkloadFields) but
// cold_start, which the simulated workload's own model says; plus initial_replicas.
std::vector<std::string> ScenarioWorkloadFields() {
  std::vector<std::string> out;
  for (const auto& f : decide::CommonWorkloadFields()) {
    if (f != "cold_start") out.push_back(f);
  }
  out.push_back("initial_replicas");
  return out;
}

config::ConfigNode Synthesized(YAML::Node n, const std::string& path, const std::string& file,
                               config::ConfigErrors* errors) {
  return config::ConfigNode(std::move(n), path, std::make_shared<const std::string>(file), errors);
}

// `what` = duration / interval must stay within `limit` (docs/limits.md), checked at `key`.
void CheckCount(const config::ConfigNode& spec, const std::string& key, double duration_s,
                double interval_s, int64_t limit, const std::string& what) {
  if (!spec.Has(key) && !spec.Has("duration")) return;
  const double n = duration_s / interval_s;
  if (n > static_cast<double>(limit)) {
    spec.ErrorAt(spec.Has(key) ? key : "duration",
                 "duration / " + key + " = " + std::to_string(static_cast<int64_t>(n)) + " " +
                     what + " per run; at most " + std::to_string(limit) +
                     " (docs/limits.md): use a longer " + key + " or a shorter duration");
  }
}

// The run budget that the spec's own numbers determine (docs/limits.md).
void CheckRunBudget(const config::ConfigNode& spec, const Scenario& s) {
  CheckCount(spec, "control_period", s.duration_s, s.control_period_s, kMaxControlTicksPerRun,
             "control ticks");
  CheckCount(spec, "report_interval", s.duration_s, s.report_interval_s, kMaxTimelinePoints,
             "timeline points");
  CheckCount(spec, "scrape_interval", s.duration_s, s.scrape_interval_s, kMaxScrapesPerRun,
             "scrapes");
  if (s.report_interval_s > s.duration_s && spec.Has("report_interval")) {
    spec.ErrorAt("report_interval", "report_interval (" + std::to_string(s.report_interval_s) +
                                        " s) must be <= duration (" + std::to_string(s.duration_s) +
                                        " s)");
  }
  double expected = 0;
  for (const auto& f : s.failures) {
    expected += f.rate_per_node_hour * s.cluster.nodes * (s.duration_s / 3600.0);
  }
  if (expected > kMaxExpectedFailures) {
    spec.ErrorAt("failures",
                 "failures expected over the run: rate_per_node_hour x nodes x hours = " +
                     std::to_string(static_cast<int64_t>(expected)) + "; at most " +
                     std::to_string(static_cast<int64_t>(kMaxExpectedFailures)) +
                     " (docs/limits.md)");
  }
}

// Reads spec into `s`; every problem goes to the nodes' error sink.
void ReadSpec(const config::ConfigNode& root, Scenario& s) {
  config::CheckHeader(root, {"Scenario"});
  root.CheckKnown({"apiVersion", "kind", "metadata", "spec"});
  const config::ConfigNode spec = root.Child("spec");
  if (!spec.IsDefined()) {
    root.Error("spec is required");
    return;
  }
  spec.CheckKnown({"name", "seed", "duration", "control_period", "report_interval",
                   "scrape_interval", "noise", "cluster", "failures", "workloads", "compare",
                   "pool", "targets"});
  s.name = spec.RequiredString("name");
  s.seed = static_cast<uint64_t>(spec.Number("seed", 1, config::Between(0, 9007199254740992.0)));
  s.duration_s = spec.DurationSeconds("duration", s.duration_s, config::Above(0));
  s.control_period_s = spec.DurationSeconds("control_period", s.control_period_s, config::Above(0));
  s.report_interval_s =
      spec.DurationSeconds("report_interval", s.report_interval_s, config::Above(0));
  s.scrape_interval_s =
      spec.DurationSeconds("scrape_interval", s.scrape_interval_s, config::Above(0));
  s.noise = spec.Number("noise", s.noise, config::Between(0, 0.5));
  s.targets = report::ParseTargets(spec.Child("targets"));
  if (!spec.Has("cluster")) spec.Error("cluster is required");
  s.cluster = ClusterConfig::Parse(spec.Child("cluster"));
  s.failures = FailureSpec::ParseList(spec.Child("failures"));
  ReadScenarioPool(spec, s);
  CheckRunBudget(spec, s);

  const config::ConfigNode workloads = spec.Child("workloads");
  const auto items = workloads.Items();
  if (!workloads.IsDefined() || (workloads.IsSequence() && items.empty())) {
    spec.Error("workloads must list at least one workload");
  }
  std::set<std::string> names;
  int64_t initial_total = 0;  // of ints each <= kMaxReplicaCount: no overflow
  for (const auto& w : items) {
    ScenarioWorkload sw{"", "", 1, false, w, {}};
    // The same reader the controller config uses, so min > max and granularity errors read
    // alike; staleness defaults to 3 scrape intervals in both.
    sw.spec = decide::ReadWorkloadFields(w, s.scrape_interval_s);
    ReadScenarioMembership(w, s, sw.spec);
    sw.name = sw.spec.ref.name;
    sw.kind = sw.spec.ref.kind;
    const WorkloadKind* kind = FindWorkloadKind(sw.kind);
    std::vector<std::string> known = ScenarioWorkloadFields();
    known.insert(known.end(), decide::PoolWorkloadFields().begin(),
                 decide::PoolWorkloadFields().end());
    if (kind) {
      known.push_back(kind->body_field);
    } else if (w.Has("kind")) {
      std::string list;
      for (const auto& k : WorkloadKinds()) list += (list.empty() ? "" : ", ") + k.kind;
      w.ErrorAt("kind", "unknown workload kind '" + sw.kind + "' (known: " + list + ")");
    }
    w.CheckKnown(known);
    if (!sw.name.empty() && !names.insert(sw.name).second) {
      w.ErrorAt("name", "workload name '" + sw.name + "' is used twice");
    }
    const WorkloadSpec& cc = sw.spec;
    sw.initial_auto = w.Child("initial_replicas").raw().IsScalar() &&
                      w.Child("initial_replicas").raw().Scalar() == "auto";
    if (sw.initial_auto && sw.kind != "InferenceService") {
      w.ErrorAt("initial_replicas",
                "auto sizes an InferenceService from its trace's first interval; a " + sw.kind +
                    " needs a number");
    }
    sw.initial_replicas = sw.initial_auto ? std::max(cc.min_replicas, 1)
                                          : w.Int("initial_replicas", std::max(cc.min_replicas, 1),
                                                  config::AtLeast(0));
    if (cc.min_replicas <= cc.max_replicas &&
        (sw.initial_replicas < cc.min_replicas || sw.initial_replicas > cc.max_replicas)) {
      w.ErrorAt("initial_replicas", "initial_replicas " + std::to_string(sw.initial_replicas) +
                                        " must be within [min_replicas, max_replicas] = [" +
                                        std::to_string(cc.min_replicas) + ", " +
                                        std::to_string(cc.max_replicas) + "]");
    } else if (cc.granularity > 0 && sw.initial_replicas % cc.granularity != 0) {
      w.ErrorAt("initial_replicas", "initial_replicas " + std::to_string(sw.initial_replicas) +
                                        " is not a multiple of granularity " +
                                        std::to_string(cc.granularity));
    }
    // Child() of an absent key is an invalid yaml-cpp node: ask IsDefined() before IsMap().
    if (!w.Child("policy").IsDefined() || !w.Child("policy").IsMap()) {
      w.ErrorAt("policy", "policy must be a map with a name, e.g. {name: training}");
    }
    initial_total += sw.initial_replicas;
    s.workloads.push_back(sw);
  }
  if (initial_total > s.cluster.nodes && spec.Child("cluster").IsDefined()) {
    spec.Child("cluster").ErrorAt("nodes", "the cluster has " + std::to_string(s.cluster.nodes) +
                                               " nodes but the workloads start on " +
                                               std::to_string(initial_total));
  }
  const std::vector<config::ConfigNode> compare = spec.Child("compare").Items();
  if (compare.size() > static_cast<size_t>(kMaxComparedPolicies)) {
    spec.ErrorAt("compare", "lists " + std::to_string(compare.size()) + " policies; at most " +
                                std::to_string(kMaxComparedPolicies) +
                                " (each is a run of the whole scenario)");
  }
  // The first compare entry to write each decision-log file, by file name.
  std::map<std::string, size_t> log_owner;
  for (size_t i = 0; i < compare.size() && i < static_cast<size_t>(kMaxComparedPolicies); ++i) {
    const config::ConfigNode& c = compare[i];
    // Read before a policy entry's map loses its `label` and `pool` below.
    std::optional<PoolSpec> pool = PoolForEntry(c, s);
    if (c.raw().IsScalar()) {
      if (!IsValidUtf8(c.raw().Scalar())) {
        c.Error("a compare entry must be valid UTF-8 text");
        continue;
      }
      s.compare.push_back(c.raw().Scalar());
    } else if (c.IsMap() && c.Has("name")) {
      // `label` names the run in the report (two hpa configurations side by side); it is the
      // scenario's, not the policy's, so it is taken off before the policy reads its fields.
      const std::string name = c.RequiredString("name");
      std::string label = c.Has("label") ? c.String("label", "") : name;
      if (label.empty()) {
        c.ErrorAt("label", "must not be empty");
        label = name;
      }
      YAML::Node shared = c.raw();  // shares the tree: the policy then sees no label
      shared.remove("label");
      shared.remove("pool");
      s.compare.push_back(label);
    } else if (IsPerWorkloadEntry(c)) {
      CheckPerWorkloadEntry(c, s);
      s.compare.push_back(c.String("label", ""));
    } else {
      c.Error(
          "a compare entry is a policy name, a policy map with a name, or a map with a "
          "label and each workload's policy (workloads:)");
      continue;
    }
    s.compare_nodes.push_back(c);
    s.compare_pools.push_back(std::move(pool));
    // Two labels that map to one decision-log file would overwrite each other's log.
    const std::string& label = s.compare.back();
    const auto [owner, first] = log_owner.emplace(DecisionLogFileName(label), s.compare.size() - 1);
    if (!first && s.compare[owner->second] != label) {
      c.Error("label '" + label + "' and the compare entry at line " +
              std::to_string(s.compare_nodes[owner->second].raw().Mark().line + 1) + " ('" +
              s.compare[owner->second] + "') would both write " + owner->first +
              "; give one another label");
    }
  }
  for (const auto& f : s.failures) {
    if (!f.workload.empty() && !names.count(f.workload)) {
      spec.Child("failures")
          .Error("failure names workload '" + f.workload + "', which is not in spec.workloads");
    }
  }
}

// A pooled workload's GPUs per replica come from its model (a training node's GPUs, an
// inference replica's); a `gpus_per_replica` that says otherwise is an error there.
void PlaceInPool(ScenarioWorkload& w, const SimWorkload& built) {
  const int model = built.GpusPerReplica();
  if (w.node.Has("gpus_per_replica") && w.spec.pool.gpus_per_replica != model) {
    w.node.ErrorAt("gpus_per_replica", "the model's replica holds " + std::to_string(model) +
                                           " GPUs, not " +
                                           std::to_string(w.spec.pool.gpus_per_replica));
  }
  w.spec.pool.gpus_per_replica = model;
}

// The run starts with every workload's initial replicas on the pool's GPUs.
void CheckInitialFit(const config::ConfigNode& spec, const Scenario& s) {
  int64_t held = 0;
  for (const ScenarioWorkload& w : s.workloads) {
    held += int64_t{w.initial_replicas} * w.spec.pool.gpus_per_replica;
  }
  if (s.pool->size && held > *s.pool->size) {
    spec.Child("pool").ErrorAt("size", "the workloads start on " + std::to_string(held) +
                                           " GPUs, more than the pool's " +
                                           std::to_string(*s.pool->size));
  }
}

// Builds every workload and every compared policy once, so config errors in them surface now;
// keeps the pipelines (each workload's own, and every planned run's).
void CheckBuilds(Scenario& s, const config::ConfigNode& root) {
  if (!root.errors()->empty()) return;  // the parts may not exist; report the first layer
  auto registry = decide::PolicyRegistry::Default();
  if (!registry.ok()) {
    root.Error(registry.status().message());
    return;
  }
  const auto names = registry->Names();
  auto check = [&](const config::ConfigNode& c) {
    const std::string name = c.raw().IsScalar() ? c.raw().Scalar() : c.String("name", "");
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      c.Error("unknown policy '" + name + "' (known: " + list + ")");
    }
  };
  for (const auto& c : s.compare_nodes) {
    if (!IsPerWorkloadEntry(c)) {
      check(c);
      continue;
    }
    for (const auto& [workload, policy] : c.Child("workloads").Entries()) check(policy);
  }
  if (!root.errors()->empty()) return;
  EventQueue q;
  Cluster cluster(s.cluster, q, s.seed);
  for (auto& w : s.workloads) {
    const WorkloadKind* kind = FindWorkloadKind(w.kind);
    if (!kind) continue;
    WorkloadEnv env{w.name,   w.initial_replicas, s.seed, s.scrape_interval_s, s.noise,
                    &cluster, s.report_interval_s};
    auto built = kind->build(w.node, env);
    if (built) w.spec.cold_start_s = built->ColdStartSeconds();
    if (built && s.pool) PlaceInPool(w, *built);
  }
  if (s.pool) CheckInitialFit(root.Child("spec"), s);
  if (!root.errors()->empty()) return;
  // Each workload's own policy, whether or not `compare` runs it.
  for (auto& w : s.workloads) {
    auto p = decide::BuildPipeline(*registry, w.node, w.node.Child("policy"), s.control_period_s,
                                   w.spec.cold_start_s);
    if (p.ok()) w.spec.pipeline = std::move(p).value();
  }
  if (!root.errors()->empty()) return;
  // Policies named only in `compare` get synthesized nodes with no place in the file; their
  // errors go to a scratch sink and are reported at the compare entry.
  config::ConfigErrors scratch;
  auto runs = s.PlanRuns({}, &scratch);
  if (!runs.ok()) return;
  for (size_t p = 0; p < runs->size(); ++p) {
    PolicyRun& run = (*runs)[p];
    for (size_t i = 0; i < s.workloads.size(); ++i) {
      const size_t before = scratch.size();
      auto pipeline = decide::BuildPipeline(*registry, s.workloads[i].node, run.policy_nodes[i],
                                            s.control_period_s, s.workloads[i].spec.cold_start_s);
      if (pipeline.ok()) run.pipelines.push_back(std::move(pipeline).value());
      for (size_t e = before; e < scratch.size() && p < s.compare_nodes.size(); ++e) {
        s.compare_nodes[p].Error("policy '" + run.label + "' for workload " + s.workloads[i].name +
                                 ": " + scratch.all()[e].path + ": " + scratch.all()[e].message +
                                 " (give it as a map with its fields, or set it as the "
                                 "workload's policy)");
      }
    }
  }
  if (root.errors()->empty()) s.planned = std::move(runs).value();
}

Result<Scenario> FromRoot(const config::ConfigNode& root,
                          std::shared_ptr<config::ConfigErrors> errs, const std::string& file) {
  Scenario s;
  s.errors = std::move(errs);
  s.file = file;
  if (root.IsDefined()) ReadSpec(root, s);
  if (s.errors->empty()) CheckBuilds(s, root);
  if (!s.errors->empty()) return s.errors->ToStatus();
  return s;
}

}  // namespace

Result<std::vector<PolicyRun>> Scenario::Runs(const std::vector<std::string>& policies,
                                              config::ConfigErrors* synth_errors) const {
  if (policies.empty() && !planned.empty()) return planned;
  if (!synth_errors) synth_errors = errors.get();
  auto runs = PlanRuns(policies, synth_errors);
  if (!runs.ok()) return runs.status();
  auto registry = decide::PolicyRegistry::Default();
  if (!registry.ok()) return registry.status();
  for (PolicyRun& run : *runs) {
    for (size_t i = 0; i < workloads.size(); ++i) {
      auto p = decide::BuildPipeline(*registry, workloads[i].node, run.policy_nodes[i],
                                     control_period_s, workloads[i].spec.cold_start_s);
      if (!p.ok()) {
        return Status::Invalid(p.status().message() + "\n" + synth_errors->ToStatus().message());
      }
      run.pipelines.push_back(std::move(p).value());
    }
  }
  return runs;
}

// The compare entry (by index) that `--policy name` selects: the entry labelled `name`, or
// -1 when none is; an error listing what may be asked for when the name is nothing the
// scenario knows (issue 27 §5: `--policy kpa` silently ran a default KPA instead of the
// scenario's own kpa entry).
Result<int> Scenario::CompareIndexOf(const std::string& name) const {
  for (size_t i = 0; i < compare.size(); ++i) {
    if (compare[i] == name) return static_cast<int>(i);
  }
  std::set<std::string> own;
  for (const auto& w : workloads) {
    const config::ConfigNode p = w.node.Child("policy");
    if (p.IsDefined()) own.insert(p.String("name", ""));
  }
  if (name == "static" || own.count(name)) return -1;
  // A policy the scenario does not configure runs with its defaults (trying a new policy on a
  // scenario); one it configures always runs as configured (above).
  auto registry = decide::PolicyRegistry::Default();
  std::string policies;
  if (registry.ok()) {
    for (const std::string& p : registry->Names()) {
      if (p == name) return -1;
      policies += (policies.empty() ? "" : ", ") + p;
    }
  }
  std::string known;
  for (const std::string& c : compare) known += (known.empty() ? "" : ", ") + c;
  for (const std::string& o : own) {
    if (std::find(compare.begin(), compare.end(), o) == compare.end() && !o.empty()) {
      known += (known.empty() ? "" : ", ") + o;
    }
  }
  if (std::find(compare.begin(), compare.end(), "static") == compare.end()) {
    known += (known.empty() ? "" : ", ") + std::string("static");
  }
  return Status::Invalid("unknown policy '" + name + "' for --policy: " + file + " compares " +
                         known + " (by label), and any policy (" + policies +
                         ") runs with its defaults");
}

Result<std::vector<PolicyRun>> Scenario::PlanRuns(const std::vector<std::string>& policies,
                                                  config::ConfigErrors* synth_errors) const {
  if (!synth_errors) synth_errors = errors.get();
  std::vector<PolicyRun> out;
  std::vector<std::string> names = policies;
  std::vector<int> entries;  // per name: the compare entry it runs, or -1
  for (const std::string& n : names) {
    ASSIGN_OR_RETURN(const int i, CompareIndexOf(n));
    entries.push_back(i);
  }
  if (names.empty() && !compare.empty()) {
    names = compare;
    for (size_t i = 0; i < compare.size(); ++i) entries.push_back(static_cast<int>(i));
  }
  if (names.empty()) {
    // docs/architecture.md: reports compare the configured policy with static at the configured
    // size.
    if (workloads.empty()) return Status::Error("unable to plan runs: no workloads");
    const config::ConfigNode own = workloads[0].node.Child("policy");
    names = {own.IsDefined() ? own.String("name", "static") : "static", "static"};
    if (names[0] == "static") names.pop_back();
    entries.assign(names.size(), -1);
  }
  std::set<std::string> labels;
  for (size_t p = 0; p < names.size(); ++p) {
    const int entry = entries[p];  // the compare entry this run is, or -1
    const size_t e = static_cast<size_t>(entry);
    const bool per_workload = entry >= 0 && IsPerWorkloadEntry(compare_nodes[e]);
    // A scalar compare entry is a policy name with its defaults, as in the full run.
    const bool entry_map = entry >= 0 && !per_workload && compare_nodes[e].IsMap();
    const std::string name = entry_map ? compare_nodes[e].String("name", names[p]) : names[p];
    PolicyRun run;
    run.label = names[p];
    for (int k = 2; labels.count(run.label); ++k) run.label = names[p] + "-" + std::to_string(k);
    labels.insert(run.label);
    const std::string path = "policy:" + name;
    run.pool = entry >= 0 && e < compare_pools.size() ? compare_pools[e] : pool;
    if (per_workload) run.role = compare_nodes[e].String("role", "");
    // A run of `static` (or `static-peak`) for every workload is the report's baseline; a
    // per-workload entry, whatever its label, is a configuration under test.
    const std::string policy = per_workload ? std::string() : name;
    run.baseline = policy == "static"        ? report::Baseline::kStatic
                   : policy == "static-peak" ? report::Baseline::kStaticPeak
                                             : report::Baseline::kNone;
    for (const auto& w : workloads) {
      std::string wname = name;  // the policy this run gives workload w
      run.start_at_static.push_back(false);
      if (per_workload) {
        const std::optional<config::ConfigNode> chosen = EntryPolicyFor(compare_nodes[e], w.name);
        if (chosen && chosen->IsMap()) {
          run.start_at_static.back() = chosen->String("name", "") == "static";
          run.policy_nodes.push_back(*chosen);
          continue;
        }
        if (!chosen) {  // a workload the entry does not name keeps its own policy as written
          run.policy_nodes.push_back(w.node.Child("policy"));
          continue;
        }
        wname = chosen->raw().Scalar();
      } else if (entry_map) {
        run.policy_nodes.push_back(compare_nodes[e]);
        continue;
      }
      const config::ConfigNode own = w.node.Child("policy");
      if (wname == "static") {
        YAML::Node n;
        n["name"] = "static";
        n["replicas"] = w.initial_replicas;
        run.policy_nodes.push_back(Synthesized(n, path, file, synth_errors));
      } else if (own.IsDefined() && own.String("name", "") == wname) {
        run.policy_nodes.push_back(own);
      } else {
        YAML::Node n;
        n["name"] = wname;
        run.policy_nodes.push_back(Synthesized(n, path, file, synth_errors));
      }
    }
    out.push_back(std::move(run));
  }
  return out;
}

Result<Scenario> ParseScenario(const std::string& text, const std::string& file) {
  auto errs = std::make_shared<config::ConfigErrors>();
  config::ConfigNode root = config::ParseConfig(text, file, *errs);
  return FromRoot(root, errs, file);
}

Result<Scenario> LoadScenario(const std::string& path) {
  auto errs = std::make_shared<config::ConfigErrors>();
  config::ConfigNode root = config::LoadConfigFile(path, *errs);
  return FromRoot(root, errs, path);
}

Status ValidateScenario(const config::ConfigNode& root) {
  const size_t before = root.errors()->size();
  Scenario s;
  // Non-owning: the caller owns the sink; Runs() synthesizes nodes that report into it.
  s.errors = std::shared_ptr<config::ConfigErrors>(std::shared_ptr<void>(), root.errors());
  if (root.IsDefined()) ReadSpec(root, s);
  if (root.errors()->size() == before) {
    s.file = "<validate>";
    CheckBuilds(s, root);
  }
  if (root.errors()->size() > before) {
    return Status::Error("scenario has " + std::to_string(root.errors()->size() - before) +
                         " error(s)");
  }
  return Status::Ok();
}

}  // namespace aiscale::sim
