// ThroughputModel: samples/s of a data-parallel job as a function of its node count, learned
// online from observed (nodes, samples/s) pairs.
//
// Shape: seconds per sample y(n) = t_step(n) / batch = t_compute/n + s*(n-1)/n + l*(n-1),
// i.e. y(n) = a + b/n + c*n with b, c >= 0 (compute shrinks with n; a per-node latency term
// grows with n; the rest is a constant: all-reduce bandwidth time, or an input-pipeline stall
// that shared storage does not speed up). Linear in (a, b, c), so it is fitted by weighted least
// squares over per-size sufficient statistics, regularized toward a prior whose shape comes from
// the observed compute share of the step (GPU utilization) or the user's expected scaling
// efficiency, and whose amplitude comes from the data. With data at one size only, the fit goes
// through that size and keeps the prior's shape; with three or more sizes, the data decide.
// Observation weight = samples processed (samples/s x seconds), so a bucket's mean is total
// time / total samples.
//
// Noise (issue 27): each size also keeps the spread of its readings (a duration-weighted
// variance), and from its 3rd reading on a new one is clipped to the size's mean +- 2.5 sd
// (never tighter than +-5%) before it counts, so one reading taken on a busy machine moves the
// mean by at most that band's share; a size stands for its last 30 readings or so (older ones
// fade as new ones come), so a lasting change of speed is learned within about twice that.
// Evidence() reports, per size, the readings, the robust
// mean, the spread (shrunk toward the spread pooled over all sizes while a size has few
// readings) and the standard error of its mean; the fit weighs a size noisier than the pool
// less. Bounded: at most kMaxBuckets sizes. Value type; not thread-safe.
//
// Drift: a machine that got busier (or freer) changes every size's speed, but only the size
// the job is at sees it. So the size the job is at keeps its current stint (readings since the
// job last came to it) apart from its earlier ones; Drift() says when the two differ beyond
// their noise, and a move is then judged against the earlier readings, taken in the same era as
// the other sizes' (move_evidence.h). The earlier readings fade with the rest, so a change that
// lasts past the size's memory (about twice kMaxReadings) is taken as the size's own.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/state.h"

namespace aiscale::decide {

struct ThroughputPrior {
  // Scaling efficiency expected at `reference_nodes` relative to one node (0, 1].
  double efficiency = 0.9;
  int reference_nodes = 8;
  // GPU utilization of a compute-bound step (0-100): 1 - util/compute_bound_util is the share
  // of the step that does not shrink with more nodes.
  double compute_bound_util = 100;
  // Relative weight of the prior against all data (pseudo-observations as a share of data).
  // Tiny, because nearby sizes are nearly collinear in (1, 1/n, n): moving the prediction at 8
  // while keeping 7 costs parameter changes ~8x as large, so even 1e-3 outweighs a size seen
  // for 3% of the time. It only has to decide directions the data do not see. The latency term is
  // held much closer to its prior of 0: per-hop latency is microseconds next to a step's
  // milliseconds, and with data at two sizes only, a weak hold would let noise split the measured
  // slope between 1/n and n arbitrarily.
  double strength = 1e-6;
  double latency_strength = 0.01;
};

// What the readings at one size say, for judging a move between sizes against their noise.
struct SizeEvidence {
  int nodes = 0;
  double count = 0;  // readings (intervals) learned at this size; 0: never measured
  double mean = 0;   // robust mean samples/s (duration-weighted, outliers clipped)
  double sd = 0;     // spread of one reading, samples/s
  double se = 0;     // standard error of `mean`: sd / sqrt(count)
};

// z of a measured difference `diff` with standard error `se`; +-kHugeZ when se is 0 (readings
// without any spread: any difference is beyond their noise).
inline constexpr double kHugeZ = 1e9;
inline double ZScore(double diff, double se) {
  if (se > 0) return diff / se;
  return diff > 0 ? kHugeZ : (diff < 0 ? -kHugeZ : 0);
}

struct ThroughputParams {
  // Physical reading of the fit, seconds per sample: y(n) = t_compute/n + s(n-1)/n + l(n-1).
  double t_compute = 0;
  double sync = 0;
  double latency = 0;
};

class ThroughputModel {
 public:
  static constexpr int kMaxBuckets = 16;

  explicit ThroughputModel(ThroughputPrior prior = {}) : prior_(prior) {}

  // Adds one interval of `duration_s` at `nodes` running `samples_per_s`; `gpu_util` (mean
  // over GPUs, 0-100, or negative when unknown) informs the prior. Returns false (and learns
  // nothing) for non-positive or non-finite input and for outliers (< 1/4 or > 4x the size's
  // mean once it has 3 samples): restart zeros and partial intervals are not the job's speed.
  bool Add(int nodes, double samples_per_s, double duration_s, double gpu_util = -1);

  bool HasData() const { return !buckets_.empty(); }
  int DistinctSizes() const { return static_cast<int>(buckets_.size()); }
  // Samples/s at `nodes`; nullopt without data or nodes < 1.
  std::optional<double> Predict(int nodes) const;
  // Seconds per sample at `nodes` (1 / Predict); nullopt without data.
  std::optional<double> SecondsPerSample(int nodes) const;
  // Share of the step that does not shrink with nodes, as used by the prior.
  double PriorSerialShare() const;
  ThroughputParams Params() const;
  // Samples/s observed at exactly `nodes` (total samples / total time); nullopt if none.
  std::optional<double> Observed(int nodes) const;
  // Seconds of observations at exactly `nodes`, all of them (the mean fades older ones).
  double ObservedSeconds(int nodes) const;
  // The readings at exactly `nodes` (count 0 when none).
  SizeEvidence Evidence(int nodes) const;
  // At the size of the last reading: its readings before the current stint and those of the
  // stint; nullopt at any other size, or with fewer than 2 earlier or 3 stint readings.
  struct Drift {
    SizeEvidence earlier, stint;
    double z = 0;  // (stint mean - earlier mean) / standard error of the difference
  };
  std::optional<Drift> DriftAt(int nodes) const;
  // Relative variance of one reading pooled over every size with 2 or more readings
  // (kDefaultRelativeSpread squared when none has).
  double PooledRelativeVariance() const;
  // Until a size has readings of its own, its spread is assumed to be this share of its mean.
  static constexpr double kDefaultRelativeSpread = 0.25;

  void Save(PersistentState& state, const std::string& prefix) const;
  static ThroughputModel Load(const PersistentState& state, const std::string& prefix,
                              ThroughputPrior prior);
  // The same on the state's vector itself (key prefix + ".buckets"), for a caller that holds
  // it; a missing key reads as an empty vector.
  void SaveTo(std::vector<double>& v) const;
  static ThroughputModel LoadFrom(const std::vector<double>& v, ThroughputPrior prior);

 private:
  struct Bucket {
    int nodes = 0;
    double count = 0;
    double w = 0;        // sum of samples (weights)
    double wy = 0;       // sum of weight * seconds-per-sample = seconds
    double util_s = 0;   // sum of gpu_util * seconds (where known)
    double util_t = 0;   // seconds with a known gpu_util
    double m2 = 0;       // sum of seconds * (samples/s - mean)^2 (Welford, duration-weighted)
    double seconds = 0;  // all the time observed at this size (w, wy, m2 fade; this does not)
    // The same sums over the current stint only (part of the above; fade with them).
    double s_count = 0, s_w = 0, s_wy = 0, s_m2 = 0;
  };
  // What readings with these sums say (the spread shrunk toward the pool's while few).
  SizeEvidence EvidenceOf(int nodes, double count, double w, double wy, double m2) const;
  const Bucket* Find(int nodes) const;
  // One bucket of `fields` values from a saved state; nullopt when it could not have been
  // written by Add.
  static std::optional<Bucket> ReadBucket(const double* f, size_t fields);
  // Weight of a bucket in the fit relative to its samples: the pooled relative variance over
  // its own (shrunk), within [1/4, 4]; 1 when no size shows any spread.
  double Reliability(const Bucket& b, double pooled) const;
  // Fits theta_ from the buckets; Fit() does it once after they change (Add, Load), so a model
  // that a tick never queries is never fitted. Same numbers as fitting eagerly.
  void Refit() const;
  void Fit() const {
    if (!fitted_) {
      Refit();
      fitted_ = true;
    }
  }
  int NormNodes() const;
  static const std::string& BucketsKey(const std::string& prefix);

  ThroughputPrior prior_;
  std::vector<Bucket> buckets_;
  int last_nodes_ = 0;  // size of the last reading learned: its bucket's stint is current
  // Fitted y(n) = theta[0] + theta[1] * (nr/n) + theta[2] * (n/nr), nr = NormNodes().
  mutable double theta_[3] = {0, 0, 0};
  mutable bool fitted_ = true;  // theta_ matches buckets_
};

}  // namespace aiscale::decide
