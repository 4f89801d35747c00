#include "decide/training/size_planner.h"

#include <algorithm>

namespace aiscale::decide {
namespace {

constexpr double kSlackS = 1e-6;

// The cheapest feasible plan; when none is feasible, the fastest. nullopt for an empty list.
std::optional<Plan> Cheapest(const std::vector<Plan>& plans) {
  std::optional<Plan> best;
  for (const Plan& p : plans) {
    if (!best) {
      best = p;
    } else if (p.feasible != best->feasible) {
      if (p.feasible) best = p;
    } else if (p.feasible ? p.cost_node_s < best->cost_node_s : p.time_s < best->time_s) {
      best = p;
    }
  }
  return best;
}

// A growth onto lent GPUs: n while the loan lasts (at least its own restart), then a restart back
// to what the job holds without it. nullopt when the move is not onto lent GPUs, or the job
// would finish within the loan.
std::optional<Plan> LentPlan(const PlanInput& in, int n, double remaining) {
  const int back = std::max(in.current, in.lease_from);
  if (!in.lease_s || n <= back || back < 1) return std::nullopt;
  const double sw = in.restart_s;
  const double lease = std::max(*in.lease_s, sw);
  const double done = (lease - sw) / in.y_job(n);
  if (done >= remaining) return std::nullopt;
  Plan p;
  p.first = n;
  p.then = back;
  const double after = sw + (remaining - done) * in.y_job(back);
  p.time_s = lease + after;
  p.cost_node_s = n * lease + back * after;
  p.restart_node_s = n * sw;
  return p;
}

}  // namespace

PlanResult PlanSize(const PlanInput& in) {
  PlanResult r;
  const double remaining = std::max(0.0, in.remaining_samples);
  r.deadline_s = (1 + in.max_slowdown) * (in.elapsed_ref_s + remaining * in.y_job(in.reference));
  // Phase plans also spend a sample-less phase's time, which the remaining samples do not
  // price; the reference would spend it too.
  double phase_deadline = r.deadline_s;
  if (in.phase && !in.phase->trains) {
    phase_deadline +=
        (1 + in.max_slowdown) * std::max(0.0, in.phase->work) * in.phase->y(in.reference);
  }
  // A shrink must spare shrink_safety of its time; staying may use stay_slack past the
  // deadline. The band between them keeps a drift of a few percent (a busier machine) or the
  // readings' noise from undoing a shrink that was within the budget, and a grow for time
  // from being undone in turn.
  auto check = [&](Plan& p, double deadline) {
    double spare = 0;
    if (p.first < in.current) spare = in.shrink_safety * p.time_s;
    if (p.first == in.current && p.then == in.current) {
      spare = -std::max(in.shrink_safety, in.stay_slack) * p.time_s;
    }
    p.feasible = in.elapsed_wall_s + p.time_s + spare <= deadline + kSlackS;
    return p;
  };
  const double job_deadline = r.deadline_s;
  auto finish = [&](Plan& p) { return check(p, job_deadline); };
  if (in.phase) r.deadline_s = phase_deadline;  // what the chosen and stay plans are held to
  std::vector<int> sizes = in.sizes;
  if (std::find(sizes.begin(), sizes.end(), in.current) == sizes.end()) {
    sizes.push_back(in.current);
  }

  auto job_plan = [&](int n) {
    Plan p;
    p.first = p.then = n;
    const double sw = n != in.current ? in.restart_s : 0;
    p.time_s = sw + remaining * in.y_job(n);
    p.cost_node_s = n * p.time_s;
    p.restart_node_s = n * sw;
    if (const std::optional<Plan> lent = LentPlan(in, n, remaining)) {
      p = *lent;
    }
    return finish(p);
  };
  std::vector<Plan> job;
  for (int n : sizes) job.push_back(job_plan(n));
  r.job_best = Cheapest(job)->first;

  std::vector<Plan> plans = job;
  if (in.phase) {
    // n for the rest of the phase, then the job-level best.
    const PhaseSegment& ph = *in.phase;
    const int back_to = r.job_best;
    const double work = std::max(0.0, ph.trains ? std::min(remaining, ph.work) : ph.work);
    plans.clear();
    for (int n : sizes) {
      Plan p;
      p.first = n;
      p.then = back_to;
      const double sw = n != in.current ? in.restart_s : 0;
      double t1 = work * ph.y(n);
      const double rest = ph.trains ? remaining - work : remaining;
      // A phase-sized change must be undone when the phase ends, so the phase has to outlast
      // the dwell and the budget's refill; otherwise it is a job-level change in disguise (the
      // phase's size would last into the next phase).
      if (n != back_to && n != in.current && sw + t1 < in.return_wait_s) continue;
      const double back = (n != back_to && rest > 0) ? in.restart_s : 0;
      const double t2 = back + rest * in.y_job(back_to);
      p.time_s = sw + t1 + t2;
      p.cost_node_s = n * (sw + t1) + back_to * t2;
      p.restart_node_s = n * sw;
      plans.push_back(check(p, phase_deadline));
    }
  }

  std::vector<Plan> changes;
  for (const Plan& p : plans) {
    if (p.first == in.current) {
      r.stay = p;
    } else {
      changes.push_back(p);
    }
  }
  const std::optional<Plan> change = Cheapest(changes);
  if (!change) {
    // No other size is allowed (capacity, the pool's room): staying is best only if it is in
    // time; otherwise the Decision must say that no allowed size finishes sooner.
    r.verdict = r.stay.feasible ? PlanVerdict::kHoldAtBest : PlanVerdict::kHoldNoBetterSize;
    return r;
  }
  r.chosen = *change;
  r.has_change = true;
  r.phase_driven = in.phase && change->first != r.job_best;

  if (r.stay.feasible) {
    // Both finish in time: the change must save more node-seconds than it burns restarting.
    if (!change->feasible || change->cost_node_s >= r.stay.cost_node_s) {
      r.verdict = PlanVerdict::kHoldAtBest;
      return r;
    }
    r.gain = r.stay.cost_node_s - (change->cost_node_s - change->restart_node_s);
    r.needed = (1 + in.gain_margin) * change->restart_node_s;
  } else {
    // Staying is too slow: the change must win back more time than its restart takes.
    if (change->time_s >= r.stay.time_s) {
      r.verdict = PlanVerdict::kHoldNoBetterSize;
      return r;
    }
    const double sw = in.restart_s;
    r.gain = r.stay.time_s - (change->time_s - sw);
    r.needed = (1 + in.gain_margin) * sw;
  }
  r.verdict = r.gain > r.needed ? PlanVerdict::kRescale : PlanVerdict::kHoldGainTooSmall;
  return r;
}

}  // namespace aiscale::decide
