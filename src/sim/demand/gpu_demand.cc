#include "sim/demand/gpu_demand.h"

#include <algorithm>
#include <cmath>

#include "sim/sim_pool.h"

namespace aiscale::sim::demand {

GpuDemand::GpuDemand(std::shared_ptr<const GpuDemandSpec> spec, WorkloadEnv env)
    : spec_(std::move(spec)), env_(std::move(env)) {
  ref_.kind = "GpuDemand";
  ref_.name = env_.name;
}

void GpuDemand::Start(EventQueue& q) {
  q_ = &q;
  start_ = q.Now();
  ready_at_.assign(static_cast<size_t>(std::max(0, env_.initial_replicas)), 0.0);  // warm
  ledger_ = Ledger{};
  CheckGuarantee(0, spec_->series->GpusAt(0));
}

double GpuDemand::NowS() const { return q_ ? ToSeconds(q_->Now() - start_) : 0; }

int64_t GpuDemand::DemandAt(double t_s) const {
  return t_s < spec_->series->end_s ? spec_->series->GpusAt(t_s) : 0;
}

bool GpuDemand::Done() const { return NowS() >= spec_->series->end_s; }

double GpuDemand::Progress() const { return std::clamp(NowS() / spec_->series->end_s, 0.0, 1.0); }

int64_t GpuDemand::ReadyCount(double t_s) const {
  return std::upper_bound(ready_at_.begin(), ready_at_.end(), t_s) - ready_at_.begin();
}

Result<ScaleState> GpuDemand::Observe() {
  const double t = NowS();
  Advance(t);
  ScaleState s;
  s.current = static_cast<int>(Held());
  s.ready = static_cast<int>(ReadyCount(t));
  if (s.ready < s.current) {
    s.detail = std::to_string(s.current - s.ready) + " GPU(s) restarting (restart_s " +
               std::to_string(static_cast<int64_t>(RestartS())) + " s)";
  }
  return s;
}

Status GpuDemand::Apply(int desired) {
  if (desired < 0) return Status::Error("unable to scale " + ref_.Key() + " to a negative size");
  const double t = NowS();
  Advance(t);
  const int64_t held = Held();
  if (desired == held) return Status::Ok();
  ++rescales_;
  const int64_t demand = DemandAt(t);
  if (desired < held) {  // the GPUs that were busy and no longer are: preempted jobs
    reclaimed_gpus_ +=
        std::max<int64_t>(0, std::min(demand, held) - std::min<int64_t>(demand, desired));
  }
  ready_at_.resize(static_cast<size_t>(desired), t + RestartS());
  CheckGuarantee(t, demand);
  return Status::Ok();
}

int64_t GpuDemand::Owed(int64_t demand) const {
  return env_.guaranteed_gpus < 0 ? 0 : std::min(demand, env_.guaranteed_gpus);
}

bool GpuDemand::PoolShort(int64_t shortfall) const {
  return env_.pool && env_.pool->IdleGpus() < shortfall;
}

void GpuDemand::CheckGuarantee(double t_s, int64_t demand) const {
  if (env_.guaranteed_gpus < 0) return;
  const int64_t owed = Owed(demand), held = Held();
  if (waits_.open() && held >= owed) {
    waits_.Close(t_s, owed > 0 ? ready_at_[static_cast<size_t>(owed - 1)] : t_s);
  } else if (!waits_.open() && owed > held) {
    waits_.Open(t_s, PoolShort(owed - held));
  }
}

double GpuDemand::ReadyGpuSeconds(double from, double to) const {
  const size_t k = static_cast<size_t>(ReadyCount(from));
  double sum = static_cast<double>(k) * (to - from);
  for (size_t i = k; i < ready_at_.size() && ready_at_[i] < to; ++i) sum += to - ready_at_[i];
  return sum;
}

void GpuDemand::Advance(double t_s) const {
  const traces::DemandSeries& s = *spec_->series;
  t_s = std::min(t_s, s.end_s);
  Ledger& l = ledger_;
  if (t_s <= l.accounted_s) return;
  l.ready += ReadyGpuSeconds(l.accounted_s, t_s);
  const double held = static_cast<double>(Held());
  while (l.accounted_s < t_s) {
    const bool more = l.point + 1 < s.points.size();
    const double next = more ? s.points[l.point + 1].t_s : s.end_s;
    const double until = std::min(t_s, next);
    const double d = static_cast<double>(s.points[l.point].gpus), dt = until - l.accounted_s;
    l.demand += d * dt;
    l.held += held * dt;
    l.pending += std::max(0.0, d - held) * dt;
    l.accounted_s = until;
    if (more && until >= next) {
      ++l.point;
      CheckGuarantee(until, s.points[l.point].gpus);
    }
  }
}

std::vector<Observation> GpuDemand::Signal(std::string_view name, TimePoint now) {
  if (name != spec_->signal || !q_) return {};
  const double interval = env_.scrape_interval_s;
  // The exporter's reading at its last scrape, stamped with the scrape's time.
  const double ts = std::floor(ToSeconds(now - start_) / interval + 1e-9) * interval;
  if (ts < 0 || ts >= spec_->series->end_s) return {};  // the curve is over: no exporter
  return {Observation{std::string(name), "", static_cast<double>(spec_->series->GpusAt(ts)),
                      start_ + Seconds(ts), true}};
}

report::WorkloadSummary GpuDemand::Summary() const {
  Advance(NowS());
  report::WorkloadSummary s;
  s.kind = "GpuDemand";
  s.gpu_hours = ledger_.held / 3600;
  s.completion_time_s = std::min(NowS(), spec_->series->end_s);
  s.rescales = rescales_;
  return s;
}

nlohmann::json GpuDemand::KindFigures() const {
  const double now = NowS();
  Advance(now);
  const double end = std::min(now, spec_->series->end_s);
  const Ledger& l = ledger_;
  nlohmann::json out = {
      {"source", spec_->source},
      {"restart_s", RestartS()},
      {"demand_gpu_minutes", l.demand / 60},
      {"held_gpu_minutes", l.held / 60},
      {"pending_gpu_minutes", l.pending / 60},
      {"starting_gpu_minutes", (l.held - l.ready) / 60},
      {"reclaimed_gpus", reclaimed_gpus_},
      {"reclaimed_gpu_minutes", static_cast<double>(reclaimed_gpus_) * RestartS() / 60}};
  if (env_.guaranteed_gpus >= 0) {
    out["guaranteed_gpus"] = env_.guaranteed_gpus;
    out["guarantee_waits"] = waits_.Summary(end);
  }
  return out;
}

report::TimelinePoint GpuDemand::TimelinePoint(TimePoint now) const {
  const double t = ToSeconds(now - start_);
  Advance(t);
  report::TimelinePoint p;
  p.t_s = t;
  p.desired = static_cast<double>(Held());
  p.ready = static_cast<double>(ReadyCount(t));
  p.gpu_hours = ledger_.held / 3600;
  return p;
}

std::unique_ptr<SimWorkload> BuildGpuDemand(const config::ConfigNode& workload,
                                            const WorkloadEnv& env) {
  std::shared_ptr<const GpuDemandSpec> spec = GpuDemandSpec::Parse(workload.Child("demand"));
  if (!spec) return nullptr;
  return std::make_unique<GpuDemand>(std::move(spec), env);
}

}  // namespace aiscale::sim::demand
