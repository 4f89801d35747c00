// Frontier: the cost/SLO trade-off of each policy swept over its main knob (`aiscale simulate
// --sweep`), and whether one policy's frontier dominates another's.
//
// A point is one run: its GPU-hours and its SLO attainment. A point is on its family's frontier
// when no other point of the family attains at least as much for no more GPU-hours, better in
// one of the two. Policy A dominates policy B when every point of B is matched by a point of A
// that attains at least as much for no more GPU-hours: at every SLO level B reaches, A reaches
// it too and costs no more. A point without an attainment (no requests) is on no frontier and
// matches nothing. Pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

namespace aiscale::report {

struct SweepPoint {
  std::string label;  // the run's label
  double value = 0;   // the knob's value (a factor of the configured one when the knob says so)
  double gpu_hours = 0;
  double slo_attainment = 0;  // NaN: no requests, no attainment
  bool frontier = false;
};

struct SweepFamily {
  std::string label;   // the compare entry swept
  std::string policy;  // its policy
  std::string knob;    // what was varied, e.g. "target (x configured)"; empty: one point
  std::vector<SweepPoint> points;
};

struct Dominance {
  std::string policy;  // family label of A
  std::string over;    // family label of B
  bool dominates = false;
  std::vector<std::string> unmatched;  // B's points no point of A matches
};

struct Sweep {
  double target = 0;  // the service's SLO attainment target (0: none known)
  std::vector<SweepFamily> families;
  std::vector<Dominance> dominance;  // every ordered pair of swept families of two policies
  std::vector<std::string> notes;    // what was not swept, and why
};

// Whether the point has both figures (a run with no requests has no attainment).
bool HasFigures(const SweepPoint& p);
// Marks each point of `f` that is on its frontier.
void MarkFrontier(SweepFamily& f);
// Whether `a`'s points match every point of `b` (see above); b's unmatched points named.
Dominance Dominates(const SweepFamily& a, const SweepFamily& b);
// The index of f's cheapest point attaining at least `target`; -1 when none does.
int CheapestMeeting(const SweepFamily& f, double target);
// That in words, as the CLI and report.html print it: "the cheapest run that attains 0.9900 is
// L (12.3 GPU-hours)" or "no run attains 0.9900". Not escaped.
std::string CheapestLine(const SweepFamily& f, double target);
// Marks every family's frontier and judges every ordered pair of swept families whose
// policies differ.
void JudgeSweep(Sweep& s);

}  // namespace aiscale::report
