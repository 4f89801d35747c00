#include "decide/policies/kpa_algorithm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

// Buckets for seconds [now - n + 1, now] all equal to v.
std::vector<KpaBucket> Constant(int64_t now, int n, double v) {
  std::vector<KpaBucket> b;
  for (int64_t s = now - n + 1; s <= now; ++s) b.push_back({s, v});
  return b;
}

TEST(KpaAlgorithm, WindowAverage) {
  struct Case {
    std::string name;
    std::vector<KpaBucket> buckets;
    int64_t now;
    int window;
    bool empty;
    double want;
  };
  std::vector<KpaBucket> with_hole = Constant(100, 60, 10);
  with_hole.erase(with_hole.begin() + 10, with_hole.begin() + 40);  // 30 seconds of nothing
  const std::vector<Case> cases = {
      {"full window constant", Constant(100, 60, 40), 100, 60, false, 40},
      {"older data outside the window is ignored", Constant(100, 120, 40), 100, 60, false, 40},
      // First write 6 s ago: the average is over those 6 buckets, not the whole 60.
      {"partial window since first write", Constant(100, 6, 12), 100, 60, false, 12},
      // Last write 10 s ago: the trailing 10 s are not in the denominator.
      {"trailing gap excluded", Constant(90, 60, 10), 100, 60, false, 10},
      // Holes between writes count as zero: 30 of 60 seconds at 10.
      {"hole inside the data counts as zero", with_hole, 100, 60, false, 5},
      // A gap of a whole window resets the first write: only the last 2 s count.
      {"gap of a window resets first write", {{10, 500}, {99, 4}, {100, 8}}, 100, 60, false, 6},
      {"last write more than a window ago is empty", {{39, 5}}, 100, 60, true, 0},
      {"last write exactly a window ago is zero", {{40, 5}}, 100, 60, false, 0},
      {"no buckets is empty", {}, 100, 60, true, 0},
      {"future buckets are ignored", {{100, 3}, {101, 1000}}, 100, 60, false, 3},
      {"floored to six digits", {{99, 1}, {100, 0}, {98, 0}}, 100, 60, false, 0.333333},
      {"panic window of 6 over the last 6 s", Constant(100, 60, 7), 100, 6, false, 7},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<KpaBucket> sorted = c.buckets;
    std::sort(sorted.begin(), sorted.end(),
              [](const KpaBucket& a, const KpaBucket& b) { return a.second < b.second; });
    const KpaWindow w = KpaWindowAverage(sorted, c.now, c.window);
    EXPECT_EQ(w.empty, c.empty);
    EXPECT_DOUBLE_EQ(w.value, c.want);
  }
}

// The window average as first written: every bucket scanned for the last reset, every bucket
// up to now filtered into the sum. KpaWindowAverage searches less and must agree exactly.
KpaWindow FullScanWindowAverage(const std::vector<KpaBucket>& buckets, int64_t now, int window) {
  KpaWindow out;
  if (window <= 0) return out;
  const int64_t w = window;
  auto end = std::upper_bound(buckets.begin(), buckets.end(), now,
                              [](int64_t s, const KpaBucket& b) { return s < b.second; });
  if (end == buckets.begin()) return out;
  const int64_t last_write = std::prev(end)->second;
  const int64_t since_last = now - last_write;
  if (since_last > w) return out;
  out.empty = false;
  if (since_last >= w) return out;
  int64_t first_write = buckets.front().second;
  for (auto it = std::next(buckets.begin()); it != end; ++it) {
    if (it->second - std::prev(it)->second >= w) first_write = it->second;
  }
  const int64_t window_start = now - w + 1;
  double total = 0;
  for (auto it = buckets.begin(); it != end; ++it) {
    if (it->second >= window_start && it->second >= first_write) total += it->value;
  }
  const int64_t valid =
      std::min(last_write - first_write + 1, w - std::max<int64_t>(since_last, 0));
  out.value = std::floor(total / static_cast<double>(valid) * 1e6) / 1e6;
  return out;
}

TEST(KpaAlgorithm, WindowAverageAgreesWithAFullScan) {
  // Deterministic pseudo-random histories: runs of seconds with values, and gaps from one
  // second to past a whole window, so resets fall before, at and inside the window.
  uint64_t seed = 12345;
  auto next = [&](uint64_t mod) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % mod;
  };
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int window = 1 + static_cast<int>(next(12));
    std::vector<KpaBucket> b;
    int64_t s = static_cast<int64_t>(next(5));
    for (int i = 0; i < 40; ++i) {
      b.push_back({s, static_cast<double>(next(1000)) / 7.0});
      s += next(4) == 0 ? 1 + static_cast<int64_t>(next(2 * window + 2)) : 1;
    }
    for (int64_t now = b.front().second - 1; now <= b.back().second + window + 1; ++now) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " now " + std::to_string(now));
      const KpaWindow want = FullScanWindowAverage(b, now, window);
      const KpaWindow got = KpaWindowAverage(b, now, window);
      ASSERT_EQ(got.empty, want.empty);
      ASSERT_EQ(got.value, want.value);  // exact: the same sums in the same order
      ++checked;
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(KpaAlgorithm, PanicBuckets) {
  struct Case {
    double stable_s;
    double pct;
    int want;
  };
  const std::vector<Case> cases = {
      {60, 10, 6}, {60, 1, 1}, {7, 10, 1}, {61, 10, 7}, {3600, 100, 3600}, {60, 100, 60},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.stable_s) + "s at " + std::to_string(c.pct) + "%");
    EXPECT_EQ(KpaPanicBuckets(Seconds(c.stable_s), c.pct), c.want);
  }
}

TEST(KpaAlgorithm, Scale) {
  const TimePoint now = AtSeconds(1000);
  struct Case {
    std::string name;
    KpaParams params;
    double stable, panic;
    int ready;
    KpaPanicState before;
    int want;
    bool want_panic;
    KpaPanicEvent want_event;
    KpaPanicState after;
  };
  KpaParams def;  // target 70 per replica (100 x 0.7), threshold 2, rates 1000 / 2
  KpaParams t10 = def;
  t10.target = 10;
  t10.max_scale_up_rate = 10;
  t10.max_scale_down_rate = 10;
  KpaParams act3 = t10;
  act3.activation_scale = 3;
  KpaParams unreachable = t10;
  unreachable.reachable = false;
  auto panic_at = [&](double ago, int pods) {
    KpaPanicState s;
    s.panic_time = now - Seconds(ago);
    s.max_panic_pods = pods;
    return s;
  };
  const KpaPanicState calm;
  const std::vector<Case> cases = {
      {"stable ceil of 700 / 70", def, 700, 700, 10, calm, 10, false, KpaPanicEvent::kNone, calm},
      {"stable just over target", def, 70.5, 70, 1, calm, 2, false, KpaPanicEvent::kNone, calm},
      // 0 ready counts as 1 for limits: at most ceil(1000 * 1) = 1000 up.
      {"zero ready counts as one", def, 7000, 70, 0, calm, 100, false, KpaPanicEvent::kNone, calm},
      // Scale-down limited to floor(9 / 2) = 4.
      {"max scale down rate", def, 70, 70, 9, calm, 4, false, KpaPanicEvent::kNone, calm},
      {"unreachable has no scale-down floor", unreachable, 10, 10, 100, calm, 1, false,
       KpaPanicEvent::kNone, calm},
      // Panic pods 30 on 10 ready: 3 >= 2, enter panic.
      {"enter panic at threshold", t10, 100, 300, 10, calm, 30, true, KpaPanicEvent::kEntered,
       panic_at(0, 30)},
      // 19 / 10 = 1.9 < 2: no panic.
      {"just under threshold", t10, 100, 190, 10, calm, 10, false, KpaPanicEvent::kNone, calm},
      // In panic 30 s, desire falls: held at the max.
      {"panic holds max pods", t10, 10, 10, 30, panic_at(30, 30), 30, true, KpaPanicEvent::kHeld,
       panic_at(30, 30)},
      // Exactly a stable window since the panic time: not yet before now, still panic.
      {"panic kept at exactly the window", t10, 10, 10, 30, panic_at(60, 30), 30, true,
       KpaPanicEvent::kHeld, panic_at(60, 30)},
      {"panic left after the window", t10, 10, 10, 30, panic_at(60.001, 30), 3, false,
       KpaPanicEvent::kLeft, calm},
      // Over threshold again: the panic time moves to now and the max grows.
      {"panic extended", t10, 10, 800, 30, panic_at(50, 30), 80, true, KpaPanicEvent::kExtended,
       panic_at(0, 80)},
      // Stable larger than panic in panic mode: take the larger.
      {"panic takes the larger of stable and panic", t10, 500, 90, 5, panic_at(5, 5), 50, true,
       KpaPanicEvent::kNone, panic_at(5, 50)},
      {"activation scale lifts a small desire", act3, 5, 5, 1, calm, 3, false, KpaPanicEvent::kNone,
       calm},
      {"activation scale leaves zero alone", act3, 0, 0, 1, calm, 0, false, KpaPanicEvent::kNone,
       calm},
      // Scale up limited to ceil(10 * 2) = 20.
      {"max scale up rate", t10, 1000, 30, 2, calm, 20, false, KpaPanicEvent::kNone, calm},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    KpaPanicState st = c.before;
    const KpaDecision d = KpaScale(c.params, c.stable, c.panic, c.ready, now, st);
    EXPECT_EQ(d.desired, c.want);
    EXPECT_EQ(d.in_panic, c.want_panic);
    EXPECT_EQ(KpaPanicEventName(d.event), KpaPanicEventName(c.want_event));
    EXPECT_EQ(st, c.after);
  }
}

TEST(KpaAlgorithm, ScaleToZeroGrace) {
  const TimePoint now = AtSeconds(500);
  const Duration grace = Seconds(30);
  struct Case {
    std::string name;
    int desired, current;
    std::optional<double> last_nonzero_ago;  // nullopt: never
    int want;
    bool waiting;
    std::optional<double> after_ago;
  };
  const std::vector<Case> cases = {
      {"non-zero passes and is remembered", 3, 1, 100.0, 3, false, 0.0},
      {"zero within grace holds one", 0, 1, 29.0, 1, true, 29.0},
      {"zero one nanosecond short of grace holds", 0, 2, 29.999999999, 1, true, 29.999999999},
      {"zero at exactly the grace period", 0, 1, 30.0, 0, false, 30.0},
      {"zero after grace", 0, 1, 90.0, 0, false, 90.0},
      {"already at zero stays", 0, 0, 5.0, 0, false, 5.0},
      {"never non-zero goes to zero", 0, 1, std::nullopt, 0, false, std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<TimePoint> last;
    if (c.last_nonzero_ago) last = now - Seconds(*c.last_nonzero_ago);
    const KpaZeroGate g = KpaApplyScaleToZero(c.desired, c.current, now, grace, last);
    EXPECT_EQ(g.desired, c.want);
    EXPECT_EQ(g.waiting, c.waiting);
    ASSERT_EQ(last.has_value(), c.after_ago.has_value());
    if (last) {
      EXPECT_EQ(last->time_since_epoch().count(),
                (now - Seconds(*c.after_ago)).time_since_epoch().count());
    }
  }
}

}  // namespace
}  // namespace aiscale::decide
