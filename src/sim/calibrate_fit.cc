// FitModel: the calibrated job's model terms, as far as the run determines them (calibrate.h).
#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "sim/calibrate.h"

namespace aiscale::sim {
namespace {

// "at world size 1, 2" (built by appending: GCC 12 warns on "literal" + a temporary).
std::string AtSizes(const std::map<int, double>& by_size) {
  std::string s = "at world size ";
  bool first = true;
  for (const auto& [n, v] : by_size) {
    if (!first) s.append(", ");
    s.append(std::to_string(n));
    first = false;
  }
  return s;
}

std::string Note(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s.append(p);
  return s;
}

void FitThroughput(Calibration& c) {
  // Nested models: k world sizes determine at most k terms, taken in this order.
  const size_t terms = std::min<size_t>(c.samples_per_s.size(), 3);
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& [n, sps] : c.samples_per_s) {
    const std::vector<double> row = {static_cast<double>(c.batch) / n, (n - 1.0) / n,
                                     2.0 * (n - 1)};
    x.emplace_back(row.begin(), row.begin() + terms);
    y.push_back(c.batch / sps);
  }
  const std::vector<double> b = FitNonNegative(x, y);
  c.sample_compute_s = b.empty() ? 0 : b[0];
  c.sync_s = terms >= 2 ? b[1] : 0;
  c.hop_s = terms >= 3 ? b[2] : 0;
  const std::string seen = AtSizes(c.samples_per_s);
  if (terms < 2) {
    c.not_determined.push_back(Note({"all-reduce (sync) time: throughput measured ", seen,
                                     " only; default none (inter_node_gb_per_s at the schema's "
                                     "maximum, 1e6)"}));
  }
  if (terms < 3) {
    c.not_determined.push_back(
        Note({"per-hop latency: throughput measured ", seen, " (it needs 3 sizes); default 0"}));
  }
}

void FitEval(Calibration& c) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& [n, len] : c.eval_s) {
    x.push_back({1.0, 1.0 / n});  // serial first: one size alone cannot tell them apart
    y.push_back(std::max(0.0, len - 2.0 * (n - 1) * c.hop_s / n));
  }
  if (x.empty()) return;
  const std::vector<double> b = FitNonNegative(x, y);
  c.eval_serial_s = b[0];
  c.eval_parallel_s = b[1];
  if (c.eval_s.size() < 2) {
    c.not_determined.push_back(Note({"eval split: evals ", AtSizes(c.eval_s),
                                     " only; all of it taken as serial (no size shortens it)"}));
  }
}

}  // namespace

void FitModel(Calibration& c) {
  FitThroughput(c);
  FitEval(c);
  // Bounded here so nothing written can leave the schema (the scenario's validator).
  bool clamped = false;
  BandwidthForSync(c.sync_s, &clamped);
  if (clamped) {
    c.not_determined.push_back(Note({"all-reduce (sync) time of ", std::to_string(c.sync_s),
                                     " s: beyond what inter_node_gb_per_s within [1e-6, 1e6] "
                                     "gives; written at the nearest bound"}));
  }
  c.sample_compute_s = std::clamp(c.sample_compute_s, 0.0, kMaxSampleS);
  c.hop_s = std::clamp(c.hop_s, 0.0, kMaxSampleS);
  c.eval_parallel_s = std::clamp(c.eval_parallel_s, 0.0, kMaxSampleS);
}

}  // namespace aiscale::sim
