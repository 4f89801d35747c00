#include "decide/serving/lead_learner.h"

#include <algorithm>
#include <vector>

#include "decide/text.h"

namespace aiscale::decide::serving {
namespace {
constexpr double kWeight = 1.0 / 3;  // of each new measurement
}

LeadLearner::LeadLearner(double prior_s, PersistentState& state, std::string_view prefix)
    : prior_s_(std::max(0.0, prior_s)), state_(state), key_(StrCat(prefix, "lead")) {}

double LeadLearner::estimate() const {
  const std::vector<double>* v = state_.FindVec(key_);
  return v && v->size() == 6 ? (*v)[0] : prior_s_;
}

int LeadLearner::measurements() const {
  const std::vector<double>* v = state_.FindVec(key_);
  return v && v->size() == 6 ? static_cast<int>((*v)[1]) : 0;
}

double LeadLearner::Observe(int current, int ready, int asleep, double now_s) {
  std::vector<double>& v = state_.Vec(key_);
  if (v.size() != 6) v = {prior_s_, 0, static_cast<double>(current), -1, 0, 0};
  const bool woke = asleep < v[5];
  v[5] = asleep;
  const bool pending = v[3] >= 0;
  if (pending && current < v[4]) {
    v[3] = -1;  // asked for fewer before they came: nothing to measure
  } else if (pending && ready >= v[4]) {
    const double took = std::max(0.0, now_s - v[3]);
    v[0] += kWeight * (took - v[0]);
    v[1] += 1;
    v[3] = -1;
  }
  if (current > v[2] && ready < current && v[3] < 0 && !woke) {
    v[3] = now_s;
    v[4] = current;
  }
  v[2] = current;
  return v[0];
}

}  // namespace aiscale::decide::serving
