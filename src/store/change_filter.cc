#include "store/change_filter.h"

namespace aiscale::store {

// Assigns into `k` field by field, so a changed decision reuses the strings' and the inputs'
// storage instead of allocating a new key (most fields are the same as before).
void ChangeFilter::AssignKey(const Decision& d, Key& k) {
  k.policy = d.policy;
  k.rule = d.recommendation.rule;
  k.constrain_reason = d.constrain_reason;
  k.engine_detail = d.engine_detail;
  k.current = d.current;
  k.ready = d.ready;
  k.desired = d.recommendation.desired;
  k.stabilized = d.stabilized;
  k.constrained = d.constrained;
  k.valid = d.recommendation.valid;
  k.vetoed = d.vetoed;
  k.action = d.action;
  k.action_code = d.action_code;
  k.pool_wanted = d.pool.wanted;
  k.pool_granted = d.pool.granted;
  k.pool_reason = d.pool.reason;
  k.asleep = d.asleep;
  k.asleep_wanted = d.recommendation.asleep;
  k.inputs.resize(d.inputs.size());
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    k.inputs[i].first = d.inputs[i].name;
    k.inputs[i].second = d.inputs[i].status;
  }
}

ChangeFilter::Key ChangeFilter::KeyOf(const Decision& d) {
  Key k;
  AssignKey(d, k);
  return k;
}

// Field by field against the stored key, without building a Key for every tick. Left out on
// purpose: reasons (they carry this tick's numbers), facts and signal values (they jitter
// every tick), times. A scale is always stored: it is an event, not a state.
bool ChangeFilter::SameAs(const Key& k, const Decision& d) {
  if (d.action == Action::kScaled) return false;
  if (k.current != d.current || k.ready != d.ready || k.desired != d.recommendation.desired ||
      k.stabilized != d.stabilized || k.constrained != d.constrained ||
      k.valid != d.recommendation.valid || k.vetoed != d.vetoed || k.action != d.action ||
      k.action_code != d.action_code || k.pool_wanted != d.pool.wanted ||
      k.pool_granted != d.pool.granted || k.asleep != d.asleep ||
      k.asleep_wanted != d.recommendation.asleep) {
    return false;
  }
  if (k.rule != d.recommendation.rule || k.constrain_reason != d.constrain_reason ||
      k.policy != d.policy || k.engine_detail != d.engine_detail ||
      k.pool_reason != d.pool.reason) {
    return false;
  }
  if (k.inputs.size() != d.inputs.size()) return false;
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    if (k.inputs[i].second != d.inputs[i].status || k.inputs[i].first != d.inputs[i].name) {
      return false;
    }
  }
  return true;
}

bool ChangeFilter::Changed(const Decision& a, const Decision& b) { return !SameAs(KeyOf(a), b); }

ChangeFilter::Offer ChangeFilter::Consider(const Decision& d) {
  if (keeps_everything()) return {};
  auto it = last_.find(d.workload);
  return ConsiderEntry(d, it == last_.end() ? nullptr : &it->second);
}

ChangeFilter::Offer ChangeFilter::Consider(const Decision& d, size_t position) {
  if (keeps_everything()) return {};
  if (Entry** e = by_position_.Find(position, d.workload)) return ConsiderEntry(d, *e);
  auto it = last_.find(d.workload);
  const Offer o = ConsiderEntry(d, it == last_.end() ? nullptr : &it->second);
  if (it == last_.end()) it = last_.find(d.workload);
  by_position_.Remember(position, d.workload, &it->second);
  return o;
}

ChangeFilter::Offer ChangeFilter::ConsiderEntry(const Decision& d, Entry* e) {
  if (!e) {
    last_.emplace(d.workload, Entry{KeyOf(d), d.at, 0});
    return {};
  }
  if (!SameAs(e->key, d)) {
    AssignKey(d, e->key);
    e->stored_at = d.at;
    e->unchanged = 0;
    return {};
  }
  ++e->unchanged;
  if (d.at - e->stored_at < heartbeat_) return {Verdict::kSkip, 0, {}};
  const Offer o{Verdict::kHeartbeat, e->unchanged, d.at - e->stored_at};
  e->stored_at = d.at;
  e->unchanged = 0;
  return o;
}

Decision ChangeFilter::Stamp(const Decision& d, const Offer& o) {
  Decision h = d;
  h.unchanged_ticks = o.ticks;
  h.unchanged_for = o.since;
  return h;
}

}  // namespace aiscale::store
