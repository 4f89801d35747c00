// The Knative Pod Autoscaler's decision, as pure functions: the per-second bucket window
// average of knative/serving aggregation/bucketing.go (WindowAverage, IsEmpty), the Scale()
// step of scaling/autoscaler.go (stable and panic pod counts, rate limits, activation scale,
// entering, extending and leaving panic), and the scale-to-zero grace period that Knative
// keeps in its KPA reconciler.
//
// Why separate from the Policy: the conformance vectors (shared/conformance/kpa_*.json) give
// per-second samples and panic state directly; they and the `kpa` Policy call the same code.
//
//   std::vector<KpaBucket> b = {{-1, 40}, {0, 42}};   // total concurrency per second
//   KpaWindow stable = KpaWindowAverage(b, /*now_second=*/0, /*window_buckets=*/60);
//   KpaPanicState st;                                   // not in panic
//   KpaDecision d = KpaScale(params, stable.value, panic.value, /*ready=*/3, now, st);
//
// Thread safety: all functions are pure; KpaPanicState is the caller's to guard.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/time.h"

namespace aiscale::decide {

// One 1-second bucket: the second it covers (floor of time in seconds) and the total value
// (concurrency or rate summed over all replicas) recorded in it.
struct KpaBucket {
  int64_t second = 0;
  double value = 0;
};

struct KpaWindow {
  double value = 0;
  // Knative's IsEmpty: nothing written for more than a window; the KPA then has no data.
  bool empty = true;
};

// Knative's WindowAverage over the `window_buckets` one-second buckets ending at
// `now_second`. `buckets` must be sorted by second with no duplicates. Gaps inside the data
// count as 0; the average is over the part of the window that has data (from the first write,
// or since the last gap of a whole window, to the last write); the result is floored to 6
// decimal digits as Knative does.
KpaWindow KpaWindowAverage(const std::vector<KpaBucket>& buckets, int64_t now_second,
                           int window_buckets);

// Panic window length in buckets: ceil(stable_window * percentage / 100 s).
int KpaPanicBuckets(Duration stable_window, double panic_window_percentage);

struct KpaParams {
  double target = 70;            // per replica, after target utilization (DeciderSpec.TargetValue)
  double panic_threshold = 2.0;  // ratio, panicThresholdPercentage / 100
  double max_scale_up_rate = 1000;
  double max_scale_down_rate = 2;
  int activation_scale = 1;
  Duration stable_window = Seconds(60);
  bool reachable = true;  // false: no rate limit on scale-down (Knative's Reachable)
};

// The autoscaler's panic memory (Knative: panicTime, maxPanicPods).
struct KpaPanicState {
  std::optional<TimePoint> panic_time;  // set when entering panic, moved forward while over
  int max_panic_pods = 0;
  bool operator==(const KpaPanicState&) const = default;
};

enum class KpaPanicEvent { kNone, kEntered, kExtended, kHeld, kLeft };
std::string_view KpaPanicEventName(KpaPanicEvent e);

struct KpaDecision {
  int desired = 0;
  double desired_stable_raw = 0;  // ceil(stable / target), before limits
  double desired_panic_raw = 0;   // ceil(panic / target)
  int desired_stable = 0;         // after rate limits and activation scale
  int desired_panic = 0;
  double ready_used = 1;  // ready replicas, 0 taken as 1
  double max_scale_up = 0;
  double max_scale_down = 0;
  bool over_threshold = false;
  bool in_panic = false;
  KpaPanicEvent event = KpaPanicEvent::kNone;
};

// Knative's Scale() given the observed stable and panic averages of the total. Updates
// `state` exactly as Knative does.
KpaDecision KpaScale(const KpaParams& p, double observed_stable, double observed_panic,
                     int ready_pods, TimePoint now, KpaPanicState& state);

struct KpaZeroGate {
  int desired = 0;
  bool waiting = false;  // desire was 0 but the grace period has not passed: held at 1
  double idle_s = 0;     // seconds since the last non-zero desire (0 when never)
};

// Scale to zero after the grace period: a desire of 0 is let through only when the last
// non-zero desire (`last_nonzero`, updated here) is at least `grace` old, or when there never
// was one (a workload allowed to start at zero); until then the scale is held at 1 (or stays
// at 0 if it is already there).
KpaZeroGate KpaApplyScaleToZero(int desired, int current, TimePoint now, Duration grace,
                                std::optional<TimePoint>& last_nonzero);

}  // namespace aiscale::decide
