#include "core/workload_signals.h"

#include <algorithm>
#include <cmath>

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
                           TimeSeries(history_capacity_),
                           TimeSeries(history_capacity_)});
  return entries_.size() - 1;
}

void WorkloadSignals::Ingest(size_t slot, const std::vector<Observation>& obs, TimePoint now,
                             Duration staleness) {
  Entry& e = entries_[slot];
  // Rebuilt in place, reusing the buffers of the last ingest: with 10,000 workloads a tick,
  // fresh vectors per ingest cost more than the filtering itself.
  SignalSnapshot& snap = e.snap;
  snap.status = SignalStatus::kMissing;
  snap.detail.clear();
  // Written over the last ingest's entries: a pod's name is usually the same as last time and
  // longer than a short string, so assigning into the old string keeps its buffer where
  // clear() and push_back would free and allocate one per pod per tick.
  size_t kept = 0;
  snap.sum = 0;
  snap.mean = 0;
  snap.at = TimePoint{};
  const signals::Range range = e.range;
  int stale = 0, invalid = 0;
  for (const Observation& o : obs) {
    if (!range.Contains(o.value)) {
      ++invalid;
      continue;
    }
    if (o.at < now - staleness || o.at > now + staleness) {
      ++stale;
      continue;
    }
    if (kept == snap.instances.size()) snap.instances.emplace_back();
    InstanceValue& iv = snap.instances[kept++];
    iv.instance.assign(o.instance);
    iv.value = o.value;
    iv.at = o.at;
    iv.ready = o.ready;
    snap.sum += o.value;
    if (o.at > snap.at) snap.at = o.at;
  }
  snap.instances.resize(kept);
  snap.rejected = stale + invalid;
  if (!snap.instances.empty()) {
    snap.status = SignalStatus::kOk;
    snap.mean = snap.sum / static_cast<double>(snap.instances.size());
    if (snap.rejected > 0) {
      snap.detail = "dropped " + std::to_string(invalid) + " invalid and " + std::to_string(stale) +
                    " stale of " + std::to_string(obs.size());
    }
    // One history point per ingest, at the newest measurement time.
    e.sums.Append(snap.at, snap.sum);
    e.means.Append(snap.at, snap.mean);
  } else if (obs.empty()) {
    snap.status = SignalStatus::kMissing;
    snap.detail = "no observations";
  } else if (invalid > 0) {
    snap.status = SignalStatus::kInvalid;
    snap.detail = std::to_string(invalid) + " of " + std::to_string(obs.size()) +
                  " values NaN, infinite or out of range";
    if (stale > 0) snap.detail += ", " + std::to_string(stale) + " stale";
  } else {
    snap.status = SignalStatus::kStale;
    snap.detail = "all " + std::to_string(obs.size()) + " values older than " +
                  std::to_string(ToSeconds(staleness)) + " s";
  }
}

void WorkloadSignals::MarkFetchFailed(size_t slot, std::string detail) {
  Entry& e = entries_[slot];
  e.snap = SignalSnapshot{};
  e.snap.status = SignalStatus::kFetchFailed;
  e.snap.detail = std::move(detail);
}

const SignalSnapshot& WorkloadSignals::Get(std::string_view signal) const {
  static const SignalSnapshot kNever{SignalStatus::kMissing, "never observed", {}, 0, 0, {}, 0};
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
