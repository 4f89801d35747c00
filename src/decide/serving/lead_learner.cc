#include "decide/serving/lead_learner.h"

#include <algorithm>
#include <vector>

#include "decide/text.h"

namespace aiscale::decide::serving {
namespace {
constexpr double kWeight = 1.0 / 3;  // of each new measurement
constexpr size_t kSize = 7;          // the stored vector (lead_learner.h)
}  // namespace

LeadLearner::LeadLearner(double prior_s, PersistentState& state, std::string_view prefix, Kind kind)
    : prior_s_(std::max(0.0, prior_s)),
      kind_(kind),
      state_(state),
      key_(StrCat(prefix, kind == Kind::kWake ? "wake" : "lead")) {}

bool LeadLearner::Times(const Counts& c, int before, int slept, int slept_ready) const {
  if (c.current <= before || c.ready >= c.current) return false;
  // Sleepers woken: fewer kept, or fewer asleep (a woken one may be replaced by a new sleeper
  // still loading, which keeps the tier's size).
  const int woken = std::max(slept - c.asleep, slept_ready - c.asleep_ready);
  if (kind_ == Kind::kColdStart) return woken <= 0;
  // A wake: every replica added came from sleepers that were asleep (a loading one would add
  // the rest of its cold start), and the earlier ones were all ready (else the wait would
  // include their cold start).
  const int added = c.current - before;
  return slept_ready - c.asleep_ready >= added && c.ready >= before;
}

double LeadLearner::estimate() const {
  const std::vector<double>* v = state_.FindVec(key_);
  return v && v->size() >= 6 ? (*v)[0] : prior_s_;
}

int LeadLearner::measurements() const {
  const std::vector<double>* v = state_.FindVec(key_);
  return v && v->size() >= 6 ? static_cast<int>((*v)[1]) : 0;
}

double LeadLearner::Observe(const Counts& c, double now_s) {
  std::vector<double>& v = state_.Vec(key_);
  if (v.size() == 6) v.push_back(v[5]);  // a state from before asleep_ready was kept
  if (v.size() != kSize) v = {prior_s_, 0, static_cast<double>(c.current), -1, 0, 0, 0};
  const int slept = static_cast<int>(v[5]);
  const int slept_ready = static_cast<int>(v[6]);
  v[5] = c.asleep;
  v[6] = c.asleep_ready;
  const bool pending = v[3] >= 0;
  // Sleepers woken into the awake count this tick (a tier that only shrank woke nobody).
  const bool woke = c.current > v[2] && (c.asleep < slept || c.asleep_ready < slept_ready);
  if (pending && (c.current < v[4] || (kind_ == Kind::kColdStart && woke))) {
    // Asked for fewer before they came, or sleepers woke into the count being waited on (they
    // would end a cold start's wait early): nothing to measure.
    v[3] = -1;
  } else if (pending && c.ready >= v[4]) {
    const double took = std::max(0.0, now_s - v[3]);
    v[0] += kWeight * (took - v[0]);
    v[1] += 1;
    v[3] = -1;
  }
  if (v[3] < 0 && Times(c, static_cast<int>(v[2]), slept, slept_ready)) {
    v[3] = now_s;
    v[4] = c.current;
  }
  v[2] = c.current;
  return v[0];
}

}  // namespace aiscale::decide::serving
