// SizePlanner: rule 4 of the training policy as arithmetic. Given the predicted seconds per
// sample at each size, it prices every "move to n now" plan for the rest of the job and picks
// the cheapest one that finishes within the slowdown budget, or says why staying is better.
//
// A plan's cost is node-seconds (GPU-hours / GPUs per node); a size change costs restart_s of
// wall time at the new size (released nodes stop billing at once; new ones bill through the
// restart). The budget is cumulative: completion = wall time so far + plan time must stay
// within (1 + max_slowdown) x (reference-equivalent time so far + the rest at the reference
// size), so restarts and slow stretches already paid for use it up. With a phase segment (the
// current phase's expected remaining work and its own speed curve), a plan runs n for the rest
// of the phase, then the job-level best size; a phase shorter than return_wait_s (dwell, budget)
// gets no plan of its own, since its size could not be undone when it ends. A growth onto GPUs
// lent by others lasts as long as such loans last (lease_s), then restarts back. Pure functions
// of the input.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace aiscale::decide {

// Seconds per sample at n nodes; must be positive for every candidate.
using SecondsPerSampleFn = std::function<double(int)>;

struct PhaseSegment {
  std::string phase;  // for reasons
  // Training phase: expected remaining work in samples, y = its seconds per sample. A phase
  // without training samples (load from storage, eval): work = expected remaining seconds at
  // the current size, y = its duration at n relative to the current size; samples stay.
  bool trains = true;
  double work = 0;
  SecondsPerSampleFn y;
};

struct PlanInput {
  int current = 0;
  int reference = 0;
  std::vector<int> sizes;  // allowed sizes (granularity, min, capacity applied)
  double remaining_samples = 0;
  SecondsPerSampleFn y_job;  // the job's phase mix
  std::optional<PhaseSegment> phase;
  double restart_s = 0;
  // A phase-sized change must outlast this before it can be undone (min dwell, and the time
  // the rescale budget needs to pay for the way back).
  double return_wait_s = 0;
  double max_slowdown = 0;
  double gain_margin = 0;
  double elapsed_wall_s = 0;  // since the job started (as seen by the policy)
  double elapsed_ref_s = 0;   // the same work at the reference size
  // A move to fewer nodes must leave this share of its predicted time as spare budget, so a
  // shrink that is feasible by a hair is not undone an hour later by model drift; staying is
  // feasible up to the larger of this and stay_slack past the deadline (a band, not a line,
  // between shrinking and growing for time; stay_slack widens it by the readings' noise).
  double shrink_safety = 0;
  double stay_slack = 0;
  // In a shared pool, sizes above lease_from run on GPUs lent by other tenants, which the pool
  // takes back after lease_s on average (PoolLoans). A growth past both lease_from and the
  // current size is then priced as that size for lease_s and a restart back to the larger of
  // the two, not as that size to the end. nullopt: nothing lent is expected back.
  int lease_from = 0;
  std::optional<double> lease_s;
};

struct Plan {
  int first = 0;      // size now
  int then = 0;       // size after the phase segment (== first without one)
  double time_s = 0;  // wall time to finish, restarts included
  double cost_node_s = 0;
  double restart_node_s = 0;  // the change now, in node-seconds (0 when first == current)
  bool feasible = false;
};

enum class PlanVerdict { kRescale, kHoldAtBest, kHoldGainTooSmall, kHoldNoBetterSize };

struct PlanResult {
  PlanVerdict verdict = PlanVerdict::kHoldAtBest;
  Plan stay;    // keep the current size now
  Plan chosen;  // the best plan with a change now (valid when `has_change`)
  bool has_change = false;
  bool phase_driven = false;  // chosen.first differs from the job-level best size
  int job_best = 0;           // job-level best size (no phase segment)
  double deadline_s = 0;      // latest acceptable completion of the plans compared, from job start
  double gain = 0;            // node-seconds (stay feasible) or seconds (stay too slow)
  double needed = 0;          // (1 + margin) x the change's restart cost, same unit
};

PlanResult PlanSize(const PlanInput& in);

}  // namespace aiscale::decide
