#include "sim/runner.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include "control/assembler.h"
#include "control/controller.h"
#include "core/utf8.h"
#include "decide/allocator.h"
#include "sim/cluster.h"
#include "sim/event_queue.h"
#include "sim/noise.h"
#include "sim/pool_report.h"
#include "sim/run_budget.h"
#include "sim/sim_actuator.h"
#include "sim/sim_pool.h"
#include "sim/sim_source.h"
#include "sim/tenant_report.h"
#include "sim/workload_factory.h"

namespace aiscale::sim {
namespace {

// Everything one simulation owns; members are destroyed in reverse order, so the Controller
// goes before the workloads and the cluster it reaches through the bridge.
struct Simulation {
  EventQueue q;
  std::unique_ptr<Cluster> cluster;
  std::vector<std::unique_ptr<SimWorkload>> workloads;
  WorkloadDirectory dir;
  std::unique_ptr<SimPool> pool;  // the shared GPU pool's engine side, when the run has one
  decide::Allocator allocator;
  std::unique_ptr<SimSource> source;
  std::unique_ptr<SimActuator> actuator;
  std::unique_ptr<control::Controller> controller;
  std::vector<std::vector<report::TimelinePoint>> timelines;
  bool finished = false;
};

bool AllDone(const Simulation& sim) {
  for (const auto& w : sim.workloads) {
    if (!w->Done()) return false;
  }
  return true;
}

double WorkFraction(const Simulation& sim, double duration_s) {
  double f = 1;
  bool known = false;
  for (const auto& w : sim.workloads) {
    const double p = w->Progress();
    if (p >= 0) {
      f = std::min(f, p);
      known = true;
    }
  }
  return known ? f : SinceEpochSeconds(sim.q.Now()) / duration_s;
}

// The GPUs workload i's tenant is guaranteed when it is that tenant's only workload; else -1.
int64_t SoleTenantGuarantee(const Scenario& s, const PoolSpec& pool, size_t i) {
  const std::string& tenant = s.workloads[i].spec.pool.tenant;
  const int t = pool.TenantIndex(tenant);
  if (t < 0) return -1;
  for (size_t k = 0; k < s.workloads.size(); ++k) {
    if (k != i && s.workloads[k].spec.pool.tenant == tenant) return -1;
  }
  return pool.tenants[static_cast<size_t>(t)].guaranteed;
}

// The idealized run of a pool comparison: reclaims free and instant (sim/tenant_report.h).
bool FreeRestarts(const PolicyRun& run) { return run.role == "free_borrowing"; }

}  // namespace

Result<RunResult> RunPolicy(const Scenario& s, const PolicyRun& run, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  Simulation sim;
  sim.q.set_event_limit(opt.event_limit);
  if (run.pipelines.size() != s.workloads.size()) {
    return Status::Internal("unable to run " + run.label + ": its pipelines were not built");
  }
  sim.cluster = std::make_unique<Cluster>(s.cluster, sim.q, s.seed);
  sim.cluster->ScheduleFailures(s.failures, AtSeconds(s.duration_s));
  std::vector<int> initial;  // each workload's size at the start of this run
  // The pool's engine side exists before the workloads, which may look at it; they are added
  // to it once their initial sizes are known.
  if (run.pool) sim.pool = std::make_unique<SimPool>(run.pool->size.value_or(0), sim.q);
  for (const auto& w : s.workloads) {
    const WorkloadKind* kind = FindWorkloadKind(w.kind);
    if (!kind) return Status::Error("unable to run " + w.name + ": unknown kind " + w.kind);
    WorkloadEnv env{w.name,
                    w.initial_replicas,
                    SplitMix64(s.seed ^ HashName(w.name)),
                    s.scrape_interval_s,
                    s.noise,
                    sim.cluster.get(),
                    s.report_interval_s,
                    opt.cache.get()};
    if (run.pool) {
      env.pool = sim.pool.get();
      env.guaranteed_gpus = SoleTenantGuarantee(s, *run.pool, sim.workloads.size());
    }
    env.free_restarts = FreeRestarts(run);
    env.duration_s = s.duration_s;
    auto built = kind->build(w.node, env);
    if (!built) return s.errors->ToStatus().Wrap("unable to build workload " + w.name);
    // Sizes from the workload's own data: static-peak (the run starts warm at it and the
    // policy holds the size it starts at) and `initial_replicas: auto` (the first interval's
    // need, within min/max). The built workload is resized in place, so its trace is read and
    // its oracle computed once.
    const size_t wi = sim.workloads.size();
    const bool peak = run.pipelines[wi].name == "static-peak";
    int built_initial = w.initial_replicas;
    // A compare entry's static size is held from the start, as static-peak's is.
    if (wi < run.start_at_static.size() && run.start_at_static[wi] &&
        run.policy_nodes[wi].Has("replicas")) {
      built_initial = std::clamp(run.policy_nodes[wi].Int("replicas", w.initial_replicas),
                                 w.spec.min_replicas, w.spec.max_replicas);
      built->SetInitialReplicas(built_initial);
    }
    if (peak || w.initial_auto) {
      const char* baseline = peak ? "static-peak" : "warm-start";
      std::optional<int> n = built->BaselineReplicas(baseline);
      if (!n) {
        return Status::Error("unable to run " + run.label + ": " + w.name + " has no " + baseline +
                             " size (only an InferenceService sizes one)");
      }
      if (!peak) n = std::clamp(*n, std::max(w.spec.min_replicas, 1), w.spec.max_replicas);
      built->SetInitialReplicas(*n);
      built_initial = *n;
    }
    RETURN_IF_ERROR(sim.dir.Add(built.get()));
    initial.push_back(built_initial);
    sim.workloads.push_back(std::move(built));
    sim.timelines.emplace_back();
  }
  if (run.pool) {
    int64_t starts = 0;
    for (size_t i = 0; i < s.workloads.size(); ++i) {
      starts += int64_t{initial[i]} * s.workloads[i].spec.pool.gpus_per_replica;
    }
    if (starts > run.pool->size.value_or(0)) {
      return Status::Invalid("unable to run " + run.label + ": its workloads start on " +
                             std::to_string(starts) + " GPUs, more than the pool's " +
                             std::to_string(run.pool->size.value_or(0)));
    }
    for (size_t i = 0; i < s.workloads.size(); ++i) {
      sim.pool->Add(sim.workloads[i].get(), s.workloads[i].spec.pool.gpus_per_replica, initial[i]);
    }
  }
  sim.source = std::make_unique<SimSource>(sim.dir);
  sim.actuator = std::make_unique<SimActuator>(sim.dir, sim.pool.get());
  const Duration period = Seconds(s.control_period_s);
  control::ControllerOptions copt;
  copt.collect_interval = period;  // signals read once per tick, just before it
  copt.fetch_timeout = period;
  copt.stamp_wall_time = false;  // virtual time only in simulator logs
  sim.controller = std::make_unique<control::Controller>(sim.q.clock(), nullptr, copt);
  const bool allocate = run.pool && run.pool->allocate;
  if (allocate) {
    RETURN_IF_ERROR(sim.controller->SetPool(*run.pool, sim.pool.get(), &sim.allocator));
  }
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    WorkloadSpec spec = s.workloads[i].spec;
    spec.ref = sim.workloads[i]->ref();
    if (FreeRestarts(run)) spec.cold_start_s = 0;  // no restart to hold a regrowth for
    control::SourceLookup sources{nullptr, sim.source.get()};
    ASSIGN_OR_RETURN(control::WorkloadBinding b,
                     control::Assemble(spec, run.pipelines[i], sources, sim.actuator.get(),
                                       allocate ? &*run.pool : nullptr));
    RETURN_IF_ERROR(sim.controller->Add(std::move(b)));
  }
  for (auto& w : sim.workloads) w->Start(sim.q);

  RunResult out;
  out.policy = run.label;
  out.role = run.role;
  out.policy_name = run.pipelines.empty() ? run.label : run.pipelines[0].name;
  out.baseline = run.baseline;
  const Duration report = Seconds(s.report_interval_s);
  double next_progress_s = opt.progress_every_sim_s;

  auto sample = [&sim] {
    for (size_t i = 0; i < sim.workloads.size(); ++i) {
      sim.timelines[i].push_back(sim.workloads[i]->TimelinePoint(sim.q.Now()));
    }
  };
  std::function<void()> sample_event = [&] {
    sample();
    if (!sim.finished) sim.q.After(report, sample_event);
  };
  // The collector is its own queue event, armed right before each tick at the same time, so
  // signals are read as the tick begins (no other event falls between the two).
  std::function<void()> collect = [&] { sim.controller->Collect(); };
  std::function<void()> tick = [&] {
    if (AllDone(sim)) {  // finished since the last tick: nothing left to decide
      sim.finished = true;
      sim.q.Stop();
      return;
    }
    for (Decision& d : sim.controller->Tick()) {
      ++out.decisions_total;
      if (out.decisions.size() < opt.decision_log_limit) out.decisions.push_back(std::move(d));
    }
    const double now_s = SinceEpochSeconds(sim.q.Now());
    if (opt.on_progress && now_s >= next_progress_s) {
      next_progress_s += opt.progress_every_sim_s;
      opt.on_progress({run.label, now_s, WorkFraction(sim, s.duration_s), false});
    }
    if (AllDone(sim)) {
      sim.finished = true;
      sim.q.Stop();
      return;
    }
    sim.q.After(period, collect);
    sim.q.After(period, tick);
  };
  sim.q.At(TimePoint{}, sample_event);
  sim.q.After(period, collect);
  sim.q.After(period, tick);
  sim.q.RunUntil(AtSeconds(s.duration_s));
  if (sim.q.budget_exceeded()) {
    return Status::Invalid(
        "run budget exceeded: more than " + std::to_string(opt.event_limit) +
        " simulator events by t = " + std::to_string(SinceEpochSeconds(sim.q.Now())) + " s of " +
        std::to_string(s.duration_s) +
        " s (docs/limits.md); shorten the duration or lengthen the "
        "control_period, report_interval or scrape_interval");
  }
  out.cut = !AllDone(sim);
  sim.finished = true;
  out.end_s = SinceEpochSeconds(sim.q.Now());
  sample();
  for (size_t i = 0; i < sim.workloads.size(); ++i) {
    WorkloadRun w{sim.workloads[i]->ref().name, sim.workloads[i]->Summary(),
                  std::move(sim.timelines[i]), sim.workloads[i]->KindFigures()};
    w.summary.name = w.name;
    out.workloads.push_back(std::move(w));
  }
  if (sim.pool) out.pool = sim.pool->Summary();
  if (opt.on_progress) {
    opt.on_progress({run.label, out.end_s, WorkFraction(sim, s.duration_s), true});
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return out;
}

Result<ScenarioResult> RunScenario(const Scenario& s, const RunOptions& opt) {
  auto runs = s.Runs(opt.policies);
  if (!runs.ok()) return runs.status();
  ScenarioResult r;
  r.scenario = s.name;
  r.file = ToValidUtf8(s.file);  // a path from argv: the JSON report needs UTF-8 text
  r.seed = s.seed;
  r.duration_limit_s = s.duration_s;
  RunOptions shared = opt;
  if (!shared.cache) shared.cache = std::make_shared<RunCache>();
  r.targets = s.targets;
  for (const auto& run : *runs) {
    auto one = RunPolicy(s, run, shared);
    if (!one.ok()) return one.status().Wrap("unable to run policy " + run.label);
    r.runs.push_back(std::move(one).value());
  }
  if (s.pool) r.tenant_comparison = TenantComparison(s, r);
  if (s.pool && r.tenant_comparison.is_null()) r.pool_comparison = PoolComparison(s, r);
  return r;
}

}  // namespace aiscale::sim
