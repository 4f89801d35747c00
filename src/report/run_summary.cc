#include "report/run_summary.h"

#include <algorithm>
#include <cmath>

namespace aiscale::report {
namespace {

// NaN-aware max: a figure no workload has stays NaN.
double MaxOf(double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return std::max(a, b);
}

bool WorthShowing(const Decision& d) { return d.action != Action::kNone || d.vetoed; }

}  // namespace

std::string_view BaselineName(Baseline r) {
  switch (r) {
    case Baseline::kNone:
      return "none";
    case Baseline::kStatic:
      return "static";
    case Baseline::kStaticPeak:
      return "static-peak";
  }
  return "none";
}

WorkloadSummary RunSummary::Totals() const {
  if (workloads.size() == 1) {
    WorkloadSummary one = workloads[0];
    one.timeline.clear();
    return one;
  }
  WorkloadSummary t;
  t.name = "(all)";
  t.gpu_hours = 0;
  double util_weight = 0, util_sum = 0;
  for (const WorkloadSummary& w : workloads) {
    t.gpu_hours += w.gpu_hours;
    t.cost_usd += w.cost_usd;
    t.rescales += w.rescales;
    t.completion_time_s = MaxOf(t.completion_time_s, w.completion_time_s);
    t.max_failure_replacement_s =
        std::max(t.max_failure_replacement_s, w.max_failure_replacement_s);
    if (!std::isnan(w.mean_gpu_util)) {
      util_sum += w.gpu_hours * w.mean_gpu_util;
      util_weight += w.gpu_hours;
    }
    if (w.spot_cost_usd) t.spot_cost_usd = t.spot_cost_usd.value_or(0) + *w.spot_cost_usd;
  }
  if (util_weight > 0) t.mean_gpu_util = util_sum / util_weight;
  return t;
}

double RunSummary::RescalesPerHour() const {
  const WorkloadSummary t = Totals();
  const double hours = t.completion_time_s / 3600;
  return hours > 0 ? t.rescales / hours : kNoValue;
}

const WorkloadSummary* RunSummary::Workload(const std::string& name) const {
  for (const WorkloadSummary& w : workloads) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

const RunSummary* Report::FindBaseline(Baseline b) const {
  for (const RunSummary& r : runs) {
    if (r.baseline == b) return &r;
  }
  return nullptr;
}

std::vector<std::string> Report::WorkloadNames() const {
  std::vector<std::string> names;
  for (const RunSummary& r : runs) {
    for (const WorkloadSummary& w : r.workloads) {
      if (std::find(names.begin(), names.end(), w.name) == names.end()) names.push_back(w.name);
    }
  }
  return names;
}

DecisionDigest DigestDecisions(const std::vector<Decision>& decisions, size_t total) {
  DecisionDigest d;
  d.total = total;
  d.kept = decisions.size();
  for (const Decision& x : decisions) {
    ++d.by_rule[x.recommendation.rule.empty() ? "(none)" : x.recommendation.rule];
    ++d.by_action[std::string(ActionName(x.action))];
    if (!WorthShowing(x)) continue;
    if (d.shown.size() < kDecisionsShown) {
      d.shown.push_back(x);
    } else {
      ++d.not_shown;
    }
  }
  return d;
}

}  // namespace aiscale::report
