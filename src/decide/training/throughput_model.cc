#include "decide/training/throughput_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/numeric.h"

namespace aiscale::decide {
namespace {

constexpr int kParams = 3;
constexpr int kOldFields = 6;     // per bucket in the layout before the spread was kept
constexpr int kSpreadFields = 8;  // per bucket in the layout with the spread (kSpreadTag)
constexpr int kFields = 12;       // per bucket now: the spread and the current stint
// First value of a state vector in a tagged layout: kSpreadTag then the buckets, or kLayoutTag,
// the size of the last reading, then the buckets. The untagged layout starts with a bucket's
// node count (>= 1), so none can be confused.
constexpr double kSpreadTag = -2;
constexpr double kLayoutTag = -3;
// Readings at a size before a new one is clipped to its band: with fewer, nothing says which
// one is the outlier.
constexpr double kRobustAfter = 3;
constexpr double kClipSd = 2.5;       // the band: mean +- this many sd of one reading...
constexpr double kMinBand = 0.05;     // ...and never narrower than this share of the mean
constexpr double kPriorReadings = 2;  // weight of the pooled spread in a size's own, in readings
// Readings a size's statistics stand for at most: older ones fade in proportion as new ones
// come, so a size whose speed changed for good is seen as it is now within about twice this
// many readings, while one reading moves its mean by at most 1/kMaxReadings of its band.
constexpr double kMaxReadings = 30;
// Earlier readings (before the current stint) needed to tell a drift from the job's noise.
constexpr double kMinEarlier = 1.5;
constexpr double kMinReliability = 0.25, kMaxReliability = 4;
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

// Duration-weighted Welford: w / wy stays the mean of the readings, m2 their spread.
void Welford(double& count, double& w, double& wy, double& m2, double x, double duration_s) {
  const double before = wy > 0 ? w / wy : x;
  const double wy_after = wy + duration_s;
  const double after = before + duration_s / wy_after * (x - before);
  m2 += duration_s * (x - before) * (x - after);
  count += 1;
  w += x * duration_s;
  wy = wy_after;
}

}  // namespace

bool ThroughputModel::Add(int nodes, double samples_per_s, double duration_s, double gpu_util) {
  if (nodes < 1 || !std::isfinite(samples_per_s) || samples_per_s <= 0 ||
      !std::isfinite(duration_s) || duration_s <= 0) {
    return false;
  }
  auto it = std::find_if(buckets_.begin(), buckets_.end(),
                         [&](const Bucket& b) { return b.nodes == nodes; });
  double x = samples_per_s;
  if (it != buckets_.end() && it->count >= kRobustAfter) {
    const double mean = it->w / it->wy;
    if (x < mean / 4 || x > mean * 4) return false;
    // One reading on a busy machine must not move what the size is known for: clipped to the
    // band its own spread allows.
    const double band =
        std::max(kClipSd * std::sqrt(std::max(0.0, it->m2) / it->wy), kMinBand * mean);
    x = std::clamp(x, mean - band, mean + band);
  }
  if (it == buckets_.end()) {
    if (static_cast<int>(buckets_.size()) >= kMaxBuckets) {
      // Forget the size we know least about; the cap keeps the state bounded.
      auto least = std::min_element(buckets_.begin(), buckets_.end(),
                                    [](const Bucket& a, const Bucket& b) { return a.w < b.w; });
      buckets_.erase(least);
    }
    buckets_.push_back(Bucket{});
    it = buckets_.end() - 1;
    it->nodes = nodes;
  }
  if (nodes != last_nodes_) {
    // The job came (back) to this size: a new stint starts.
    it->s_count = it->s_w = it->s_wy = it->s_m2 = 0;
    last_nodes_ = nodes;
  }
  if (it->count >= kMaxReadings) {
    const double keep = (kMaxReadings - 1) / it->count;
    for (double* v : {&it->count, &it->w, &it->wy, &it->m2, &it->util_s, &it->util_t, &it->s_count,
                      &it->s_w, &it->s_wy, &it->s_m2}) {
      *v *= keep;
    }
  }
  Welford(it->count, it->w, it->wy, it->m2, x, duration_s);
  Welford(it->s_count, it->s_w, it->s_wy, it->s_m2, x, duration_s);
  it->seconds += duration_s;
  if (std::isfinite(gpu_util) && gpu_util >= 0) {
    it->util_s += gpu_util * duration_s;
    it->util_t += duration_s;
  }
  fitted_ = false;
  return true;
}

const ThroughputModel::Bucket* ThroughputModel::Find(int nodes) const {
  for (const Bucket& b : buckets_) {
    if (b.nodes == nodes) return &b;
  }
  return nullptr;
}

double ThroughputModel::PooledRelativeVariance() const {
  double m2 = 0, scale = 0;
  for (const Bucket& b : buckets_) {
    if (b.count < 2) continue;
    const double mean = b.w / b.wy;
    m2 += std::max(0.0, b.m2);
    scale += b.wy * mean * mean;
  }
  if (scale <= 0) return kDefaultRelativeSpread * kDefaultRelativeSpread;
  return m2 / scale;
}

SizeEvidence ThroughputModel::Evidence(int nodes) const {
  const Bucket* b = Find(nodes);
  if (!b) return SizeEvidence{nodes};
  return EvidenceOf(nodes, b->count, b->w, b->wy, b->m2);
}

SizeEvidence ThroughputModel::EvidenceOf(int nodes, double count, double w, double wy,
                                         double m2) const {
  SizeEvidence e;
  e.nodes = nodes;
  e.count = count;
  e.mean = w / wy;
  // The size's own variance, shrunk toward the pooled one while it has few readings (one
  // reading has no spread of its own; the job's noise is much the same at every size).
  const double own = std::max(0.0, m2) / wy;
  const double prior = PooledRelativeVariance() * e.mean * e.mean;
  const double dof = std::max(0.0, count - 1);
  e.sd = std::sqrt((kPriorReadings * prior + dof * own) / (kPriorReadings + dof));
  e.se = e.sd / std::sqrt(std::max(1.0, count));
  return e;
}

std::optional<ThroughputModel::Drift> ThroughputModel::DriftAt(int nodes) const {
  const Bucket* b = Find(nodes);
  if (!b || nodes != last_nodes_ || b->s_count < kRobustAfter) return std::nullopt;
  // The earlier readings are the whole less the stint (counts are fractional once faded).
  const double count = b->count - b->s_count, w = b->w - b->s_w, wy = b->wy - b->s_wy;
  if (count < kMinEarlier || !(wy > 1e-9 * b->wy) || !(w > 0)) return std::nullopt;
  const double mean = w / wy, s_mean = b->s_w / b->s_wy;
  // m2 of a union = m2 of each part + the parts' weights' harmonic share of the means' gap.
  const double between = wy * b->s_wy / b->wy * (mean - s_mean) * (mean - s_mean);
  Drift d;
  d.earlier = EvidenceOf(nodes, count, w, wy, std::max(0.0, b->m2 - b->s_m2 - between));
  d.stint = EvidenceOf(nodes, b->s_count, b->s_w, b->s_wy, b->s_m2);
  d.z = ZScore(d.stint.mean - d.earlier.mean, std::hypot(d.earlier.se, d.stint.se));
  return d;
}

double ThroughputModel::Reliability(const Bucket& b, double pooled) const {
  if (!(pooled > 0)) return 1;
  const double mean = b.w / b.wy;
  const double own = std::max(0.0, b.m2) / b.wy / (mean * mean);
  const double dof = std::max(0.0, b.count - 1);
  const double shrunk = (kPriorReadings * pooled + dof * own) / (kPriorReadings + dof);
  if (!(shrunk > 0)) return kMaxReliability;
  return std::clamp(pooled / shrunk, kMinReliability, kMaxReliability);
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

  // Each size counts by its samples, less when its readings are noisier than the pool's.
  const double pooled = PooledRelativeVariance();
  std::vector<double> weight;
  weight.reserve(buckets_.size());
  double w_total = 0, hh = 0, hy = 0;
  std::array<std::array<double, kParams>, kParams> m_data{};
  std::array<double, kParams> v_data{};
  for (const Bucket& b : buckets_) {
    const auto f = Features(b.nodes, nr);
    const double ybar = b.wy / b.w;
    const double w = b.w * Reliability(b, pooled);
    weight.push_back(w);
    double h = 0;
    for (int j = 0; j < kParams; ++j) h += dir[j] * f[j];
    hh += w * h * h;
    hy += w * h * ybar;
    w_total += w;
    for (int i = 0; i < kParams; ++i) {
      v_data[i] += w * ybar * f[i];
      for (int j = 0; j < kParams; ++j) m_data[i][j] += w * f[i] * f[j];
    }
  }
  const double amp = hy / hh;
  std::array<double, kParams> prior_theta;
  for (int j = 0; j < kParams; ++j) prior_theta[j] = amp * dir[j];
  const double lambda[kParams] = {prior_.strength * w_total, prior_.strength * w_total,
                                  prior_.latency_strength * w_total};

  auto objective = [&](const std::array<double, kParams>& th) {
    double j = 0;
    for (size_t i = 0; i < buckets_.size(); ++i) {
      const Bucket& b = buckets_[i];
      const auto f = Features(b.nodes, nr);
      const double pred = th[0] * f[0] + th[1] * f[1] + th[2] * f[2];
      j += weight[i] * (pred * pred - 2 * (b.wy / b.w) * pred);
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
  const Bucket* b = Find(nodes);
  if (b && b->wy > 0) return b->w / b->wy;
  return std::nullopt;
}

double ThroughputModel::ObservedSeconds(int nodes) const {
  const Bucket* b = Find(nodes);
  return b ? b->seconds : 0;
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
  if (buckets_.empty()) return;
  v.push_back(kLayoutTag);
  v.push_back(last_nodes_);
  for (const Bucket& b : buckets_) {
    v.insert(v.end(), {static_cast<double>(b.nodes), b.count, b.w, b.wy, b.util_s, b.util_t, b.m2,
                       b.seconds, b.s_count, b.s_w, b.s_wy, b.s_m2});
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
  size_t fields = kOldFields, first = 0;
  if (!v.empty() && v[0] == kSpreadTag) {
    fields = kSpreadFields;
    first = 1;
  } else if (v.size() >= 2 && v[0] == kLayoutTag) {
    fields = kFields;
    first = 2;
    m.last_nodes_ = ClampToInt(v[1], 0, kMaxReplicaCount);
  }
  m.buckets_.reserve(std::min<size_t>(v.size() / fields, kMaxBuckets));
  for (size_t i = first; i + fields <= v.size() && m.buckets_.size() < kMaxBuckets; i += fields) {
    if (auto b = ReadBucket(&v[i], fields)) m.buckets_.push_back(*b);
  }
  m.fitted_ = false;  // fitted on first use: a tick reads some of its models only
  return m;
}

std::optional<ThroughputModel::Bucket> ThroughputModel::ReadBucket(const double* f, size_t fields) {
  Bucket b;
  b.nodes = ClampToInt(f[0], 0, kMaxReplicaCount);
  b.count = f[1];
  b.w = f[2];
  b.wy = f[3];
  b.util_s = f[4];
  b.util_t = f[5];
  // State from a store is input: skip anything that could not have been written by Add.
  if (b.nodes < 1 || !(b.w > 0) || !(b.wy > 0) || !std::isfinite(b.w + b.wy)) return std::nullopt;
  if (!(b.count >= 0) || !std::isfinite(b.count)) b.count = 1;
  b.seconds = fields > kOldFields ? f[7] : b.wy;
  if (!(b.seconds >= b.wy) || !std::isfinite(b.seconds)) b.seconds = b.wy;
  const double mean = b.w / b.wy;
  if (fields > kOldFields && std::isfinite(f[6]) && f[6] >= 0) {
    b.m2 = f[6];
  } else {
    // Saved before the spread was kept (or garbled): assume the default spread, so the old
    // readings count as evidence no stronger than that.
    b.m2 = kDefaultRelativeSpread * kDefaultRelativeSpread * mean * mean * b.wy;
  }
  if (fields == kFields) {
    b.s_count = f[8];
    b.s_w = f[9];
    b.s_wy = f[10];
    b.s_m2 = f[11];
    // A stint that is not a part of the whole (garbled) is dropped: no drift is claimed.
    const bool part = b.s_count >= 0 && b.s_count <= b.count && b.s_w >= 0 && b.s_w <= b.w &&
                      b.s_wy >= 0 && b.s_wy <= b.wy && b.s_m2 >= 0 && std::isfinite(b.s_m2) &&
                      (b.s_wy > 0) == (b.s_w > 0);
    if (!part) b.s_count = b.s_w = b.s_wy = b.s_m2 = 0;
  }
  return b;
}

}  // namespace aiscale::decide
