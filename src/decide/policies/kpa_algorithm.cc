#include "decide/policies/kpa_algorithm.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/numeric.h"

namespace aiscale::decide {
namespace {

// Knative floors window averages to 6 digits so that float noise in the sums cannot push a
// ceil() up by one pod.
double FloorToSixDigits(double v) { return std::floor(v * 1e6) / 1e6; }

// Go's int32(float64) on values the KPA can produce; saturated at kMaxReplicaCount so huge
// demand cannot wrap and later arithmetic (current + step) cannot overflow. NaN -> 0.
int ToPods(double v) { return ClampToInt(v, 0, kMaxReplicaCount); }

}  // namespace

KpaWindow KpaWindowAverage(const std::vector<KpaBucket>& buckets, int64_t now_second,
                           int window_buckets) {
  KpaWindow out;
  if (window_buckets <= 0) return out;
  const int64_t w = window_buckets;
  // Buckets after `now` have not happened yet from the caller's point of view.
  auto end = std::upper_bound(buckets.begin(), buckets.end(), now_second,
                              [](int64_t s, const KpaBucket& b) { return s < b.second; });
  if (end == buckets.begin()) return out;
  const int64_t last_write = std::prev(end)->second;
  const int64_t since_last = now_second - last_write;
  if (since_last > w) return out;  // IsEmpty
  out.empty = false;
  if (since_last >= w) return out;  // nothing left inside the window: 0

  // The first write is reset whenever a whole window passed between two writes: the last such
  // write. Only one inside the window changes the result (one at or before window_start counts
  // the same as the very first write), so the search goes back from the newest to there.
  const int64_t window_start = now_second - w + 1;
  int64_t first_write = buckets.front().second;
  for (auto it = std::prev(end); it != buckets.begin() && it->second > window_start; --it) {
    if (it->second - std::prev(it)->second >= w) {
      first_write = it->second;
      break;
    }
  }
  double total = 0;
  auto from = std::lower_bound(buckets.begin(), end, window_start,
                               [](const KpaBucket& b, int64_t s) { return b.second < s; });
  for (auto it = from; it != end; ++it) {
    if (it->second >= first_write) total += it->value;
  }
  // Only the part of the window with data counts: from the first write (inclusive) and not
  // the seconds since the last write.
  const int64_t valid =
      std::min(last_write - first_write + 1, w - std::max<int64_t>(since_last, 0));
  out.value = FloorToSixDigits(total / static_cast<double>(valid));
  return out;
}

int KpaPanicBuckets(Duration stable_window, double panic_window_percentage) {
  // Knative: time.Duration(float64(stable) * pct / 100), then ceil(window / 1 s) buckets.
  const auto ns = static_cast<int64_t>(static_cast<double>(stable_window.count()) *
                                       panic_window_percentage / 100.0);
  const int64_t per_bucket = Seconds(1).count();
  return static_cast<int>((ns + per_bucket - 1) / per_bucket);
}

std::string_view KpaPanicEventName(KpaPanicEvent e) {
  switch (e) {
    case KpaPanicEvent::kNone:
      return "none";
    case KpaPanicEvent::kEntered:
      return "entered";
    case KpaPanicEvent::kExtended:
      return "extended";
    case KpaPanicEvent::kHeld:
      return "held";
    case KpaPanicEvent::kLeft:
      return "left";
  }
  return "unknown";
}

KpaDecision KpaScale(const KpaParams& p, double observed_stable, double observed_panic,
                     int ready_pods, TimePoint now, KpaPanicState& state) {
  KpaDecision d;
  d.ready_used = std::max(1.0, static_cast<double>(ready_pods));
  // The ceil guarantees growth by at least one pod even with a rate like 1.1 on few pods.
  d.max_scale_up = std::ceil(p.max_scale_up_rate * d.ready_used);
  d.max_scale_down = p.reachable ? std::floor(d.ready_used / p.max_scale_down_rate) : 0.0;

  d.desired_stable_raw = std::ceil(observed_stable / p.target);
  d.desired_panic_raw = std::ceil(observed_panic / p.target);
  d.desired_stable =
      ToPods(std::min(std::max(d.desired_stable_raw, d.max_scale_down), d.max_scale_up));
  d.desired_panic =
      ToPods(std::min(std::max(d.desired_panic_raw, d.max_scale_down), d.max_scale_up));
  if (p.activation_scale > 1) {
    if (d.desired_stable_raw > 0 && p.activation_scale > d.desired_stable) {
      d.desired_stable = p.activation_scale;
    }
    if (d.desired_panic_raw > 0 && p.activation_scale > d.desired_panic) {
      d.desired_panic = p.activation_scale;
    }
  }

  d.over_threshold = d.desired_panic_raw / d.ready_used >= p.panic_threshold;
  if (!state.panic_time && d.over_threshold) {
    state.panic_time = now;
    d.event = KpaPanicEvent::kEntered;
  } else if (d.over_threshold) {
    state.panic_time = now;
    d.event = KpaPanicEvent::kExtended;
  } else if (state.panic_time && *state.panic_time + p.stable_window < now) {
    // The surge has made its way into the stable window.
    state.panic_time.reset();
    state.max_panic_pods = 0;
    d.event = KpaPanicEvent::kLeft;
  }

  d.desired = d.desired_stable;
  if (state.panic_time) {
    d.in_panic = true;
    // Provision for the larger of the two; in panic only increases are applied.
    d.desired = std::max(d.desired_stable, d.desired_panic);
    if (d.desired > state.max_panic_pods) {
      state.max_panic_pods = d.desired;
    } else if (d.desired < state.max_panic_pods && d.event == KpaPanicEvent::kNone) {
      d.event = KpaPanicEvent::kHeld;
    }
    d.desired = state.max_panic_pods;
  }
  return d;
}

KpaZeroGate KpaApplyScaleToZero(int desired, int current, TimePoint now, Duration grace,
                                std::optional<TimePoint>& last_nonzero) {
  KpaZeroGate g;
  if (desired > 0) {
    last_nonzero = now;
    g.desired = desired;
    return g;
  }
  if (!last_nonzero) return g;  // never had demand: zero is allowed at once
  g.idle_s = ToSeconds(now - *last_nonzero);
  if (now - *last_nonzero >= grace) return g;
  g.waiting = current > 0;
  g.desired = current > 0 ? 1 : 0;
  return g;
}

}  // namespace aiscale::decide
