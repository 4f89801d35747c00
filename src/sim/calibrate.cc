#include "sim/calibrate.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace aiscale::sim {
namespace {

// Solves a (k x k) system by Gaussian elimination with partial pivoting; false when singular.
bool Solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& out) {
  const size_t k = b.size();
  for (size_t c = 0; c < k; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < k; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    }
    double scale = 0;
    for (size_t r = 0; r < k; ++r) scale = std::max(scale, std::abs(a[r][c]));
    if (std::abs(a[p][c]) <= 1e-10 * std::max(scale, 1e-300)) return false;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (size_t r = c + 1; r < k; ++r) {
      const double f = a[r][c] / a[c][c];
      for (size_t j = c; j < k; ++j) a[r][j] -= f * a[c][j];
      b[r] -= f * b[c];
    }
  }
  out.assign(k, 0);
  for (size_t c = k; c-- > 0;) {
    double s = b[c];
    for (size_t j = c + 1; j < k; ++j) s -= a[c][j] * out[j];
    out[c] = s / a[c][c];
  }
  return true;
}

// The least-squares fit of y on the columns in `mask` (normal equations); false when singular
// or when a coefficient is negative.
bool FitSubset(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
               unsigned mask, std::vector<double>& coef) {
  std::vector<size_t> cols;
  for (size_t c = 0; c < x[0].size(); ++c) {
    if (mask & (1u << c)) cols.push_back(c);
  }
  const size_t k = cols.size();
  std::vector<std::vector<double>> ata(k, std::vector<double>(k, 0));
  std::vector<double> aty(k, 0);
  for (size_t r = 0; r < x.size(); ++r) {
    for (size_t i = 0; i < k; ++i) {
      aty[i] += x[r][cols[i]] * y[r];
      for (size_t j = 0; j < k; ++j) ata[i][j] += x[r][cols[i]] * x[r][cols[j]];
    }
  }
  std::vector<double> b;
  if (!Solve(ata, aty, b)) return false;
  coef.assign(x[0].size(), 0);
  for (size_t i = 0; i < k; ++i) {
    if (b[i] < -1e-12) return false;
    coef[cols[i]] = std::max(b[i], 0.0);
  }
  return true;
}

}  // namespace

std::vector<double> FitNonNegative(const std::vector<std::vector<double>>& x,
                                   const std::vector<double>& y) {
  if (x.empty() || x[0].empty() || x[0].size() > 4) return {};
  const size_t cols = x[0].size();
  std::vector<double> best(cols, 0);
  double best_res = 0;
  for (double v : y) best_res += v * v;  // all zero
  // Subsets by size, so an exact fit with fewer parameters wins a tie (the simpler model).
  for (size_t size = 1; size <= cols; ++size) {
    for (unsigned mask = 1; mask < (1u << cols); ++mask) {
      if (static_cast<size_t>(std::popcount(mask)) != size) continue;
      std::vector<double> coef;
      if (!FitSubset(x, y, mask, coef)) continue;
      double res = 0;
      for (size_t r = 0; r < x.size(); ++r) {
        double p = 0;
        for (size_t c = 0; c < cols; ++c) p += x[r][c] * coef[c];
        res += (p - y[r]) * (p - y[r]);
      }
      if (res < best_res - 1e-12 * std::max(1.0, best_res)) {
        best_res = res;
        best = coef;
      }
    }
  }
  return best;
}

JobEventLog ParseJobEvents(std::string_view text) {
  JobEventLog log;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("ev") || !j["ev"].is_string() || !j.contains("t") ||
        !j["t"].is_number()) {
      ++log.skipped_lines;
      continue;
    }
    JobEvent e;
    e.ev = j["ev"].get<std::string>();
    e.t = j["t"].get<double>();
    if (auto it = j.find("world"); it != j.end() && it->is_number_integer()) e.world = *it;
    if (auto it = j.find("samples"); it != j.end() && it->is_number()) e.samples = *it;
    if (auto it = j.find("phase"); it != j.end() && it->is_string()) e.phase = *it;
    if (auto it = j.find("epoch"); it != j.end() && it->is_number_integer()) e.epoch = *it;
    if (auto it = j.find("run"); it != j.end() && it->is_string()) e.run = *it;
    log.events.push_back(std::move(e));
  }
  return log;
}

double Calibration::ModelSamplesPerS(int n) const {
  n = std::max(n, 1);
  const double step = batch * sample_compute_s / n + sync_s * (n - 1) / n + 2.0 * (n - 1) * hop_s;
  return step > 0 ? batch / step : 0;
}

}  // namespace aiscale::sim
