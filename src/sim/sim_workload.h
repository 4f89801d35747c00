// SimWorkload: one simulated workload (a training job, an inference service): its engine
// side (what an Actuator sees) and its metrics side (what a MetricSource sees).
//
// Why: SimSource and SimActuator are the only bridge between the simulator and the real
// Controller (docs/architecture.md, "The simulator"); they route by workload key to a SimWorkload,
// so every kind of workload plugs into the same runner and report. All times come from the
// EventQueue the workload was started on. Single-threaded, like the simulator.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/observation.h"
#include "core/result.h"
#include "core/scale.h"
#include "report/run_summary.h"
#include "report/timeline.h"
#include "sim/event_queue.h"

namespace aiscale::sim {

class SimWorkload {
 public:
  virtual ~SimWorkload() = default;
  virtual const WorkloadRef& ref() const = 0;
  // Schedules the workload's own events (arrivals, phase changes) on q.
  virtual void Start(EventQueue& q) = 0;
  // Before Start: the size the run begins at, in place of WorkloadEnv::initial_replicas (an
  // offline baseline's size, known only once the workload has read its own data).
  virtual void SetInitialReplicas(int n) = 0;
  // True when there is nothing left to simulate (job finished, trace replayed and drained).
  virtual bool Done() const = 0;

  // Engine side, as an Actuator would see it.
  virtual Result<ScaleState> Observe() = 0;
  virtual Status Apply(int desired) = 0;
  // Both tiers (Actuator::ApplyTiers); workloads without a warm tier accept only asleep == 0.
  virtual Status ApplyTiers(int awake, int asleep) {
    if (asleep == 0) return Apply(awake);
    return Status::Invalid("unable to keep replicas of " + ref().Key() +
                           " asleep: the simulated workload has no warm tier");
  }

  // Metrics side: current observations of one signal, stamped with their measurement time,
  // as a real exporter would report them (empty when the workload does not emit it).
  virtual std::vector<Observation> Signal(std::string_view name, TimePoint now) = 0;

  // Whole-run figures (report/run_summary.h); the runner adds the name and the timeline.
  virtual report::WorkloadSummary Summary() const = 0;
  // One timeline point, sampled by the runner every report interval.
  virtual report::TimelinePoint TimelinePoint(TimePoint now) const = 0;

  // Seconds from asking for a bigger size until the new size does work (provisioning plus
  // restart cost for training, plus model load for inference): the policy's cold_start_s.
  virtual double ColdStartSeconds() const { return 0; }
  // Figures of the kind the typed report has no field for yet (a GpuDemand tenant's GPU-minutes,
  // sim/demand/gpu_demand.h), read by the comparison that needs them; null when none.
  virtual nlohmann::json KindFigures() const { return nullptr; }
  // GPUs one replica holds (a training node's GPUs, an inference replica's), for a shared pool.
  virtual int GpusPerReplica() const { return 1; }
  // Fraction of the workload's work done, 0-1, for progress display; negative when the
  // workload has no natural end (a service replaying a trace measures by time instead).
  virtual double Progress() const { return -1; }
  // The size an offline baseline named `baseline` (e.g. "static-peak") runs this workload at,
  // computed from the workload's own data; nullopt when the kind has no such baseline.
  virtual std::optional<int> BaselineReplicas(std::string_view baseline) const {
    (void)baseline;
    return std::nullopt;
  }
};

}  // namespace aiscale::sim
