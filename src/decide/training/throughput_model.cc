#include "decide/training/throughput_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/numeric.h"

namespace aiscale::decide {
namespace {

constexpr int kParams = 3;
constexpr int kFields = 6;           // per bucket in PersistentState
constexpr int kPositiveUpTo = 1024;  // the fit must predict positive time up to this size
constexpr double kMaxSerialShare = 0.98;

std::array<double, kParams> Features(int n, int nr) {
  return {1.0, static_cast<double>(nr) / n, static_cast<double>(n) / nr};
}

// y(n) of the fit `th`, seconds per sample at n nodes.
double Eval(const std::array<double, kParams>& th, int n, int nr) {
  const auto f = Features(n, nr);
  return th[0] * f[0] + th[1] * f[1] + th[2] * f[2];
}

// True when `th` predicts positive time at every size 1..kPositiveUpTo. Why not just try every
// size: Refit runs this five times per fit and policies refit every tick (bench/
// controller_bench.cc measured it as the training policy's largest cost). With b, c >= 0 and
// finite, y(n) = a + b nr/n + c n/nr is convex in n with its minimum at n* = nr sqrt(b/c), so
// the smallest value over the integers is next to n* (clamped): checking the integers around
// it is the same test. Anything else (a negative or non-finite term) tries every size.
bool PositiveUpTo(const std::array<double, kParams>& th, int nr) {
  const bool convex = std::isfinite(th[0]) && std::isfinite(th[1]) && std::isfinite(th[2]) &&
                      th[1] >= 0 && th[2] >= 0;
  int lo = 1, hi = kPositiveUpTo;
  if (convex) {
    const double star = th[2] > 0 ? nr * std::sqrt(th[1] / th[2]) : kPositiveUpTo;
    const double at = std::clamp(star, 1.0, static_cast<double>(kPositiveUpTo));
    lo = std::max(1, static_cast<int>(std::floor(at)) - 1);
    hi = std::min(kPositiveUpTo, static_cast<int>(std::ceil(at)) + 1);
  }
  for (int n = lo; n <= hi; ++n) {
    if (Eval(th, n, nr) <= 0) return false;
  }
  return true;
}

// Solves the k x k system m * x = v in place (Gaussian elimination, partial pivoting).
bool Solve(std::array<std::array<double, kParams>, kParams> m, std::array<double, kParams> v, int k,
           std::array<double, kParams>& x) {
  for (int col = 0; col < k; ++col) {
    int piv = col;
    for (int r = col + 1; r < k; ++r) {
      if (std::abs(m[r][col]) > std::abs(m[piv][col])) piv = r;
    }
    if (std::abs(m[piv][col]) < 1e-300) return false;
    std::swap(m[piv], m[col]);
    std::swap(v[piv], v[col]);
    for (int r = col + 1; r < k; ++r) {
      const double f = m[r][col] / m[col][col];
      for (int c = col; c < k; ++c) m[r][c] -= f * m[col][c];
      v[r] -= f * v[col];
    }
  }
  for (int r = k - 1; r >= 0; --r) {
    double s = v[r];
    for (int c = r + 1; c < k; ++c) s -= m[r][c] * x[c];
    x[r] = s / m[r][r];
  }
  return true;
}

}  // namespace

bool ThroughputModel::Add(int nodes, double samples_per_s, double duration_s, double gpu_util) {
  if (nodes < 1 || !std::isfinite(samples_per_s) || samples_per_s <= 0 ||
      !std::isfinite(duration_s) || duration_s <= 0) {
    return false;
  }
  auto it = std::find_if(buckets_.begin(), buckets_.end(),
                         [&](const Bucket& b) { return b.nodes == nodes; });
  if (it != buckets_.end() && it->count >= 3) {
    const double mean = it->w / it->wy;
    if (samples_per_s < mean / 4 || samples_per_s > mean * 4) return false;
  }
  if (it == buckets_.end()) {
    if (static_cast<int>(buckets_.size()) >= kMaxBuckets) {
      // Forget the size we know least about; the cap keeps the state bounded.
      auto least = std::min_element(buckets_.begin(), buckets_.end(),
                                    [](const Bucket& a, const Bucket& b) { return a.w < b.w; });
      buckets_.erase(least);
    }
    buckets_.push_back(Bucket{nodes, 0, 0, 0, 0, 0});
    it = buckets_.end() - 1;
  }
  const double samples = samples_per_s * duration_s;
  it->count += 1;
  it->w += samples;
  it->wy += duration_s;
  if (std::isfinite(gpu_util) && gpu_util >= 0) {
    it->util_s += gpu_util * duration_s;
    it->util_t += duration_s;
  }
  fitted_ = false;
  return true;
}

int ThroughputModel::NormNodes() const {
  if (buckets_.empty()) return std::max(1, prior_.reference_nodes);
  auto most = std::max_element(buckets_.begin(), buckets_.end(),
                               [](const Bucket& a, const Bucket& b) { return a.w < b.w; });
  return most->nodes;
}

double ThroughputModel::PriorSerialShare() const {
  const int nr = NormNodes();
  for (const Bucket& b : buckets_) {
    if (b.nodes == nr && b.util_t > 0) {
      const double u = b.util_s / b.util_t;
      return std::clamp(1.0 - u / prior_.compute_bound_util, 0.0, kMaxSerialShare);
    }
  }
  const int m = prior_.reference_nodes;
  if (m <= 1) return 0;
  // Amdahl: efficiency e at m nodes means a serial share (1-e) m/(m-1) of the step at m.
  return std::clamp((1.0 - prior_.efficiency) * m / (m - 1), 0.0, kMaxSerialShare);
}

void ThroughputModel::Refit() const {
  theta_[0] = theta_[1] = theta_[2] = 0;
  if (buckets_.empty()) return;
  const int nr = NormNodes();
  // Prior direction: serial share sigma at size m (where it was measured), the rest ~ 1/n.
  bool util_known = false;
  for (const Bucket& b : buckets_) util_known |= (b.nodes == nr && b.util_t > 0);
  const int m = util_known ? nr : std::max(1, prior_.reference_nodes);
  const double sigma = PriorSerialShare();
  const std::array<double, kParams> dir = {sigma, (1 - sigma) * m / nr, 0};

  double w_total = 0, hh = 0, hy = 0;
  std::array<std::array<double, kParams>, kParams> m_data{};
  std::array<double, kParams> v_data{};
  for (const Bucket& b : buckets_) {
    const auto f = Features(b.nodes, nr);
    const double ybar = b.wy / b.w;
    double h = 0;
    for (int j = 0; j < kParams; ++j) h += dir[j] * f[j];
    hh += b.w * h * h;
    hy += b.w * h * ybar;
    w_total += b.w;
    for (int i = 0; i < kParams; ++i) {
      v_data[i] += b.wy * f[i];
      for (int j = 0; j < kParams; ++j) m_data[i][j] += b.w * f[i] * f[j];
    }
  }
  const double amp = hy / hh;
  std::array<double, kParams> prior_theta;
  for (int j = 0; j < kParams; ++j) prior_theta[j] = amp * dir[j];
  const double lambda[kParams] = {prior_.strength * w_total, prior_.strength * w_total,
                                  prior_.latency_strength * w_total};

  auto objective = [&](const std::array<double, kParams>& th) {
    double j = 0;
    for (const Bucket& b : buckets_) {
      const auto f = Features(b.nodes, nr);
      const double pred = th[0] * f[0] + th[1] * f[1] + th[2] * f[2];
      j += b.w * pred * pred - 2 * b.wy * pred;
    }
    for (int k = 0; k < kParams; ++k)
      j += lambda[k] * (th[k] - prior_theta[k]) * (th[k] - prior_theta[k]);
    return j;
  };
  auto positive = [&](const std::array<double, kParams>& th) { return PositiveUpTo(th, nr); };

  std::array<double, kParams> best = prior_theta;
  double best_j = positive(best) ? objective(best) : std::numeric_limits<double>::infinity();
  // Active sets: b and c may be held at 0 (their bound); a is always free.
  for (int mask = 0; mask < 4; ++mask) {
    std::array<int, kParams> free = {0, 0, 0};
    int k = 1;
    if (!(mask & 1)) free[k++] = 1;
    if (!(mask & 2)) free[k++] = 2;
    std::array<std::array<double, kParams>, kParams> ms{};
    std::array<double, kParams> vs{}, xs{};
    for (int i = 0; i < k; ++i) {
      vs[i] = v_data[free[i]] + lambda[free[i]] * prior_theta[free[i]];
      for (int j = 0; j < k; ++j) {
        ms[i][j] = m_data[free[i]][free[j]] + (i == j ? lambda[free[i]] : 0);
      }
    }
    if (!Solve(ms, vs, k, xs)) continue;
    std::array<double, kParams> th = {0, 0, 0};
    for (int i = 0; i < k; ++i) th[free[i]] = xs[i];
    if (th[1] < 0 || th[2] < 0 || !positive(th)) continue;
    const double j = objective(th);
    if (j < best_j) {
      best_j = j;
      best = th;
    }
  }
  for (int j = 0; j < kParams; ++j) theta_[j] = best[j];
}

std::optional<double> ThroughputModel::SecondsPerSample(int nodes) const {
  if (buckets_.empty() || nodes < 1) return std::nullopt;
  Fit();
  const auto f = Features(nodes, NormNodes());
  const double y = theta_[0] * f[0] + theta_[1] * f[1] + theta_[2] * f[2];
  if (!(y > 0) || !std::isfinite(y)) return std::nullopt;
  return y;
}

std::optional<double> ThroughputModel::Predict(int nodes) const {
  auto y = SecondsPerSample(nodes);
  if (!y) return std::nullopt;
  return 1.0 / *y;
}

std::optional<double> ThroughputModel::Observed(int nodes) const {
  for (const Bucket& b : buckets_) {
    if (b.nodes == nodes && b.wy > 0) return b.w / b.wy;
  }
  return std::nullopt;
}

double ThroughputModel::ObservedSeconds(int nodes) const {
  for (const Bucket& b : buckets_) {
    if (b.nodes == nodes) return b.wy;
  }
  return 0;
}

ThroughputParams ThroughputModel::Params() const {
  Fit();
  const double nr = NormNodes();
  const double a = theta_[0], b = theta_[1] * nr, c = theta_[2] / nr;
  return {a + b + c, a + c, c};
}

// The state key of a model's buckets. One buffer per thread, reused: the training policy loads
// and saves four models per job per tick, and a new string per key was a measurable share.
const std::string& ThroughputModel::BucketsKey(const std::string& prefix) {
  thread_local std::string key;
  key.assign(prefix).append(".buckets");
  return key;
}

void ThroughputModel::Save(PersistentState& state, const std::string& prefix) const {
  SaveTo(state.Vec(BucketsKey(prefix)));
}

void ThroughputModel::SaveTo(std::vector<double>& v) const {
  v.clear();
  for (const Bucket& b : buckets_) {
    v.insert(v.end(), {static_cast<double>(b.nodes), b.count, b.w, b.wy, b.util_s, b.util_t});
  }
}

ThroughputModel ThroughputModel::Load(const PersistentState& state, const std::string& prefix,
                                      ThroughputPrior prior) {
  const std::vector<double>* v = state.FindVec(BucketsKey(prefix));
  if (!v) return LoadFrom({}, prior);
  return LoadFrom(*v, prior);
}

ThroughputModel ThroughputModel::LoadFrom(const std::vector<double>& v, ThroughputPrior prior) {
  ThroughputModel m(prior);
  m.buckets_.reserve(std::min<size_t>(v.size() / kFields, kMaxBuckets));
  for (size_t i = 0; i + kFields <= v.size() && m.buckets_.size() < kMaxBuckets; i += kFields) {
    Bucket b{
        ClampToInt(v[i], 0, kMaxReplicaCount), v[i + 1], v[i + 2], v[i + 3], v[i + 4], v[i + 5]};
    // State from a store is input: skip anything that could not have been written by Add.
    if (b.nodes < 1 || !(b.w > 0) || !(b.wy > 0) || !std::isfinite(b.w + b.wy)) continue;
    m.buckets_.push_back(b);
  }
  m.fitted_ = false;  // fitted on first use: a tick reads some of its models only
  return m;
}

}  // namespace aiscale::decide
