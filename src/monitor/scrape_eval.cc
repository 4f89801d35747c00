#include "monitor/scrape_eval.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <unordered_map>

#include "core/numeric.h"
#include "core/signal.h"
#include "monitor/histogram_quantile.h"

namespace aiscale::monitor {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Saturating: milliseconds past ~292 years wrapped in the conversion to nanoseconds, and a
// sample stamped centuries ahead read as "about now". It now reads as far in the future,
// which WorkloadSignals drops as invalid.
TimePoint SampleTime(const Sample& s, TimePoint scrape_at) {
  if (!s.has_timestamp) return scrape_at;
  return TimePoint(Duration(SaturatingMul(s.timestamp_ms, 1'000'000)));
}

// The identity of a series across scrapes: its labels except `le`, sorted.
std::string SeriesKey(const Exposition& e, const Sample& s, Labels* labels) {
  Labels own;
  Labels& l = labels ? *labels : own;
  l.clear();
  for (const LabelView& lv : e.Labels(s)) {
    if (lv.name != "le") l.emplace_back(std::string(lv.name), std::string(lv.value));
  }
  std::sort(l.begin(), l.end());
  std::string key;
  for (const auto& [k, v] : l) {
    key += k;
    key += '\x1f';
    key += v;
    key += '\x1e';
  }
  return key;
}

std::string KeyOf(const Labels& l) {
  std::string key;
  for (const auto& [k, v] : l) key += k + '\x1f' + v + '\x1e';
  return key;
}

// Untyped families named like counters are read as counters (Prometheus' own convention).
MetricType EffectiveType(const MetricFamily& f) {
  if (f.type == MetricType::kUntyped && f.name.ends_with("_total")) return MetricType::kCounter;
  return f.type;
}

enum class Part { kValue, kCounterTotal, kBucket };

bool IsPart(const MetricFamily& f, std::string_view name, Part part) {
  if (!name.starts_with(f.name)) return false;
  std::string_view suffix = name.substr(f.name.size());
  switch (part) {
    case Part::kValue:
      return suffix.empty();
    case Part::kCounterTotal:
      return suffix.empty() || suffix == "_total";
    case Part::kBucket:
      return suffix == "_bucket";
  }
  return false;
}

// Whether to go on: asks `cancelled` every 4096 samples (a stopping daemon does not wait out
// the evaluation of a huge target); once it said yes, stays stopped.
class Budget {
 public:
  explicit Budget(const std::function<bool()>& cancelled) : cancelled_(cancelled) {}
  bool Stopped() {
    if (!stopped_ && cancelled_ && (++n_ & 4095) == 0) stopped_ = cancelled_();
    return stopped_;
  }
  bool stopped() const { return stopped_; }

 private:
  const std::function<bool()>& cancelled_;
  size_t n_ = 0;
  bool stopped_ = false;
};

// Calls fn(sample) for every sample of `sel.metric` that is `part` and matches the selector,
// until `budget` says stop.
template <typename Fn>
void ForEachSample(const Exposition& e, const Selector& sel, Part part, Budget& budget, Fn&& fn) {
  for (const MetricFamily* f : e.FindFamilies(sel.metric)) {
    for (const Sample& s : e.SamplesOf(*f)) {
      if (budget.Stopped()) return;
      if (IsPart(*f, s.name, part) && sel.Matches(e, s)) fn(s);
    }
  }
}

std::vector<SeriesPoint> Gauges(const Selector& sel, const Scrape& cur, Budget& budget) {
  std::vector<SeriesPoint> out;
  const Exposition& e = *cur.exposition;
  ForEachSample(e, sel, Part::kValue, budget, [&](const Sample& s) {
    SeriesPoint p;
    SeriesKey(e, s, &p.labels);
    p.value = s.value;
    p.at = SampleTime(s, cur.at);
    out.push_back(std::move(p));
  });
  return out;
}

struct Reading {
  double value;
  TimePoint at;
};

std::vector<SeriesPoint> Rates(const Selector& sel, std::span<const Scrape> history,
                               Budget& budget) {
  // Older scrapes indexed by series; the current one is walked directly.
  std::vector<std::unordered_map<std::string, Reading>> older(history.size() - 1);
  for (size_t i = 0; i + 1 < history.size(); ++i) {
    const Exposition& e = *history[i].exposition;
    ForEachSample(e, sel, Part::kCounterTotal, budget, [&](const Sample& s) {
      older[i].emplace(SeriesKey(e, s, nullptr), Reading{s.value, SampleTime(s, history[i].at)});
    });
  }
  std::vector<SeriesPoint> out;
  const Scrape& cur = history.back();
  ForEachSample(*cur.exposition, sel, Part::kCounterTotal, budget, [&](const Sample& s) {
    SeriesPoint p;
    const std::string key = SeriesKey(*cur.exposition, s, &p.labels);
    std::vector<double> values;
    TimePoint first{};
    for (const auto& idx : older) {
      auto it = idx.find(key);
      if (it == idx.end()) continue;
      if (values.empty()) first = it->second.at;
      values.push_back(it->second.value);
    }
    if (values.empty()) return;  // new series: no rate until the next scrape
    values.push_back(s.value);
    p.at = SampleTime(s, cur.at);
    const double dt = ToSeconds(p.at - first);
    if (dt <= 0) return;
    p.value = CounterIncrease(values) / dt;
    out.push_back(std::move(p));
  });
  return out;
}

bool ParseLe(std::string_view le, double* out) {
  if (!le.empty() && le.front() == '+') le.remove_prefix(1);
  auto [p, ec] = std::from_chars(le.data(), le.data() + le.size(), *out);
  return !le.empty() && ec == std::errc() && p == le.data() + le.size();
}

struct HistSeries {
  Labels labels;
  std::map<double, double> buckets;  // le -> cumulative count
  TimePoint at;
};
using HistIndex = std::unordered_map<std::string, HistSeries>;

Result<HistIndex> GroupBuckets(const Selector& sel, const Scrape& scrape, Budget& budget) {
  const Exposition& e = *scrape.exposition;
  HistIndex index;
  Status bad;
  ForEachSample(e, sel, Part::kBucket, budget, [&](const Sample& s) {
    double le = 0;
    if (!ParseLe(e.Label(s, "le"), &le)) {
      bad = Status::Invalid("histogram " + sel.metric + " has a bucket with le=\"" +
                            std::string(e.Label(s, "le")) + "\"");
      return;
    }
    Labels labels;
    HistSeries& h = index[SeriesKey(e, s, &labels)];
    if (h.buckets.empty()) h.labels = std::move(labels);
    h.buckets[le] = s.value;
    h.at = SampleTime(s, scrape.at);
  });
  if (!bad.ok()) return bad;
  return index;
}

// The increase of each bucket over the window; buckets seen only once are left out.
std::vector<Bucket> BucketIncreases(const std::string& key, const HistSeries& cur,
                                    const std::vector<HistIndex>& older) {
  std::vector<Bucket> out;
  for (const auto& [le, count] : cur.buckets) {
    std::vector<double> readings;
    for (const HistIndex& idx : older) {
      auto it = idx.find(key);
      if (it == idx.end()) continue;
      auto b = it->second.buckets.find(le);
      if (b != it->second.buckets.end()) readings.push_back(b->second);
    }
    readings.push_back(count);
    const double inc = CounterIncrease(readings);
    if (!std::isnan(inc)) out.push_back(Bucket{le, inc});
  }
  return out;
}

Result<std::vector<SeriesPoint>> Quantiles(const Selector& sel, std::span<const Scrape> history,
                                           Budget& budget) {
  std::vector<HistIndex> older;
  for (size_t i = 0; i + 1 < history.size(); ++i) {
    ASSIGN_OR_RETURN(HistIndex idx, GroupBuckets(sel, history[i], budget));
    older.push_back(std::move(idx));
  }
  ASSIGN_OR_RETURN(HistIndex cur, GroupBuckets(sel, history.back(), budget));
  std::vector<SeriesPoint> out;
  std::map<double, double> merged;  // for aggregation: increases summed by le
  TimePoint merged_at{};
  for (const auto& [key, h] : cur) {
    std::vector<Bucket> inc = BucketIncreases(key, h, older);
    if (inc.empty()) continue;  // first scrape of this series: no window yet
    if (sel.aggregation == Aggregation::kNone) {
      out.push_back(SeriesPoint{h.labels, HistogramQuantile(sel.quantile, std::move(inc)), h.at});
      continue;
    }
    for (const Bucket& b : inc) merged[b.upper_bound] += b.count;
    merged_at = std::max(merged_at, h.at);
  }
  if (sel.aggregation != Aggregation::kNone && !merged.empty()) {
    std::vector<Bucket> buckets;
    for (const auto& [le, count] : merged) buckets.push_back(Bucket{le, count});
    out.push_back(SeriesPoint{{}, HistogramQuantile(sel.quantile, std::move(buckets)), merged_at});
  }
  std::sort(out.begin(), out.end(),
            [](const SeriesPoint& a, const SeriesPoint& b) { return a.labels < b.labels; });
  return out;
}

std::vector<SeriesPoint> Aggregate(Aggregation agg, std::vector<SeriesPoint> points) {
  if (agg == Aggregation::kNone || points.empty()) return points;
  SeriesPoint r;
  r.at = points.front().at;
  double sum = 0;
  double best = kNaN;
  for (const SeriesPoint& p : points) {
    sum += p.value;
    r.at = std::max(r.at, p.at);
    if (std::isnan(p.value)) continue;
    if (std::isnan(best) || (agg == Aggregation::kMax ? p.value > best : p.value < best)) {
      best = p.value;
    }
  }
  switch (agg) {
    case Aggregation::kSum:
      r.value = sum;
      break;
    case Aggregation::kAvg:
      r.value = sum / static_cast<double>(points.size());
      break;
    default:
      r.value = best;
  }
  return {r};
}

Selector Plain(std::string_view metric, Aggregation agg = Aggregation::kNone,
               double quantile = 0.99) {
  Selector s;
  s.metric = std::string(metric);
  s.aggregation = agg;
  s.quantile = quantile;
  return s;
}

Result<std::vector<SeriesPoint>> UsedFraction(const PresetSignal& ps,
                                              std::span<const Scrape> history,
                                              const std::function<bool()>& cancelled) {
  for (size_t i = 0; i + 1 < ps.metrics.size(); i += 2) {
    auto used = EvaluateSelector(Plain(ps.metrics[i]), history, cancelled);
    if (!used.ok() && used.status().IsNotFound()) continue;
    if (!used.ok()) return used.status();
    ASSIGN_OR_RETURN(std::vector<SeriesPoint> free,
                     EvaluateSelector(Plain(ps.metrics[i + 1]), history, cancelled));
    std::unordered_map<std::string, const SeriesPoint*> by_key;
    for (const SeriesPoint& f : free) by_key[KeyOf(f.labels)] = &f;
    std::vector<SeriesPoint> out;
    for (SeriesPoint& u : *used) {
      auto it = by_key.find(KeyOf(u.labels));
      if (it == by_key.end()) continue;
      const double total = u.value + it->second->value;
      u.value = total > 0 ? u.value / total : kNaN;
      u.at = std::max(u.at, it->second->at);
      out.push_back(std::move(u));
    }
    return out;
  }
  return Status::NotFound("no metric " + std::string(ps.metrics.empty() ? "" : ps.metrics[0]) +
                          " in the exposition");
}

// A phase reported as one 0/1 gauge per phase label, or as a plain number.
Result<std::vector<SeriesPoint>> PhaseOf(const PresetSignal& ps, std::span<const Scrape> history,
                                         const std::function<bool()>& cancelled) {
  ASSIGN_OR_RETURN(std::vector<SeriesPoint> points,
                   EvaluateSelector(Plain(ps.metrics.at(0)), history, cancelled));
  std::map<Labels, SeriesPoint> by_series;  // labels without `phase`
  for (SeriesPoint& p : points) {
    auto it = std::find_if(p.labels.begin(), p.labels.end(),
                           [](const auto& l) { return l.first == "phase"; });
    if (it == p.labels.end()) {
      by_series.emplace(p.labels, p);
      continue;
    }
    double number = -1;
    for (auto ph : {signals::Phase::kLoad, signals::Phase::kCompute, signals::Phase::kEval}) {
      if (it->second == signals::PhaseName(ph)) number = static_cast<int>(ph);
    }
    if (number < 0 || !(p.value > 0.5)) continue;  // unknown phase, or not the active one
    p.labels.erase(it);
    SeriesPoint q{p.labels, number, p.at};
    by_series.insert_or_assign(p.labels, q);
  }
  std::vector<SeriesPoint> out;
  for (auto& [labels, p] : by_series) out.push_back(std::move(p));
  return out;
}

}  // namespace

Result<std::vector<SeriesPoint>> EvaluateSelector(const Selector& sel,
                                                  std::span<const Scrape> history,
                                                  const std::function<bool()>& cancelled) {
  if (history.empty()) return Status::Internal("no scrape to evaluate " + sel.metric + " on");
  auto fams = history.back().exposition->FindFamilies(sel.metric);
  if (fams.empty()) return Status::NotFound("no metric " + sel.metric + " in the exposition");
  Budget budget(cancelled);
  Result<std::vector<SeriesPoint>> out = std::vector<SeriesPoint>{};
  switch (EffectiveType(*fams.front())) {
    case MetricType::kCounter:
      out = Aggregate(sel.aggregation, Rates(sel, history, budget));
      break;
    case MetricType::kHistogram:
    case MetricType::kGaugeHistogram:
      out = Quantiles(sel, history, budget);
      break;
    default:
      out = Aggregate(sel.aggregation, Gauges(sel, history.back(), budget));
  }
  if (budget.stopped()) return Status::Unavailable("cancelled while evaluating " + sel.metric);
  return out;
}

Result<std::vector<SeriesPoint>> EvaluatePresetSignal(const PresetSignal& ps,
                                                      std::span<const Scrape> history,
                                                      const std::function<bool()>& cancelled) {
  switch (ps.kind) {
    case PresetKind::kUsedFraction:
      return UsedFraction(ps, history, cancelled);
    case PresetKind::kPhase:
      return PhaseOf(ps, history, cancelled);
    case PresetKind::kSelect:
      break;
  }
  for (std::string_view m : ps.metrics) {
    auto r = EvaluateSelector(Plain(m, ps.aggregation, ps.quantile), history, cancelled);
    if (r.ok() || !r.status().IsNotFound()) return r;
  }
  std::string names;
  for (std::string_view m : ps.metrics) names += (names.empty() ? "" : ", ") + std::string(m);
  return Status::NotFound("none of " + names + " is in the exposition");
}

}  // namespace aiscale::monitor
