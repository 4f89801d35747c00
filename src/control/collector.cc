#include "control/collector.h"

#include <chrono>

namespace aiscale::control {
namespace {

std::string Secs(Duration d) {
  const double s = ToSeconds(d);
  std::string out = std::to_string(s);
  out.erase(out.find_last_not_of('0') + 1);
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

}  // namespace

Collector::Collector(Executor& executor, Telemetry* telemetry)
    : executor_(executor), telemetry_(telemetry) {
  if (telemetry_) {
    telemetry_->DeclareHistogram("aiscale_fetch_duration_seconds",
                                 "Time one batch of signal fetches took, by source.",
                                 {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
    telemetry_->DeclareCounter("aiscale_fetches_total", "Signal fetches completed, by source.");
    telemetry_->DeclareCounter("aiscale_fetch_errors_total",
                               "Signal fetches that failed or missed their deadline, by source "
                               "and error kind.");
  }
}

size_t Collector::Add(const WorkloadRef& ref, const std::vector<CollectSignal>& signals) {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<size_t> ids;
  for (const CollectSignal& s : signals) {
    Slot slot;
    slot.sig = s;
    slot.query = MetricQuery{ref, s.signal, s.expression, s.timeout, s.max_age};
    if (state_->free_slots.empty()) {
      ids.push_back(state_->slots.size());
      state_->slots.push_back(std::move(slot));
    } else {
      ids.push_back(state_->free_slots.back());
      state_->free_slots.pop_back();
      Slot& reused = state_->slots[ids.back()];
      slot.generation = reused.generation;
      reused = std::move(slot);
    }
    state_->sent.erase(s.source);  // the source's next batch differs
  }
  if (!state_->free_ids.empty()) {
    const size_t id = state_->free_ids.back();
    state_->free_ids.pop_back();
    state_->by_workload[id] = std::move(ids);
    return id;
  }
  state_->by_workload.push_back(std::move(ids));
  return state_->by_workload.size() - 1;
}

void Collector::Remove(size_t id) {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (id >= state_->by_workload.size()) return;
  for (size_t i : state_->by_workload[id]) {
    Slot& s = state_->slots[i];
    state_->sent.erase(s.sig.source);
    const uint64_t generation = s.generation + 1;
    s = Slot{};
    s.removed = true;
    s.generation = generation;
    state_->free_slots.push_back(i);
  }
  state_->by_workload[id].clear();
  state_->free_ids.push_back(id);
}

Collector::Queries Collector::QueriesFor(State& state, MetricSource* source,
                                         const std::vector<size_t>& due) {
  SentBatch& sent = state.sent[source];
  if (sent.queries && sent.slots == due) return sent.queries;
  auto queries = std::make_shared<std::vector<MetricQuery>>();
  queries->reserve(due.size());
  for (size_t i : due) queries->push_back(state.slots[i].query);
  sent.slots = due;
  sent.queries = std::move(queries);
  return sent.queries;
}

void Collector::RunDue(TimePoint now) {
  struct Batch {
    std::vector<size_t> slots;
    std::vector<uint64_t> generations;
    Queries queries;
  };
  std::map<MetricSource*, Batch> batches;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    for (size_t i = 0; i < state_->slots.size(); ++i) {
      Slot& s = state_->slots[i];
      if (s.removed || s.next_due > now || s.in_flight || state_->busy[s.sig.source]) continue;
      batches[s.sig.source].slots.push_back(i);
    }
    for (auto& [source, b] : batches) {
      state_->busy[source] = true;
      for (size_t i : b.slots) {
        Slot& s = state_->slots[i];
        s.in_flight = true;
        s.late_counted = false;
        s.started = now;
        s.next_due = now + s.sig.interval;
        b.generations.push_back(s.generation);
      }
      b.queries = QueriesFor(*state_, source, b.slots);
    }
  }
  for (auto& [source, b] : batches) {
    executor_.Run([state = state_, t = telemetry_, src = source, ids = std::move(b.slots),
                   gens = std::move(b.generations), qs = std::move(b.queries), now]() mutable {
      RunBatch(state, t, src, std::move(ids), std::move(gens), std::move(qs), now);
    });
  }
}

void Collector::RunBatch(const std::shared_ptr<State>& state, Telemetry* telemetry,
                         MetricSource* source, std::vector<size_t> slots,
                         std::vector<uint64_t> generations, Queries queries, TimePoint now) {
  const auto t0 = std::chrono::steady_clock::now();  // telemetry only: real latency
  auto fetched = std::make_shared<std::vector<FetchResult>>(source->FetchBatch(*queries, now));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (fetched->size() < slots.size()) {
    const Status missing = Status::Internal("source " + std::string(source->Name()) +
                                            " answered fewer queries than it was asked");
    fetched->resize(slots.size(), FetchResult(missing));
  }
  // One allocation holds the whole batch; each slot's Reading points into it (aliasing), so a
  // round allocates and frees once per source, not once per signal.
  const std::shared_ptr<const std::vector<FetchResult>> results = std::move(fetched);
  const MetricLabels by_source = {{"source", std::string(source->Name())}};
  std::lock_guard<std::mutex> lock(state->mu);
  for (size_t k = 0; k < slots.size(); ++k) {
    Slot& s = state->slots[slots[k]];
    if (s.generation != generations[k]) continue;  // removed while this batch ran
    s.in_flight = false;
    s.last = Reading(results, &(*results)[k]);
    if (telemetry && !s.last->ok() && !s.late_counted) {
      telemetry->Add(
          "aiscale_fetch_errors_total",
          {by_source[0], {"code", std::string(StatusCodeName(s.last->status().code()))}});
    }
  }
  state->busy[source] = false;
  if (telemetry) {
    telemetry->Observe("aiscale_fetch_duration_seconds", by_source, took);
    telemetry->Add("aiscale_fetches_total", by_source, static_cast<double>(slots.size()));
  }
}

TimePoint Collector::NextDue() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  TimePoint next = TimePoint::max();
  for (const Slot& s : state_->slots) {
    // A slot whose source is busy waits for that batch to finish, not for its due time.
    if (s.removed) continue;
    const auto busy = state_->busy.find(s.sig.source);
    if (s.in_flight || (busy != state_->busy.end() && busy->second)) continue;
    if (s.next_due < next) next = s.next_due;
  }
  return next;
}

Reading Collector::ReadSlot(Slot& s, TimePoint now) const {
  // Messages are built only on the paths that return them: a read is on every tick's path.
  const auto what = [&s] { return std::string(s.sig.source->Name()) + " for " + s.sig.signal; };
  if (s.in_flight && now - s.started > s.sig.timeout) {
    if (telemetry_ && !s.late_counted) {
      telemetry_->Add("aiscale_fetch_errors_total",
                      {{"source", std::string(s.sig.source->Name())},
                       {"code", std::string(StatusCodeName(StatusCode::kDeadlineExceeded))}});
    }
    s.late_counted = true;
    return std::make_shared<const FetchResult>(Status::DeadlineExceeded(
        "fetch from " + what() + " still running after " + Secs(now - s.started) + " s (deadline " +
        Secs(s.sig.timeout) + " s)"));
  }
  if (s.last) return s.last;
  return std::make_shared<const FetchResult>(
      Status::Unavailable("no fetch from " + what() + " has completed yet"));
}

std::vector<Reading> Collector::Read(size_t id, TimePoint now) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<Reading> out;
  if (id >= state_->by_workload.size()) return out;
  out.reserve(state_->by_workload[id].size());
  for (size_t i : state_->by_workload[id]) out.push_back(ReadSlot(state_->slots[i], now));
  return out;
}

size_t Collector::InFlight() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  size_t n = 0;
  for (const Slot& s : state_->slots) n += s.in_flight ? 1 : 0;
  return n;
}

}  // namespace aiscale::control
