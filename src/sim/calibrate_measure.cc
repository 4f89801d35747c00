// Calibrate(): what the events log and the decisions measured, then the model fitted to it.
#include <algorithm>
#include <cmath>

#include "sim/calibrate.h"

namespace aiscale::sim {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Checkpoints and stops are not progress: the time up to the next progress event belongs to
// the phase (a periodic save) or to the restart (a stop's hold and teardown).
bool IsProgress(const JobEvent& e) { return e.ev != "ckpt" && e.ev != "stop"; }

// samples/s by world size over consecutive steps of one run segment. Intervals longer than 5x
// the median (a checkpoint hold that ended without a stop) are not compute time.
void MeasureThroughput(const std::vector<JobEvent>& ev, size_t from, size_t to, Calibration& c) {
  std::map<int, std::vector<std::pair<double, double>>> pairs;  // world -> (dt, samples)
  const JobEvent* prev = nullptr;
  for (size_t i = from; i <= to; ++i) {
    const JobEvent& e = ev[i];
    if (e.ev == "ckpt") continue;
    if (e.ev == "step" && prev && prev->world == e.world && e.world > 0 &&
        e.samples > prev->samples && e.t > prev->t) {
      pairs[e.world].push_back({e.t - prev->t, e.samples - prev->samples});
      if (c.batch == 0)
        c.batch = static_cast<int>(std::lround((e.samples - prev->samples) / e.world));
    }
    prev = e.ev == "step" ? &e : nullptr;
  }
  for (const auto& [world, v] : pairs) {
    std::vector<double> dts;
    for (const auto& p : v) dts.push_back(p.first);
    const double limit = 5 * Median(dts);
    double dt = 0, ds = 0;
    for (const auto& p : v) {
      if (p.first > limit) continue;
      dt += p.first;
      ds += p.second;
    }
    if (dt > 0) c.samples_per_s[world] = ds / dt;
  }
}

// Time per phase and in restarts (RealRun), and the lengths of the loads and evals that no
// restart interrupted.
void MeasurePhases(const std::vector<JobEvent>& ev, size_t from, size_t to, Calibration& c) {
  std::string cur = "load";
  double t_prev = ev[from].t, phase_t0 = ev[from].t;
  int world = ev[from].world;
  bool clean = true;  // no restart since the current phase began
  std::vector<double> loads;
  std::map<int, std::vector<double>> evals;
  RealRun& r = c.real;
  for (size_t i = from + 1; i <= to; ++i) {
    const JobEvent& e = ev[i];
    if (!IsProgress(e)) {
      if (e.ev == "stop") clean = false;
      continue;
    }
    const double dt = e.t - t_prev;
    if (e.ev == "start") {
      r.restart_s += dt;
      world = e.world;
      clean = false;
    } else if (cur == "load") {
      r.load_s += dt;
    } else if (cur == "compute") {
      r.compute_s += dt;
    } else if (cur == "eval") {
      r.eval_s += dt;
    }
    t_prev = e.t;
    if (e.ev == "phase") {
      if (cur == "load" && clean && e.phase != "load") loads.push_back(e.t - phase_t0);
      cur = e.phase;
      phase_t0 = e.t;
      clean = true;
    } else if (e.ev == "eval" && cur == "eval" && clean && world > 0) {
      evals[world].push_back(e.t - phase_t0);
    }
  }
  c.load_s = Median(loads);
  for (const auto& [n, v] : evals) {
    double sum = 0;
    for (double x : v) sum += x;
    c.eval_s[n] = sum / v.size();
  }
}

// The first event index at or after `i` that is a step at world size `world`; npos if none.
size_t FirstStepAt(const std::vector<JobEvent>& ev, size_t i, size_t to, double t, int world) {
  for (; i <= to; ++i) {
    if (ev[i].ev == "step" && ev[i].t >= t && ev[i].world == world) return i;
  }
  return std::string::npos;
}

// The restart after `t`: the gap from the last progress event before that start to the start.
// Returns {last progress time, start time}, or {-1, -1} when no start follows.
std::pair<double, double> RestartAfter(const std::vector<JobEvent>& ev, size_t from, size_t to,
                                       double t) {
  double last = -1;
  for (size_t i = from + 1; i <= to; ++i) {
    const JobEvent& e = ev[i];
    if (e.ev == "start" && e.t >= t && last >= 0) return {last, e.t};
    if (IsProgress(e) && e.ev != "start") last = e.t;
  }
  return {-1, -1};
}

void MeasureRescales(const std::vector<JobEvent>& ev, size_t from, size_t to,
                     const std::vector<TickRecord>& ticks, Calibration& c) {
  const double t0 = ev[from].t, t1 = ev[to].t;
  std::vector<double> gaps, leads;
  for (const TickRecord& k : ticks) {
    if (!k.scaled || k.t < t0 || k.t > t1 || k.to == k.current) continue;
    ++c.real.rescales;
    const size_t s = FirstStepAt(ev, from, to, k.t, k.to);
    if (s != std::string::npos) {
      (k.to > k.current ? c.grow_latency_s : c.shrink_latency_s).push_back(ev[s].t - k.t);
    }
    const auto [last, start] = RestartAfter(ev, from, to, k.t);
    if (start < 0) continue;
    gaps.push_back(start - last);
    if (k.to > k.current) leads.push_back(std::max(0.0, last - k.t));
  }
  if (gaps.empty()) {  // no rescale of aiscale's: whatever restarts the job had
    for (size_t i = from + 1; i <= to; ++i) {
      if (ev[i].ev != "start") continue;
      const auto [last, start] = RestartAfter(ev, from, i, ev[i].t);
      if (start >= 0) gaps.push_back(start - last);
    }
  }
  c.restart_gap_s = Median(gaps);
  c.grow_lead_s = Median(leads);
}

// Agents allocated over [t0, t1]: before each tick the engine had `current`; after the last,
// what it scaled to.
double NodeHours(const std::vector<TickRecord>& ticks, double t0, double t1, int initial) {
  double sum = 0, last = t0;
  int level = initial;
  for (const TickRecord& k : ticks) {
    if (k.t <= t0) {
      level = k.scaled ? k.to : k.current;
      continue;
    }
    if (k.t >= t1) break;
    sum += k.current * (k.t - last);
    last = k.t;
    level = k.scaled ? k.to : k.current;
  }
  sum += level * (t1 - last);
  return sum / 3600;
}

// The ticks of the run's window: from kDecisionLeadS before its first start to its end.
std::vector<TickRecord> TicksOfRun(const std::vector<TickRecord>& in, double t0, double t1) {
  std::vector<TickRecord> ticks;
  for (const TickRecord& k : in) {
    if (k.t >= t0 - kDecisionLeadS && k.t <= t1) ticks.push_back(k);
  }
  std::stable_sort(ticks.begin(), ticks.end(),
                   [](const TickRecord& a, const TickRecord& b) { return a.t < b.t; });
  return ticks;
}

// The run's first start and its done (or, allowed, its last event), as indices.
Result<std::pair<size_t, size_t>> RunBounds(const std::vector<JobEvent>& ev,
                                            const CalibrateOptions& options, bool& finished) {
  size_t from = std::string::npos, to = std::string::npos;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (from == std::string::npos && ev[i].ev == "start") from = i;
    if (from != std::string::npos && ev[i].ev == "done") {
      to = i;
      break;
    }
  }
  if (from == std::string::npos) return Status::Invalid("the events log has no `start` event");
  finished = to != std::string::npos;
  if (!finished && options.allow_unfinished && ev.size() > from + 1) to = ev.size() - 1;
  if (to == std::string::npos) {
    return Status::Invalid("the events log has no `done` event after its first start: " +
                           std::string("calibrate needs a run that finished"));
  }
  return std::make_pair(from, to);
}

}  // namespace

Result<Calibration> Calibrate(const JobEventLog& log, const std::vector<TickRecord>& ticks_in,
                              CalibrateOptions options) {
  ASSIGN_OR_RETURN(const JobRun run, SelectRun(log, options.run, options.allow_unfinished));
  const std::vector<JobEvent>& ev = run.events;
  Calibration c;
  ASSIGN_OR_RETURN(const auto bounds, RunBounds(ev, options, c.finished));
  const auto [from, to] = bounds;
  c.run = run.id;
  c.skipped_lines = log.skipped_lines;
  c.initial_world = std::max(1, ev[from].world);
  MeasureThroughput(ev, from, to, c);
  if (c.samples_per_s.empty() || c.batch <= 0) {
    return Status::Invalid("the events log has no two consecutive steps to measure throughput");
  }
  MeasurePhases(ev, from, to, c);
  c.start_t = ev[from].t;
  c.end_t = ev[to].t;
  const std::vector<TickRecord> ticks = TicksOfRun(ticks_in, c.start_t, c.end_t);
  c.decisions_in_run = ticks.size();
  MeasureRescales(ev, from, to, ticks, c);
  for (size_t i = from; i <= to; ++i) {
    if (ev[i].ev == "phase" && ev[i].phase == "compute")
      c.epochs = std::max(c.epochs, ev[i].epoch + 1);
  }
  c.epochs = std::max(c.epochs, 1);
  for (size_t i = from; i <= to; ++i) c.total_samples = std::max(c.total_samples, ev[i].samples);
  c.real.samples = c.total_samples;
  c.real.job_time_s = c.end_t - c.start_t;
  c.real.node_hours = NodeHours(ticks, c.start_t, c.end_t, c.initial_world);
  FitModel(c);
  return c;
}

}  // namespace aiscale::sim
