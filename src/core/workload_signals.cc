#include "core/workload_signals.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "core/numeric.h"
#include "core/signal.h"

namespace aiscale {

std::string_view SignalStatusName(SignalStatus s) {
  switch (s) {
    case SignalStatus::kOk:
      return "ok";
    case SignalStatus::kMissing:
      return "missing";
    case SignalStatus::kStale:
      return "stale";
    case SignalStatus::kInvalid:
      return "invalid";
    case SignalStatus::kFetchFailed:
      return "fetch_failed";
    case SignalStatus::kPartial:
      return "partial";
  }
  return "unknown";
}

size_t WorkloadSignals::IndexOf(std::string_view signal) const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].name == signal) return i;
  }
  return kNone;
}

const WorkloadSignals::Entry* WorkloadSignals::Find(std::string_view signal) const {
  const size_t i = IndexOf(signal);
  return i == kNone ? nullptr : &entries_[i];
}

size_t WorkloadSignals::Slot(std::string_view signal) {
  if (const size_t i = IndexOf(signal); i != kNone) return i;
  entries_.push_back(Entry{std::string(signal),
                           signals::ValidRange(signal),
                           {},
                           false,
                           TimeSeries(history_capacity_),
                           TimeSeries(history_capacity_)});
  return entries_.size() - 1;
}

namespace {

// Past this many observations duplicates are found by a hash map, below by a scan.
constexpr size_t kScanUpTo = 16;
// Instances named in a detail, at most.
constexpr int kNamed = 3;

void NameOne(std::string& names, int count, std::string_view name) {
  if (count > kNamed) return;
  if (!names.empty()) names += ", ";
  names += count == kNamed ? std::string_view("...") : name;
}

// True when `obs` are per-replica series: one says so, or one names a current replica.
bool NamesReplicas(const std::vector<Observation>& obs, const ReplicaSet& replicas) {
  for (const Observation& o : obs) {
    if (o.per_replica || (!o.instance.empty() && replicas.Find(o.instance) != ReplicaSet::kNone)) {
      return true;
    }
  }
  return false;
}

// "45", "0.5": seconds as a person writes them.
std::string SecondsText(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", ToSeconds(d));
  return buf;
}

void AppendCount(std::string& s, int n, std::string_view what) {
  if (n == 0) return;
  if (!s.empty() && s.back() != '(') s += ", ";
  s += std::to_string(n);
  s += ' ';
  s += what;
}

// True when `obs` name, in order, the instances kept last time.
bool SameInstances(const std::vector<Observation>& obs, const std::vector<InstanceValue>& kept) {
  if (obs.size() != kept.size()) return false;
  for (size_t i = 0; i < obs.size(); ++i) {
    if (obs[i].instance != kept[i].instance) return false;
  }
  return true;
}

}  // namespace

bool WorkloadSignals::IsKept(const SignalSnapshot& snap, size_t kept,
                             std::string_view instance) const {
  if (!seen_.empty()) return seen_.count(instance) > 0;
  for (size_t i = 0; i < kept; ++i) {
    if (snap.instances[i].instance == instance) return true;
  }
  return false;
}

size_t WorkloadSignals::PriorByName(const SignalSnapshot& snap, size_t kept,
                                    const std::string& instance) {
  if (kept < kScanUpTo && seen_.empty()) {
    for (size_t i = 0; i < kept; ++i) {
      if (snap.instances[i].instance == instance) return i;
    }
    return kNone;
  }
  if (seen_.empty()) {  // grown past the scan: index what is kept so far
    for (size_t i = 0; i < kept; ++i) seen_.emplace(snap.instances[i].instance, i);
  }
  const auto [it, added] = seen_.emplace(instance, kept);
  return added ? kNone : it->second;
}

size_t WorkloadSignals::PriorOfReplica(const SignalSnapshot& snap, int replica,
                                       const std::string& instance) const {
  for (size_t i = last_of_replica_[static_cast<size_t>(replica)]; i != kNone; i = prev_same_[i]) {
    if (snap.instances[i].instance == instance) return i;
  }
  return kNone;
}

bool WorkloadSignals::Keep(SignalSnapshot& snap, size_t& kept, const Observation& o, int replica,
                           bool distinct) {
  if (!distinct && !o.instance.empty()) {
    // A duplicate names the same replica, so only that replica's instances (one, or one per
    // GPU) are compared; long pod names that differ only at the end made the full scan a
    // tenth of a 10,000-workload tick.
    const size_t prior = replica != ReplicaSet::kNone ? PriorOfReplica(snap, replica, o.instance)
                                                      : PriorByName(snap, kept, o.instance);
    if (prior != kNone) {  // a duplicate: the newer sample of the instance stays
      InstanceValue& iv = snap.instances[prior];
      if (o.at >= iv.at) iv.value = o.value, iv.at = o.at, iv.ready = o.ready;
      return false;
    }
  }
  if (kept == snap.instances.size()) snap.instances.emplace_back();
  if (replica != ReplicaSet::kNone) {
    prev_same_.resize(kept + 1);
    prev_same_[kept] = last_of_replica_[static_cast<size_t>(replica)];
    last_of_replica_[static_cast<size_t>(replica)] = kept;
  }
  InstanceValue& iv = snap.instances[kept++];
  // Written over the last ingest's entry: a pod's name is usually the same as last time and
  // longer than a short string, so assigning into the old string keeps its buffer.
  iv.instance.assign(o.instance);
  iv.value = o.value;
  iv.at = o.at;
  iv.ready = o.ready;
  return true;
}

void WorkloadSignals::Ingest(size_t slot, const std::vector<Observation>& obs, TimePoint now,
                             Duration staleness, const ReplicaSet* replicas) {
  Entry& e = entries_[slot];
  // Rebuilt in place, reusing the buffers of the last ingest: with 10,000 workloads a tick,
  // fresh vectors per ingest cost more than the filtering itself.
  SignalSnapshot& snap = e.snap;
  snap.detail.clear();
  const signals::Range range = e.range;
  const bool per_replica = replicas != nullptr && NamesReplicas(obs, *replicas);
  last_of_replica_.assign(per_replica ? replicas->size() : 0, kNone);
  if (!seen_.empty()) seen_.clear();  // O(buckets): skipped when nothing to clear
  // No reallocation while ingesting: seen_ may hold views of the kept instances' names.
  snap.instances.reserve(obs.size());
  // The steady state: the same series in the same order as last time, when they were all
  // kept and so all distinct. Then none is a duplicate, and the search for one is skipped.
  const bool distinct = e.all_kept && SameInstances(obs, snap.instances);
  Drops d;
  size_t kept = 0;
  dropped_.clear();
  for (size_t i = 0; i < obs.size(); ++i) {
    const Observation& o = obs[i];
    int replica = ReplicaSet::kNone;
    if (per_replica && !o.instance.empty()) {
      replica = replicas->Find(o.instance);
      if (replica == ReplicaSet::kNone) {
        NameOne(d.foreign_names, ++d.foreign, o.instance);
        continue;
      }
    }
    if (!range.Contains(o.value)) {
      dropped_.push_back({i, Drop::kInvalid});
    } else if (o.at > AddSaturating(now, staleness)) {
      // A clock far off, or a timestamp saturated from centuries ahead.
      dropped_.push_back({i, Drop::kFuture});
    } else if (o.at < now - staleness) {
      dropped_.push_back({i, Drop::kStale});
    } else {
      if (!Keep(snap, kept, o, replica, distinct)) ++d.duplicates;
    }
  }
  // A dropped sample of an instance that also has a kept one is a duplicate series (an old
  // one beside the live one), not missing data.
  for (const auto& [i, why] : dropped_) {
    if (!obs[i].instance.empty() && IsKept(snap, kept, obs[i].instance)) {
      ++d.duplicates;
    } else {
      ++(why == Drop::kInvalid ? d.invalid : why == Drop::kFuture ? d.future : d.stale);
    }
  }
  snap.instances.resize(kept);
  e.all_kept = kept == obs.size();
  for (size_t r = 0; r < last_of_replica_.size(); ++r) {
    if (last_of_replica_[r] == kNone && replicas->ready(r))
      NameOne(d.silent_names, ++d.silent_replicas, replicas->name(r));
  }
  snap.sum = 0;
  snap.at = TimePoint{};
  for (const InstanceValue& iv : snap.instances) {
    // Saturating at the largest finite double: two valid 1e308s must not sum to infinity,
    // which every policy would read as a NaN somewhere down the line.
    snap.sum = ClampDouble(snap.sum + iv.value, -DBL_MAX, DBL_MAX, 0);
    if (iv.at > snap.at) snap.at = iv.at;
  }
  snap.mean = kept > 0 ? snap.sum / static_cast<double>(kept) : 0;
  snap.rejected = d.invalid + d.stale + d.future;
  snap.foreign = d.foreign;
  snap.duplicates = d.duplicates;
  Describe(d, obs.size(), staleness, snap);
  if (kept > 0) {
    // One history point per ingest, at the newest measurement time. A partial reading (some
    // replicas silent or dropped) is no lower than the last point: a sum over fewer replicas
    // reads low, and once data is complete again a window over those low points scaled down
    // (KPA 4 -> 3 after two ticks with 2 of 4 replicas answering).
    double sum = snap.sum, mean = snap.mean;
    if (!snap.complete()) {
      if (const auto last = e.sums.Latest()) sum = std::max(sum, last->value);
      if (const auto last = e.means.Latest()) mean = std::max(mean, last->value);
    }
    e.sums.Append(snap.at, sum);
    e.means.Append(snap.at, mean);
  }
}

void WorkloadSignals::Describe(const Drops& d, size_t total, Duration staleness,
                               SignalSnapshot& snap) {
  std::string& s = snap.detail;
  const int dropped = d.invalid + d.stale + d.future;
  // Built only when something was dropped: every ingest of every workload passes here, and
  // formatting the staleness alone was 15% of the policy-mix tick's instructions.
  std::string why;
  if (dropped > 0) {
    AppendCount(why, d.invalid, "NaN, infinite or out of range");
    if (d.stale > 0) AppendCount(why, d.stale, "older than " + SecondsText(staleness) + " s");
    AppendCount(why, d.future, "stamped in the future");
  }
  if (!snap.instances.empty()) {
    snap.status = dropped + d.silent_replicas > 0 ? SignalStatus::kPartial : SignalStatus::kOk;
    if (dropped > 0) {
      s = "dropped " + std::to_string(dropped) + " of " + std::to_string(total) + " (" + why + ")";
    }
    if (d.silent_replicas > 0) {
      if (!s.empty()) s += "; ";
      s += std::to_string(d.silent_replicas) + " ready replica(s) without a value (" +
           d.silent_names + ")";
    }
  } else if (total == 0) {
    snap.status = SignalStatus::kMissing;
    s = "no observations";
  } else if (dropped == 0) {
    snap.status = SignalStatus::kMissing;
    s = "no series of the engine's replicas";
  } else {
    snap.status = d.invalid + d.future > 0 ? SignalStatus::kInvalid : SignalStatus::kStale;
    s = "all " + std::to_string(dropped) + " values dropped (" + why + ")";
  }
  if (d.foreign > 0) {
    if (!s.empty()) s += "; ";
    s += "ignored " + std::to_string(d.foreign) + " foreign series (" + d.foreign_names +
         ": not among the engine's replicas)";
  }
  if (d.duplicates > 0) {
    if (!s.empty()) s += "; ";
    s += "counted " + std::to_string(d.duplicates) + " duplicate series once (newest sample)";
  }
}

void WorkloadSignals::MarkFetchFailed(size_t slot, std::string detail) {
  Entry& e = entries_[slot];
  e.snap = SignalSnapshot{};
  e.all_kept = false;
  e.snap.status = SignalStatus::kFetchFailed;
  e.snap.detail = std::move(detail);
}

const SignalSnapshot& WorkloadSignals::Get(std::string_view signal) const {
  static const SignalSnapshot kNever = [] {
    SignalSnapshot s;
    s.detail = "never observed";
    return s;
  }();
  const Entry* e = Find(signal);
  return e ? e->snap : kNever;
}

const TimeSeries& WorkloadSignals::SumHistory(std::string_view signal) const {
  static const TimeSeries kEmpty(1);
  const Entry* e = Find(signal);
  return e ? e->sums : kEmpty;
}

const TimeSeries& WorkloadSignals::MeanHistory(std::string_view signal) const {
  static const TimeSeries kEmpty(1);
  const Entry* e = Find(signal);
  return e ? e->means : kEmpty;
}

std::vector<std::string> WorkloadSignals::Names() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace aiscale
