#include "sim/inference/inference_service.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "core/numeric.h"
#include "core/signal.h"
#include "sim/run_budget.h"
#include "sim/run_cache.h"

namespace aiscale::sim::inference {

struct InferenceService::Replay {
  std::unique_ptr<traces::RequestStream> stream;
  std::vector<traces::TraceRequest> buf;
  size_t pos = 0;
  bool exhausted = false;
  Status status;
};

InferenceService::InferenceService(std::shared_ptr<const InferenceSpec> spec, WorkloadEnv env)
    : spec_(std::move(spec)), env_(std::move(env)) {
  ref_.kind = "InferenceService";
  ref_.name = env_.name;
  EngineOptions o = spec_->engine;
  o.stats_retention_s = env_.report_interval_s;  // for the timeline's per-interval p99
  engine_ = std::make_unique<ServingEngine>(o);
  replay_ = std::make_unique<Replay>();
}

InferenceService::~InferenceService() = default;

void InferenceService::Start(EventQueue& q) {
  q_ = &q;
  start_ = q.Now();
  auto s = spec_->trace->Open();
  if (s.ok()) {
    replay_->stream = std::move(s).value();
  } else {
    replay_->status = s.status();
    replay_->exhausted = true;
  }
  // The initial replicas were warm before the run began.
  for (int i = 0; i < env_.initial_replicas; ++i) active_.push_back(engine_->AddReplica(0));
  Tick();
}

void InferenceService::Tick() {
  // Coarse heartbeat: keeps the model moving when nothing looks at it, and the queue
  // non-empty until the trace is replayed and drained.
  Sync();
  if (Done()) return;
  q_->After(Seconds(60), [this] { Tick(); });
}

void InferenceService::SyncTo(TimePoint t) const {
  const int64_t until = ToEngine(t);
  Replay& r = *replay_;
  while (!r.exhausted && r.stream) {
    if (r.pos == r.buf.size()) {
      r.buf.clear();
      r.pos = 0;
      r.status = r.stream->Next(r.buf, 4096);
      if (!r.status.ok() || r.buf.empty()) {
        r.exhausted = true;
        break;
      }
    }
    const traces::TraceRequest& next = r.buf[r.pos];
    if (next.arrival_ns > until) break;
    engine_->Arrive(next);
    ++r.pos;
  }
  if (until > engine_->now_ns()) engine_->AdvanceTo(until);
}

bool InferenceService::Done() const {
  Sync();
  return replay_->exhausted && engine_->Idle();
}

Result<ScaleState> InferenceService::Observe() {
  Sync();
  ScaleState s;
  s.current = static_cast<int>(active_.size());
  s.asleep = static_cast<int>(asleep_.size());
  for (const auto& v : engine_->Replicas()) {
    if (v.state == ReplicaState::kReady) ++s.ready;
    if (v.state == ReplicaState::kAsleep) ++s.asleep_ready;
  }
  return s;
}

std::vector<int> InferenceService::ReleaseOrder() const {
  std::vector<ReplicaView> views = engine_->Replicas();
  auto view = [&](int id) {
    return *std::find_if(views.begin(), views.end(),
                         [id](const ReplicaView& v) { return v.id == id; });
  };
  std::vector<int> order(active_.rbegin(), active_.rend());  // newest first
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const ReplicaView va = view(a), vb = view(b);
    const bool sa = va.state == ReplicaState::kStarting, sb = vb.state == ReplicaState::kStarting;
    if (sa != sb) return sa;
    return !sa && va.in_flight < vb.in_flight;
  });
  return order;
}

Status InferenceService::Apply(int desired) {
  if (desired < 0) return Status::Error("unable to scale " + ref_.Key() + " to a negative size");
  Sync();
  const int current = static_cast<int>(active_.size());
  if (desired == current) return Status::Ok();
  ++scale_events_;
  const int64_t ready_at = engine_->now_ns() + SaturatingNanos(spec_->ColdStartSeconds());
  for (int i = current; i < desired; ++i) active_.push_back(engine_->AddReplica(ready_at));
  if (desired >= current) return Status::Ok();
  const std::vector<int> order = ReleaseOrder();
  for (int i = 0; i < current - desired; ++i) {
    engine_->RemoveReplica(order[static_cast<size_t>(i)]);
    active_.erase(std::find(active_.begin(), active_.end(), order[static_cast<size_t>(i)]));
  }
  return Status::Ok();
}

Status InferenceService::ApplyTiers(int awake, int asleep) {
  if (!spec_->warm) return SimWorkload::ApplyTiers(awake, asleep);
  if (awake < 0 || asleep < 0) {
    return Status::Error("unable to scale " + ref_.Key() + " to a negative size");
  }
  Sync();
  if (awake == static_cast<int>(active_.size()) && asleep == static_cast<int>(asleep_.size())) {
    return Status::Ok();
  }
  ++scale_events_;
  const int64_t now = engine_->now_ns();
  const int64_t cold_at = now + SaturatingNanos(spec_->ColdStartSeconds());
  const int64_t wake_at = now + SaturatingNanos(spec_->wake_s);
  // More awake: wake the warm tier first (those that would serve soonest), then start cold ones.
  SortWarmTier();
  size_t woken = 0;
  while (static_cast<int>(active_.size()) < awake) {
    if (woken == asleep_.size()) {
      active_.push_back(engine_->AddReplica(cold_at));
      continue;
    }
    const int id = asleep_[woken++];
    engine_->WakeReplica(id, wake_at);
    active_.push_back(id);
  }
  asleep_.erase(asleep_.begin(), asleep_.begin() + static_cast<std::ptrdiff_t>(woken));
  // Fewer awake: to sleep while the warm tier wants more, else gone.
  if (static_cast<int>(active_.size()) > awake) {
    const std::vector<int> order = ReleaseOrder();
    for (size_t i = 0; static_cast<int>(active_.size()) > awake; ++i) {
      const int id = order[i];
      active_.erase(std::find(active_.begin(), active_.end(), id));
      if (static_cast<int>(asleep_.size()) < asleep) {
        engine_->SleepReplica(id);
        asleep_.push_back(id);
      } else {
        engine_->RemoveReplica(id);
      }
    }
  }
  SortWarmTier();
  while (static_cast<int>(asleep_.size()) > asleep) {
    engine_->RemoveReplica(asleep_.back());
    asleep_.pop_back();
  }
  while (static_cast<int>(asleep_.size()) < asleep) {
    asleep_.push_back(engine_->AddReplica(cold_at, /*asleep_when_ready=*/true));
  }
  return Status::Ok();
}

void InferenceService::SortWarmTier() {
  std::unordered_map<int, int> rank;  // id -> 0 going to sleep, 1 asleep, 2 loading
  for (const ReplicaView& v : engine_->Replicas()) {
    rank[v.id] = v.state == ReplicaState::kSleeping ? 0 : v.state == ReplicaState::kAsleep ? 1 : 2;
  }
  std::stable_sort(asleep_.begin(), asleep_.end(),
                   [&](int a, int b) { return rank[a] != rank[b] ? rank[a] < rank[b] : a < b; });
}

double InferenceService::GpuHoursPriced() const {
  const double asleep = engine_->AsleepGpuSeconds();
  return (engine_->GpuSeconds() - asleep + asleep * spec_->asleep_cost_fraction) / 3600.0;
}

std::vector<Observation> InferenceService::Signal(std::string_view name, TimePoint now) {
  SyncTo(now);
  const int64_t t = ToEngine(now);
  const RequestStats& st = engine_->stats();
  std::vector<Observation> out;
  auto one = [&](double v) { out.push_back(Observation{std::string(name), "", v, now, true}); };
  // A rate over a window that has not been open for a whole window yet is no rate (as
  // Prometheus' rate() with too few samples returns nothing): a 0 at start-up would read as
  // "no demand" and scale a warm service down.
  const bool window_full = t >= SaturatingNanos(spec_->engine.window_s);
  if ((name == signals::kRequestRate || name == signals::kTokensPerS) && !window_full) return out;
  if (name == signals::kRequestRate) {
    one(st.ArrivalRate(t));
  } else if (name == signals::kQueueLen) {
    one(static_cast<double>(engine_->queue_len()));
  } else if (name == signals::kTokensPerS) {
    one(st.TokenRate(t));
  } else if (name == signals::kLatencyP99S || name == signals::kTtftP99S) {
    const double v = st.WindowQuantile(t, 0.99, name == signals::kTtftP99S);
    if (v > 0) one(v);
  } else if (name == signals::kConcurrency || name == signals::kKvCacheUsage ||
             name == signals::kGpuUtil) {
    const bool llm = spec_->engine.model.kind == ReplicaModel::Kind::kLlm;
    if (name == signals::kKvCacheUsage && !llm) return out;
    for (const auto& v : engine_->Replicas()) {
      if (v.state != ReplicaState::kReady) continue;
      const std::string inst = "replica-" + std::to_string(v.id);
      if (name == signals::kConcurrency) {
        out.push_back(
            Observation{std::string(name), inst, static_cast<double>(v.in_flight), now, true});
      } else if (name == signals::kKvCacheUsage) {
        out.push_back(Observation{std::string(name), inst, v.kv_usage, now, true});
      } else {
        const double util = 100 * engine_->TakeBusyFraction(v.id);
        for (int g = 0; g < spec_->engine.model.gpus_per_replica; ++g) {
          out.push_back(
              Observation{std::string(name), inst + "/gpu" + std::to_string(g), util, now, true});
        }
      }
    }
  }
  return out;
}

const Result<OracleResult>& InferenceService::Oracle() const {
  if (oracle_) return *oracle_;
  // Every run of the scenario replays the same trace on the same model: one computation.
  const std::string key = "oracle/" + env_.name;
  if (env_.cache) {
    if (auto hit = env_.cache->Find<Result<OracleResult>>(key)) {
      oracle_ = hit;
      return *oracle_;
    }
  }
  auto stream = spec_->trace->Open();
  if (!stream.ok()) {
    oracle_ = std::make_shared<const Result<OracleResult>>(stream.status());
  } else {
    OracleOptions o;
    o.engine = spec_->engine;
    o.interval_s = spec_->oracle_interval_s;
    if (env_.duration_s > 0) o.until_ns = SaturatingNanos(env_.duration_s);
    oracle_ = std::make_shared<const Result<OracleResult>>(ComputeOracle(**stream, o));
  }
  if (env_.cache) env_.cache->Put(key, oracle_);
  return *oracle_;
}

std::optional<int> InferenceService::BaselineReplicas(std::string_view baseline) const {
  if (!Oracle().ok()) return std::nullopt;
  if (baseline == "static-peak") return std::max(1, Oracle()->static_peak_replicas);
  if (baseline == "warm-start") return std::max(1, Oracle()->first_interval_replicas);
  return std::nullopt;
}

report::WorkloadSummary InferenceService::Summary() const {
  Sync();
  const RequestStats& st = engine_->stats();
  report::WorkloadSummary s;
  s.kind = "InferenceService";
  // With a warm tier, GPU-hours price the asleep share at its cost fraction (both shares are
  // stated apart); without one the two are the same figure.
  s.gpu_hours = GpuHoursPriced();
  s.cost_usd = s.gpu_hours * spec_->price_per_gpu_hour;
  s.rescales = scale_events_;
  report::ServingFigures f;
  f.requests = static_cast<int64_t>(st.arrived());
  f.completed = static_cast<int64_t>(st.completed());
  f.within_slo = static_cast<int64_t>(st.within_slo());
  f.timed_out = static_cast<int64_t>(st.timed_out());
  f.dropped = static_cast<int64_t>(st.dropped());
  f.slo_attainment = st.Attainment();
  f.latency_p50_s = st.latency().QuantileSeconds(0.5);
  f.latency_p99_s = st.latency().QuantileSeconds(0.99);
  f.ttft_p50_s = st.ttft().QuantileSeconds(0.5);
  f.ttft_p99_s = st.ttft().QuantileSeconds(0.99);
  f.ready_replica_hours = engine_->ReadyReplicaSeconds() / 3600.0;
  f.cold_start_s = spec_->ColdStartSeconds();
  f.slo = {st.slo().ttft_s, st.slo().latency_s, st.slo().attainment};
  f.trace = spec_->trace->Describe();
  if (!replay_->status.ok()) f.trace_error = replay_->status.message();
  if (spec_->warm) {
    report::ServingFigures::Warm warm;
    warm.gpu_hours_asleep = engine_->AsleepGpuSeconds() / 3600.0;
    warm.gpu_hours_awake = engine_->GpuSeconds() / 3600.0 - warm.gpu_hours_asleep;
    warm.asleep_cost_fraction = spec_->asleep_cost_fraction;
    warm.wake_s = spec_->wake_s;
    f.warm = warm;
  }
  const auto& o = Oracle();
  if (o.ok()) {
    report::OracleFigures of;
    of.feasible = o->feasible;
    of.gpu_hours = o->gpu_hours;
    of.attainment = o->attainment;
    of.interval_gpu_hours = o->interval_gpu_hours;
    of.work_gpu_hours = o->work_gpu_hours;
    // Which bound sets it and how many requests no size serves (docs/oracle.md).
    of.note = "set by the ";
    of.note += o->bound;
    of.note += " bound; ";
    of.note += std::to_string(o->unservable);
    of.note += " requests miss the SLO at any size";
    // The oracle's plan, for drawing against what a policy ran: interval m starts at
    // m x interval_s.
    of.plan.interval_s = o->interval_s;
    of.plan.replicas.assign(o->replicas.begin(), o->replicas.end());
    s.oracle = std::move(of);
    f.static_peak_replicas = o->static_peak_replicas;
  } else {
    s.oracle_error = o.status().message();
  }
  s.serving = std::move(f);
  return s;
}

report::TimelinePoint InferenceService::TimelinePoint(TimePoint now) const {
  SyncTo(now);
  const int64_t t = ToEngine(now);
  const RequestStats& st = engine_->stats();
  // Since the previous point (or one report interval, for the first): every completion is in
  // exactly one point's p99, unlike the signals' 15 s window.
  const int64_t from =
      last_point_ns_ >= 0 ? last_point_ns_ : t - SaturatingNanos(env_.report_interval_s);
  last_point_ns_ = t;
  report::TimelinePoint p;
  p.t_s = SinceEpochSeconds(now);
  p.arrived = static_cast<double>(st.arrived());
  p.interval_latency_p99_s = st.QuantileBetween(from, t, 0.99, false);
  p.interval_ttft_p99_s = st.QuantileBetween(from, t, 0.99, true);
  p.desired = static_cast<double>(active_.size());
  p.ready = engine_->CountState(ReplicaState::kReady);
  p.draining = engine_->CountState(ReplicaState::kDraining);
  p.request_rate = st.ArrivalRate(t);
  p.queue_len = static_cast<double>(engine_->queue_len());
  p.latency_p99_s = st.WindowQuantile(t, 0.99, false);
  p.ttft_p99_s = st.WindowQuantile(t, 0.99, true);
  p.gpu_hours = GpuHoursPriced();
  // Cumulative requests that ended outside the SLO (late, timed out or dropped): the report
  // attributes each interval's misses to what the service was doing then.
  p.missed = static_cast<double>(st.completed() - st.within_slo() + st.timed_out() + st.dropped());
  if (spec_->warm) p.asleep = static_cast<double>(asleep_.size());
  return p;
}

namespace {

// The oracle keeps one entry per interval up to the last arrival: refuse a span (a trace
// stretched by time_compression < 1) that would need more than kMaxOracleIntervals of them.
Status CheckOracleSpan(int64_t last_arrival_ns, double interval_s) {
  const double span_s = static_cast<double>(last_arrival_ns) / 1e9;
  const double intervals = span_s / interval_s;
  if (intervals <= static_cast<double>(kMaxOracleIntervals)) return Status::Ok();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "the last request arrives at t = %.4g s of the replay (after time_compression), "
                "%.4g oracle intervals of %g s; at most %lld (docs/limits.md): raise "
                "time_compression or use duration_s",
                span_s, intervals, interval_s, static_cast<long long>(kMaxOracleIntervals));
  return Status::Invalid(buf);
}

}  // namespace

std::unique_ptr<SimWorkload> BuildInferenceService(const config::ConfigNode& workload,
                                                   const WorkloadEnv& env) {
  const config::ConfigNode body = workload.Child("service");
  std::shared_ptr<const InferenceSpec> spec =
      InferenceSpec::Parse(body, env.scrape_interval_s, env.seed);
  if (!spec) return nullptr;
  auto stream = spec->trace->Open();
  Status st = stream.status();
  if (st.ok()) {
    std::vector<traces::TraceRequest> buf;
    size_t total = 0;
    int64_t second = -1, in_second = 0;  // arrivals come in time order
    int64_t last_ns = 0;
    do {
      buf.clear();
      st = (*stream)->Next(buf, 1 << 15);
      total += buf.size();
      if (!buf.empty()) last_ns = std::max(last_ns, buf.back().arrival_ns);
      for (const auto& r : buf) {
        const int64_t s = r.arrival_ns / 1'000'000'000;
        in_second = s == second ? in_second + 1 : 1;
        second = s;
        if (in_second > kMaxRequestsPerSecond) {
          st = Status::Invalid("more than " + std::to_string(kMaxRequestsPerSecond) +
                               " requests arrive within the second at t = " + std::to_string(s) +
                               " s of the replay; at most that many per second (docs/limits.md)");
          break;
        }
      }
      if (st.ok() && total > static_cast<size_t>(kMaxRequestsPerWorkload)) {
        st = Status::Invalid("the trace yields more than " +
                             std::to_string(kMaxRequestsPerWorkload) +
                             " requests in its window (after rate_multiplier); at most that many "
                             "per workload per run (docs/limits.md): use duration_s or a smaller "
                             "rate_multiplier");
      }
    } while (st.ok() && !buf.empty());
    if (st.ok() && total == 0) st = Status::Error("the trace has no requests in its window");
    if (st.ok()) st = CheckOracleSpan(last_ns, spec->oracle_interval_s);
  }
  if (!st.ok()) {
    const config::ConfigNode trace = body.Child("trace");
    trace.ErrorAt(trace.Has("path") ? "path" : (trace.Has("points") ? "points" : "format"),
                  st.message());
    return nullptr;
  }
  return std::make_unique<InferenceService>(std::move(spec), env);
}

}  // namespace aiscale::sim::inference
