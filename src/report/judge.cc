#include "report/judge.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "report/format.h"
#include "report/serving_verdict.h"
#include "report/training_verdict.h"

namespace aiscale::report {
namespace {

// "Beats static": at least 1% cheaper and at most 10% slower. The definition of the
// comparison, not a target; targets live in the scenario.
constexpr double kCheaperBelow = 0.99;
constexpr double kSlowerAtMost = 1.10;

// The most frequent rules first, at most `n`, as " rule count, rule count".
std::string TopRules(const DecisionDigest& d, size_t n) {
  std::vector<std::pair<int, std::string>> rules;
  for (const auto& [rule, count] : d.by_rule) rules.push_back({count, rule});
  std::sort(rules.rbegin(), rules.rend());
  std::string out;
  for (size_t i = 0; i < rules.size() && i < n; ++i) {
    out += (i ? ", " : " ") + rules[i].second + " " + std::to_string(rules[i].first);
  }
  return out;
}

std::vector<PeerRun> Peers(const Report& r, const std::string& workload) {
  std::vector<PeerRun> peers;
  for (const RunSummary& run : r.runs) {
    peers.push_back({run.label, run.policy, run.baseline, run.Workload(workload)});
  }
  return peers;
}

}  // namespace

BaselineVerdict CompareToStatic(const RunSummary& run, const RunSummary& st) {
  const WorkloadSummary a = run.Totals(), b = st.Totals();
  const double g = a.gpu_hours, gs = b.gpu_hours;
  const double t = a.completion_time_s, ts = b.completion_time_s;
  BaselineVerdict v;
  v.gpu_hours_ratio = gs > 0 ? g / gs : 0;
  v.completion_ratio = ts > 0 && !std::isnan(t) ? t / ts : 0;
  const bool cheaper = gs > 0 && g < kCheaperBelow * gs;
  const bool fast_enough = !(ts > 0) || t <= kSlowerAtMost * ts;
  v.beats = cheaper && fast_enough;
  if (v.beats) return v;
  std::string why;
  if (!cheaper)
    why += "GPU-hours " + FormatFixed(v.gpu_hours_ratio, 3) + "x static (not below 0.99x)";
  if (!fast_enough) {
    why += std::string(cheaper ? "" : "; ") + "completion " + FormatFixed(v.completion_ratio, 3) +
           "x static (over 1.10x)";
  }
  why += "; " + std::to_string(a.rescales) +
         " rescales; decisions by rule:" + TopRules(run.decisions, 4);
  v.why_not = why;
  return v;
}

void Judge(Report& r, const Targets& t) {
  const RunSummary* st = r.FindBaseline(Baseline::kStatic);
  for (RunSummary& run : r.runs) {
    if (st != nullptr && &run != st) run.vs_static = CompareToStatic(run, *st);
  }
  for (RunSummary& run : r.runs) {
    if (run.baseline != Baseline::kNone) continue;
    for (WorkloadSummary& w : run.workloads) {
      const WorkloadSummary* static_w = st != nullptr ? st->Workload(w.name) : nullptr;
      if (w.training) {
        w.verdict = JudgeTraining(w, static_w, t);
      } else if (w.serving) {
        w.verdict = JudgeServing(w, run.label, Peers(r, w.name), t);
      }
    }
  }
}

}  // namespace aiscale::report
