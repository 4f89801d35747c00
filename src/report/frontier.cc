#include "report/frontier.h"

#include <cmath>

#include "report/format.h"

namespace aiscale::report {
namespace {

// p attains at least as much as q for no more GPU-hours.
bool Matches(const SweepPoint& p, const SweepPoint& q) {
  return HasFigures(p) && HasFigures(q) && p.slo_attainment >= q.slo_attainment &&
         p.gpu_hours <= q.gpu_hours;
}

}  // namespace

bool HasFigures(const SweepPoint& p) {
  return std::isfinite(p.slo_attainment) && std::isfinite(p.gpu_hours);
}

void MarkFrontier(SweepFamily& f) {
  for (SweepPoint& p : f.points) {
    p.frontier = HasFigures(p);
    for (const SweepPoint& q : f.points) {
      const bool better = q.slo_attainment > p.slo_attainment || q.gpu_hours < p.gpu_hours;
      if (&q != &p && Matches(q, p) && better) p.frontier = false;
    }
  }
}

Dominance Dominates(const SweepFamily& a, const SweepFamily& b) {
  Dominance d{a.label, b.label, true, {}};
  for (const SweepPoint& q : b.points) {
    if (!HasFigures(q)) continue;
    bool matched = false;
    for (const SweepPoint& p : a.points) matched = matched || Matches(p, q);
    if (!matched) d.unmatched.push_back(q.label);
  }
  d.dominates = d.unmatched.empty();
  return d;
}

int CheapestMeeting(const SweepFamily& f, double target) {
  int best = -1;
  for (size_t i = 0; i < f.points.size(); ++i) {
    const SweepPoint& p = f.points[i];
    if (!HasFigures(p) || p.slo_attainment < target) continue;
    if (best < 0 || p.gpu_hours < f.points[static_cast<size_t>(best)].gpu_hours) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::string CheapestLine(const SweepFamily& f, double target) {
  const int best = CheapestMeeting(f, target);
  if (best < 0) return "no run attains " + FormatFixed(target, 4);
  const SweepPoint& p = f.points[static_cast<size_t>(best)];
  return "the cheapest run that attains " + FormatFixed(target, 4) + " is " + p.label + " (" +
         FormatFixed(p.gpu_hours, 1) + " GPU-hours)";
}

void JudgeSweep(Sweep& s) {
  s.dominance.clear();
  for (SweepFamily& f : s.families) MarkFrontier(f);
  for (const SweepFamily& a : s.families) {
    for (const SweepFamily& b : s.families) {
      // Two entries of one policy (hpa and hpa-queue) are settings of it, not rivals.
      if (a.policy == b.policy || a.knob.empty() || b.knob.empty()) continue;
      s.dominance.push_back(Dominates(a, b));
    }
  }
}

}  // namespace aiscale::report
