// TrainingJob's exporter side: scrape-interval averages, per-GPU readings, timeline, summary.
#include <algorithm>
#include <cmath>

#include "sim/noise.h"
#include "sim/training_job.h"

namespace aiscale::sim {
namespace {

constexpr double kGpuSpread = 0.02;

double PowerW(const ClusterConfig& c, double util, double sm) {
  // Board power follows SM activity most, plus a share for memory and interconnect traffic.
  return c.gpu_idle_power_w + (c.gpu_max_power_w - c.gpu_idle_power_w) * (0.4 * util + 0.6 * sm);
}

}  // namespace

const TrainingJob::Segment& TrainingJob::SegmentAt(TimePoint t) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), t,
                             [](TimePoint x, const Segment& s) { return x < s.t0; });
  return it == segments_.begin() ? segments_.front() : *std::prev(it);
}

double TrainingJob::StepsAt(TimePoint t) const {
  const Segment& s = SegmentAt(t);
  if (s.restarting || s.phase != signals::Phase::kCompute || s.running == 0) return s.steps0;
  const double dt = std::max(0.0, ToSeconds(t - s.t0));
  return std::min(s.steps0 + s.rates.progress_per_s * dt, cfg_.total_steps);
}

double TrainingJob::Average(TimePoint from, TimePoint to, double PhaseRates::*field) const {
  if (segments_.empty()) return 0;
  from = std::max(from, segments_.front().t0);
  if (to <= from) return SegmentAt(to).rates.*field;
  double sum = 0;
  for (size_t i = 0; i < segments_.size(); ++i) {
    const TimePoint a = std::max(from, segments_[i].t0);
    const TimePoint b = i + 1 < segments_.size() ? std::min(to, segments_[i + 1].t0) : to;
    if (b > a) sum += segments_[i].rates.*field * ToSeconds(b - a);
  }
  return sum / ToSeconds(to - from);
}

std::vector<Observation> TrainingJob::Signal(std::string_view name, TimePoint now) {
  std::vector<Observation> out;
  if (!q_ || segments_.empty()) return out;
  const double interval = env_.scrape_interval_s;
  const int64_t k = static_cast<int64_t>(std::floor(SinceEpochSeconds(now) / interval + 1e-9));
  const TimePoint ts = AtSeconds(k * interval);
  if (done_ && ts > finish_) return out;  // the job and its exporters are gone
  const TimePoint from = ts - Seconds(interval);
  const uint64_t seed = env_.seed;
  const uint64_t stream = HashName(name);
  auto noisy = [&](double v, uint64_t inst) {
    return v * (1 + env_.noise * StdNormal(seed, stream ^ (inst * 0x9e3779b97f4a7c15ULL),
                                           static_cast<uint64_t>(k)));
  };
  auto job = [&](double v) { out.push_back({std::string(name), "", v, ts, true}); };

  if (name == signals::kSamplesPerS) {
    job(std::max(0.0, noisy(Average(from, ts, &PhaseRates::samples_per_s), 0)));
  } else if (name == signals::kStepsPerS) {
    job(std::max(0.0, noisy(Average(from, ts, &PhaseRates::steps_per_s), 0)));
  } else if (name == signals::kPhase) {
    job(static_cast<double>(SegmentAt(ts).phase));
  } else if (name == signals::kEpoch || name == signals::kEpochProgress ||
             name == signals::kJobProgress || name == signals::kSamplesRemaining) {
    const double steps = StepsAt(ts);
    const double spe = cfg_.steps_per_epoch();
    const int e = CompletedEpochs(steps);
    if (name == signals::kEpoch) job(e);
    if (name == signals::kEpochProgress) {
      job(e >= cfg_.epochs ? 1.0 : std::clamp(steps / spe - e, 0.0, 1.0));
    }
    if (name == signals::kJobProgress) job(std::clamp(steps / cfg_.total_steps, 0.0, 1.0));
    if (name == signals::kSamplesRemaining) {
      job(std::max(0.0, (cfg_.total_steps - steps) * cfg_.global_batch));
    }
  } else if (name == signals::kGpuUtil || name == signals::kSmActive ||
             name == signals::kGpuMemUsedFrac || name == signals::kGpuPowerW) {
    const ClusterConfig& cc = env_.cluster->config();
    const double util = Average(from, ts, &PhaseRates::util);
    const double sm = Average(from, ts, &PhaseRates::sm_active);
    const double mem = Average(from, ts, &PhaseRates::mem_frac);
    for (int node : nodes_) {
      if (!env_.cluster->IsUp(node)) continue;  // no exporter before the node boots
      const bool member = running_.count(node) > 0;
      for (int g = 0; g < cc.gpus_per_node; ++g) {
        const uint64_t inst = static_cast<uint64_t>(node) * 64 + g + 1;
        const double spread = 1 + kGpuSpread * (2 * Uniform01(seed, inst, 0) - 1);
        const double u = member ? std::clamp(noisy(util * spread, inst), 0.0, 1.0) : 0.0;
        const double s = member ? std::clamp(noisy(sm * spread, inst), 0.0, 1.0) : 0.0;
        double v = 0;
        if (name == signals::kGpuUtil) v = 100 * u;
        if (name == signals::kSmActive) v = s;
        if (name == signals::kGpuMemUsedFrac) v = member ? std::clamp(mem, 0.0, 1.0) : 0.01;
        if (name == signals::kGpuPowerW) v = PowerW(cc, u, s);
        out.push_back({std::string(name), env_.cluster->GpuName(node, g), v, ts, true});
      }
    }
  }
  return out;
}

double TrainingJob::steps() const {
  if (done_ || !q_ || segments_.empty()) return steps_;
  return StepsAt(q_->Now());
}

double TrainingJob::Progress() const {
  if (done_) return 1.0;
  if (!q_ || segments_.empty()) return 0.0;
  return StepsAt(q_->Now()) / cfg_.total_steps;
}

nlohmann::json TrainingJob::TimelinePoint(TimePoint now) const {
  const int alloc_gpus = static_cast<int>(nodes_.size()) * gpus_per_node();
  const double run_gpus = static_cast<double>(running_.size()) * gpus_per_node();
  return {{"t_s", SinceEpochSeconds(now)},
          {"desired", static_cast<int>(nodes_.size())},
          {"ready", running()},
          {"phase", done_ ? -1 : static_cast<int>(phase_)},
          {"restarting", restarting_ ? 1 : 0},
          {"samples_per_s", rates_.samples_per_s},
          {"steps_per_s", rates_.steps_per_s},
          {"gpu_util", alloc_gpus > 0 ? 100 * rates_.util * run_gpus / alloc_gpus : 0.0},
          {"gpu_hours", env_.cluster->GpuHours(env_.name, now)},
          {"job_progress", segments_.empty() ? 0.0 : StepsAt(now) / cfg_.total_steps}};
}

nlohmann::json TrainingJob::Summary() const {
  const TimePoint end = done_ ? finish_ : (q_ ? q_->Now() : TimePoint{});
  const double gpu_s = env_.cluster->GpuSeconds(env_.name, end);
  double util_s = util_gpu_s_;
  // A run cut mid-phase has not advanced the job since its last event: count up to `end`.
  const double since = done_ ? 0.0 : std::max(0.0, ToSeconds(end - last_advance_));
  util_s += rates_.util * static_cast<double>(running_.size()) * gpus_per_node() * since;
  double phase_s[3] = {phase_time_s_[0], phase_time_s_[1], phase_time_s_[2]};
  if (!restarting_ && !running_.empty()) phase_s[static_cast<int>(phase_)] += since;
  const double trained = steps();
  const ClusterConfig& cc = env_.cluster->config();
  nlohmann::json failures = nlohmann::json::array();
  double max_replace = 0;
  for (const auto& f : failures_) {
    const double took = f.recovered_s >= 0 ? f.recovered_s : SinceEpochSeconds(end) - f.t_s;
    max_replace = std::max(max_replace, took);
    failures.push_back({{"t_s", f.t_s},
                        {"node", f.node},
                        {"size_before", f.size_before},
                        {"replacement_s", took},
                        {"replaced", f.replaced}});
  }
  nlohmann::json rescales = nlohmann::json::array();
  int replacements = 0;
  for (const auto& r : rescales_) {
    rescales.push_back({{"t_s", r.t_s}, {"from", r.from}, {"to", r.to}});
    if (r.replacement) rescales.back()["replacement"] = true;
    replacements += r.replacement ? 1 : 0;
  }
  nlohmann::json j = {
      {"kind", "TrainingJob"},
      {"model", cfg_.model},
      {"gpu_hours", gpu_s / 3600.0},
      {"cost_usd", gpu_s / 3600.0 * cc.price_per_gpu_hour},
      {"completed", done_},
      {"completion_time_s", SinceEpochSeconds(end)},
      {"mean_gpu_util", gpu_s > 0 ? util_s / gpu_s : 0.0},
      {"rescales", static_cast<int>(rescales_.size())},
      // Rescales the policy chose (not replacements of failed nodes): what its budget spends.
      {"policy_rescales", static_cast<int>(rescales_.size()) - replacements},
      {"restarts", restarts_},
      {"restart_time_s", restart_time_s_ + (restarting_ ? since : 0.0)},
      {"failures", static_cast<int>(failures_.size())},
      {"max_failure_replacement_s", max_replace},
      {"steps", trained},
      {"samples_trained", trained * cfg_.global_batch},
      {"samples_lost", samples_lost_},
      {"epochs_completed", CompletedEpochs(trained)},
      {"phase_time_s", {{"load", phase_s[0]}, {"compute", phase_s[1]}, {"eval", phase_s[2]}}},
      {"rescale_events", rescales},
      {"failure_events", failures}};
  if (cc.spot_price_per_gpu_hour) j["spot_cost_usd"] = gpu_s / 3600.0 * *cc.spot_price_per_gpu_hour;
  if (auto o = Oracle(); o.ok()) {
    j.update(o->ToJson(env_.report_interval_s));
    const double og = o->gpu_hours;
    j["gpu_hours_over_oracle"] = og > 0 ? gpu_s / 3600.0 / og : 0.0;
  } else {
    j["oracle_error"] = o.status().message();
  }
  return j;
}

}  // namespace aiscale::sim
