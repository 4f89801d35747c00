#include "sim/training_oracle.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "decide/constraints.h"
#include "decide/policies/training.h"
#include "sim/run_budget.h"

namespace aiscale::sim {
namespace {

using signals::Phase;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTolerance = 1e-9;
// Bisection steps on the time price: 2^-40 of the bracket, far below a GPU-second.
constexpr int kBisections = 40;
// The most rescales the budget dimension tracks (a bucket refilling 1/h on a 64 h job).
constexpr int kMaxRescales = 64;

// One cell of the program: the best schedule found that ends phase i at size s after k
// rescales, with what the rules need to know about its past (time, tokens, last rescale).
struct Cell {
  double j = kInf;  // GPU-seconds + lambda x seconds
  double cost = 0;  // GPU-seconds
  double time = 0;  // end of the phase
  double tokens = 0;
  double last_rescale = -kInf;
  int prev_s = -1;
  int prev_k = -1;
};

struct Problem {
  const TrainingOracleInput* in = nullptr;
  std::vector<OraclePhase> phases;
  std::vector<int> sizes;
  int start = 0;  // index of the initial size
  int max_k = 0;
  std::vector<std::vector<double>> sec;   // [phase][size] seconds
  std::vector<std::vector<double>> util;  // [phase][size] GPU util 0-1
  double gpus = 8;
  double restart_s = 0;
  double failure_time_s = 0;  // per failure: restore without checkpoint + the rejoin
};

struct Path {
  double j = kInf, cost = 0, time = 0;
  int rescales = 0;
  std::vector<int> size_of_phase;
};

double Tokens(const TrainingOracleSettings& r, double tokens, double from, double to) {
  return std::min(r.rescale_burst, tokens + r.rescales_per_hour / 3600 * std::max(0.0, to - from));
}

// Runs phase i at size s from time t: adds the phase and the failures that fall inside it.
void RunPhase(const Problem& p, int i, int s, Cell& c) {
  const double n = p.sizes[s];
  double d = p.sec[i][s];
  const double t0 = c.time;
  for (double f : p.in->failure_s) {
    if (f >= t0 && f < t0 + d) {
      d += p.failure_time_s;
      c.cost += p.in->provisioning_s * p.gpus;  // the replacement bills while it boots
    }
  }
  c.cost += n * p.gpus * d;
  c.time = t0 + d;
}

Path LagrangianSolve(const Problem& p, double lambda) {
  const int S = static_cast<int>(p.sizes.size()), K = p.max_k + 1;
  const int P = static_cast<int>(p.phases.size());
  const TrainingOracleSettings& r = p.in->rules;
  std::vector<std::vector<Cell>> layers(P, std::vector<Cell>(static_cast<size_t>(S) * K));
  Cell init;
  init.j = 0;
  init.tokens = r.rescale_burst;
  auto offer = [&](std::vector<Cell>& layer, int s, int k, const Cell& c) {
    Cell& dst = layer[static_cast<size_t>(s) * K + k];
    if (c.j < dst.j - kTolerance || (std::abs(c.j - dst.j) <= kTolerance && c.time < dst.time))
      dst = c;
  };
  auto extend = [&](int i, const Cell& from, int a, int k, std::vector<Cell>& layer) {
    // Stay at a.
    Cell c = from;
    c.prev_s = a;
    c.prev_k = k;
    RunPhase(p, i, a, c);
    c.j = c.cost + lambda * c.time;
    offer(layer, a, k, c);
    // Change to b at the boundary, when the dwell has passed and the bucket has a token.
    if (k + 1 >= K || from.time - from.last_rescale < r.min_dwell_s - kTolerance) return;
    const double tok =
        Tokens(r, from.tokens, from.last_rescale == -kInf ? 0 : from.last_rescale, from.time);
    if (tok < 1 - kTolerance) return;
    for (int b = 0; b < S; ++b) {
      if (b == a) continue;
      Cell c2 = from;
      c2.prev_s = a;
      c2.prev_k = k;
      c2.tokens = tok - 1;
      c2.last_rescale = from.time;
      const double nb = p.sizes[b], na = p.sizes[a];
      c2.cost += p.gpus * (nb * p.restart_s + std::max(0.0, nb - na) * p.in->provisioning_s);
      c2.time += p.restart_s;
      RunPhase(p, i, b, c2);
      c2.j = c2.cost + lambda * c2.time;
      offer(layer, b, k + 1, c2);
    }
  };
  extend(0, init, p.start, 0, layers[0]);
  for (int i = 1; i < P; ++i) {
    for (int a = 0; a < S; ++a) {
      for (int k = 0; k < K; ++k) {
        const Cell& from = layers[i - 1][static_cast<size_t>(a) * K + k];
        if (from.j < kInf) extend(i, from, a, k, layers[i]);
      }
    }
  }
  Path best;
  int bs = -1, bk = -1;
  for (int s = 0; s < S; ++s) {
    for (int k = 0; k < K; ++k) {
      const Cell& c = layers[P - 1][static_cast<size_t>(s) * K + k];
      if (c.j < best.j - kTolerance ||
          (std::abs(c.j - best.j) <= kTolerance && bs >= 0 && c.time < best.time)) {
        best.j = c.j;
        best.cost = c.cost;
        best.time = c.time;
        bs = s;
        bk = k;
      }
    }
  }
  if (bs < 0) return best;
  best.rescales = bk;
  best.size_of_phase.assign(P, 0);
  for (int i = P - 1, s = bs, k = bk; i >= 0; --i) {
    const Cell& c = layers[i][static_cast<size_t>(s) * K + k];
    best.size_of_phase[i] = s;
    s = c.prev_s;
    k = c.prev_k;
  }
  return best;
}

// The exact program: per (phase, size, rescales used), every schedule not dominated on
// (GPU-seconds, time, tokens left, time since the last rescale), each of which decides what
// the future allows. Labels that cannot meet the deadline even at the fastest size, or cannot
// beat `incumbent` even at the cheapest, are dropped. A cell over kMaxLabels keeps its
// cheapest ones and sets *thinned (the result is then a schedule, not proven optimal).
struct Label {
  double cost = 0, time = 0, tokens = 0, since = kInf;  // since: time since the last rescale
  int prev_cell = -1, prev_label = -1;
};
constexpr size_t kMaxLabels = 256;

bool Dominates(const Label& a, const Label& b) {
  return a.cost <= b.cost + kTolerance && a.time <= b.time + kTolerance &&
         a.tokens >= b.tokens - kTolerance && a.since >= b.since - kTolerance;
}

void Insert(std::vector<Label>& cell, const Label& l, bool* thinned) {
  for (const Label& x : cell) {
    if (Dominates(x, l)) return;
  }
  cell.erase(
      std::remove_if(cell.begin(), cell.end(), [&](const Label& x) { return Dominates(l, x); }),
      cell.end());
  cell.push_back(l);
  if (cell.size() > kMaxLabels) {
    *thinned = true;
    std::sort(cell.begin(), cell.end(),
              [](const Label& a, const Label& b) { return a.cost < b.cost; });
    cell.resize(kMaxLabels);
  }
}

Path ParetoSolve(const Problem& p, double deadline, double incumbent, bool* thinned) {
  const int S = static_cast<int>(p.sizes.size()), K = p.max_k + 1;
  const int P = static_cast<int>(p.phases.size());
  const TrainingOracleSettings& r = p.in->rules;
  const double rate = r.rescales_per_hour / 3600;
  // Fastest and cheapest possible rest of the job after phase i (no restarts, no failures).
  std::vector<double> fast(P + 1, 0), cheap(P + 1, 0);
  for (int i = P - 1; i >= 0; --i) {
    double f = kInf, c = kInf;
    for (int s = 0; s < S; ++s) {
      f = std::min(f, p.sec[i][s]);
      c = std::min(c, p.gpus * p.sizes[s] * p.sec[i][s]);
    }
    fast[i] = fast[i + 1] + f;
    cheap[i] = cheap[i + 1] + c;
  }
  using Layer = std::vector<std::vector<Label>>;
  std::vector<Layer> layers(P, Layer(static_cast<size_t>(S) * K));
  auto push = [&](int i, int s, int k, Label l, double t0) {
    Cell c;
    c.time = l.time;
    c.cost = l.cost;
    RunPhase(p, i, s, c);
    const double d = c.time - t0;
    l.tokens = std::min(r.rescale_burst, l.tokens + rate * d);
    // Past the dwell, how long ago the last rescale was no longer matters: clamping it lets
    // labels that differ only there dominate each other.
    l.since = std::min(l.since + (c.time - l.time), std::max(r.min_dwell_s, 0.0));
    l.time = c.time;
    l.cost = c.cost;
    if (l.time + fast[i + 1] > deadline + kTolerance) return;
    if (l.cost + cheap[i + 1] > incumbent * (1 + 1e-12) + kTolerance) return;
    Insert(layers[i][static_cast<size_t>(s) * K + k], l, thinned);
  };
  auto extend = [&](int i, const Label& from, int a, int k, int cell, int idx) {
    Label stay = from;
    stay.prev_cell = cell;
    stay.prev_label = idx;
    push(i, a, k, stay, from.time);
    if (k + 1 >= K || from.since < r.min_dwell_s - kTolerance || from.tokens < 1 - kTolerance)
      return;
    for (int b = 0; b < S; ++b) {
      if (b == a) continue;
      Label l = stay;
      const double nb = p.sizes[b], na = p.sizes[a];
      l.cost += p.gpus * (nb * p.restart_s + std::max(0.0, nb - na) * p.in->provisioning_s);
      l.tokens -= 1;
      l.time += p.restart_s;
      l.since = p.restart_s;
      push(i, b, k + 1, l, from.time);
    }
  };
  Label init;
  init.tokens = r.rescale_burst;
  extend(0, init, p.start, 0, -1, -1);
  for (int i = 1; i < P; ++i) {
    for (int cell = 0; cell < S * K; ++cell) {
      const auto& labels = layers[i - 1][cell];
      for (size_t x = 0; x < labels.size(); ++x) {
        extend(i, labels[x], cell / K, cell % K, cell, static_cast<int>(x));
      }
    }
  }
  Path best;
  int bc = -1, bl = -1;
  for (int cell = 0; cell < S * K; ++cell) {
    const auto& labels = layers[P - 1][cell];
    for (size_t x = 0; x < labels.size(); ++x) {
      if (labels[x].time <= deadline + kTolerance && labels[x].cost < best.j) {
        best.j = best.cost = labels[x].cost;
        best.time = labels[x].time;
        bc = cell;
        bl = static_cast<int>(x);
      }
    }
  }
  if (bc < 0) return best;
  best.rescales = bc % K;
  best.size_of_phase.assign(P, 0);
  for (int i = P - 1; i >= 0; --i) {
    const Label& l = layers[i][bc][bl];
    best.size_of_phase[i] = bc / K;
    bc = l.prev_cell;
    bl = l.prev_label;
  }
  return best;
}

// The schedule as steps, recomputed forward from the chosen sizes (restarts, failures, util).
void Describe(const Problem& p, const Path& path, TrainingOracleResult& out) {
  double t = 0, gpu_s = 0, util_s = 0;
  int prev = p.start;
  for (size_t i = 0; i < p.phases.size(); ++i) {
    const int s = path.size_of_phase[i];
    OraclePlanStep st;
    st.phase = p.phases[i].phase;
    st.nodes = p.sizes[s];
    st.start_s = t;
    if (s != prev) {
      t += p.restart_s;
      gpu_s += p.gpus * p.sizes[s] * p.restart_s;
      // New nodes bill, idle, while they boot.
      gpu_s += p.gpus * std::max(0, p.sizes[s] - p.sizes[prev]) * p.in->provisioning_s;
      util_s += 0.02 * p.gpus * p.sizes[s] * p.restart_s;  // RestartRates' trickle
    }
    Cell c;
    c.time = t;
    RunPhase(p, static_cast<int>(i), s, c);
    util_s += p.util[i][s] * p.gpus * p.sizes[s] * p.sec[i][s];
    gpu_s += c.cost;  // the phase, its failures' restarts and their replacements' boot
    t = c.time;
    st.seconds = t - st.start_s;
    out.plan.push_back(st);
    prev = s;
  }
  out.mean_gpu_util = gpu_s > 0 ? util_s / gpu_s : 0;
}

double PhaseSeconds(const TrainingJobConfig& job, const OraclePhase& ph, int n, int g, double mem,
                    double* util) {
  const PhaseRates r = RatesFor(job, ph.phase, n, g, mem);
  *util = r.util;
  return r.progress_per_s > 0 ? ph.work / r.progress_per_s : kInf;
}

}  // namespace

std::vector<OraclePhase> JobPhases(const TrainingJobConfig& job) {
  // The same walk as TrainingJob::NextPhase, on completed epochs instead of steps.
  std::vector<OraclePhase> out;
  const int epochs = job.epochs;
  const double spe = job.steps_per_epoch();
  auto due = [](int every, int e) { return every > 0 && e > 0 && e % every == 0; };
  if (job.initial_load_gb > 0) out.push_back({Phase::kLoad, job.initial_load_gb});
  int e = 0;
  while (e < epochs) {
    int next = e + 1;
    while (next < epochs && !due(job.eval_every_epochs, next) &&
           !due(job.reload_every_epochs, next)) {
      ++next;
    }
    const double steps = std::min(next * spe, job.total_steps) - e * spe;
    if (!out.empty() && out.back().phase == Phase::kCompute) {
      out.back().work += steps;
    } else {
      out.push_back({Phase::kCompute, steps});
    }
    e = next;
    if (due(job.eval_every_epochs, e)) out.push_back({Phase::kEval, job.eval_samples});
    if (e < epochs && due(job.reload_every_epochs, e)) out.push_back({Phase::kLoad, job.reload_gb});
  }
  return out;
}

TrainingOracleSettings TrainingOracleSettings::FromWorkload(const config::ConfigNode& workload) {
  // A scratch error list: the run reads (and reports) these fields itself.
  config::ConfigErrors scratch;
  const config::ConfigNode w(workload.raw(), workload.path(),
                             std::make_shared<const std::string>(workload.file()), &scratch);
  const decide::ConstraintsConfig cc = decide::ConstraintsConfig::Parse(w);
  TrainingOracleSettings s;
  s.min_replicas = std::max(1, cc.min_replicas);
  s.max_replicas = cc.max_replicas;
  s.granularity = std::max(1, cc.granularity);
  const config::ConfigNode pol = w.Child("policy");
  decide::TrainingConfig tc;
  if (pol.String("name", "") == "training") {
    decide::WorkloadContext ctx;
    ctx.min_replicas = s.min_replicas;
    ctx.max_replicas = s.max_replicas;
    ctx.granularity = s.granularity;
    tc = decide::TrainingConfig::Parse(pol, ctx);
  }
  s.max_slowdown = tc.max_slowdown;
  s.rescales_per_hour = tc.rescales_per_hour;
  s.rescale_burst = tc.rescale_burst;
  s.min_dwell_s = tc.min_dwell_s;
  return s;
}

report::OracleFigures TrainingOracleResult::ToFigures(double interval_s) const {
  report::OracleFigures o;
  o.feasible = feasible;
  o.gpu_hours = gpu_hours;
  o.note = why;
  o.completion_time_s = completion_s;
  o.lower_bound_gpu_hours = lower_bound_gpu_hours;
  o.mean_gpu_util = mean_gpu_util;
  o.rescales = rescales;
  o.static_gpu_hours = static_gpu_hours;
  o.static_completion_time_s = static_completion_s;
  o.deadline_s = deadline_s;
  for (const auto& s : plan) {
    o.steps.push_back({std::string(signals::PhaseName(s.phase)), s.nodes, s.start_s, s.seconds});
  }
  // Nodes at the start of every interval, the shape report.html draws for inference too.
  // A job far longer than the run (1e12 steps) would otherwise make millions of points here:
  // at most kMaxTimelinePoints, as for the run's own timeline (docs/limits.md).
  o.plan.interval_s = interval_s;
  if (interval_s > 0 && !plan.empty()) {
    size_t i = 0;
    for (double t = 0; t <= completion_s; t += interval_s) {
      if (static_cast<int64_t>(o.plan.replicas.size()) >= kMaxTimelinePoints) {
        o.plan.truncated = true;
        break;
      }
      while (i + 1 < plan.size() && plan[i + 1].start_s <= t) ++i;
      o.plan.replicas.push_back(plan[i].nodes);
    }
  }
  return o;
}

Result<TrainingOracleResult> ComputeTrainingOracle(const TrainingOracleInput& in) {
  const TrainingOracleSettings& r = in.rules;
  const int g = std::max(1, r.granularity);
  Problem p;
  p.in = &in;
  p.phases = JobPhases(in.job);
  if (p.phases.empty()) return Status::Invalid("unable to compute the training oracle: no phases");
  // The exact search grows faster than linearly with phases (200 took over 10 s): past the
  // budget the report says why there is no oracle instead of the run taking minutes.
  if (p.phases.size() > kMaxOraclePhases) {
    return Status::Invalid("unable to compute the training oracle: the job has " +
                           std::to_string(p.phases.size()) + " phases; the oracle plans at most " +
                           std::to_string(kMaxOraclePhases) + " (docs/limits.md)");
  }
  // The sizes the policy may choose: never above the size the job asked for (its reference).
  const int hi = std::min({r.max_replicas, in.cluster_nodes, in.initial_replicas});
  for (int n = ((std::max(r.min_replicas, 1) + g - 1) / g) * g; n <= hi; n += g) {
    p.sizes.push_back(n);
  }
  if (in.initial_replicas < 1 || in.initial_replicas > in.cluster_nodes) {
    return Status::Invalid("unable to compute the training oracle: initial size " +
                           std::to_string(in.initial_replicas) + " outside the cluster");
  }
  if (std::find(p.sizes.begin(), p.sizes.end(), in.initial_replicas) == p.sizes.end()) {
    p.sizes.push_back(in.initial_replicas);
    std::sort(p.sizes.begin(), p.sizes.end());
  }
  p.start = static_cast<int>(std::find(p.sizes.begin(), p.sizes.end(), in.initial_replicas) -
                             p.sizes.begin());
  p.gpus = in.gpus_per_node;
  p.restart_s = in.job.restart_s();
  p.failure_time_s = in.job.rendezvous_s + in.job.restore_s + in.job.restart_s();
  for (const OraclePhase& ph : p.phases) {
    std::vector<double> sec, util;
    for (int n : p.sizes) {
      double u = 0;
      sec.push_back(PhaseSeconds(in.job, ph, n, in.gpus_per_node, in.gpu_memory_gb, &u));
      util.push_back(u);
    }
    p.sec.push_back(std::move(sec));
    p.util.push_back(std::move(util));
  }

  TrainingOracleResult out;
  // The static run in the same model: the initial size throughout.
  Path st;
  {
    Cell c;
    for (size_t i = 0; i < p.phases.size(); ++i) RunPhase(p, static_cast<int>(i), p.start, c);
    st.cost = c.cost;
    st.time = c.time;
    st.size_of_phase.assign(p.phases.size(), p.start);
  }
  out.static_gpu_hours = st.cost / 3600;
  out.static_completion_s = st.time;
  out.deadline_s = (1 + r.max_slowdown) * st.time;
  if (in.duration_limit_s > 0) out.deadline_s = std::min(out.deadline_s, in.duration_limit_s);
  const double bucket_max = r.rescale_burst + r.rescales_per_hour * out.deadline_s / 3600;
  p.max_k = std::clamp(static_cast<int>(std::floor(bucket_max + kTolerance)), 0,
                       std::min<int>(kMaxRescales, static_cast<int>(p.phases.size())));
  if (p.max_k == 0) out.why = "the rescale budget allows no rescale: the oracle's plan is static";
  if (r.min_dwell_s >= st.time) {
    out.why = "min_dwell (" + std::to_string(static_cast<int>(r.min_dwell_s)) +
              " s) is longer than the job at its initial size (" +
              std::to_string(static_cast<int>(st.time)) + " s): at most one rescale";
  }

  // lambda = 0: cheapest regardless of time; grow it until the deadline holds.
  Path best;
  bool have_best = false;
  double dual = -kInf;
  auto consider = [&](double lambda) {
    Path x = LagrangianSolve(p, lambda);
    dual = std::max(dual, x.j - lambda * out.deadline_s);
    if (x.time <= out.deadline_s + kTolerance && (!have_best || x.cost < best.cost)) {
      best = x;
      have_best = true;
    }
    return x;
  };
  double lo = 0, hi_l = 0;
  if (consider(0).time > out.deadline_s + kTolerance) {
    hi_l = in.gpus_per_node;
    while (consider(hi_l).time > out.deadline_s + kTolerance) {
      lo = hi_l;
      hi_l *= 4;
      if (hi_l > 1e12) break;
    }
    if (!have_best) {
      // Even time at any price misses: say by how much, with the fastest schedule found.
      Path fast = LagrangianSolve(p, hi_l);
      out.feasible = false;
      out.why = "no schedule finishes within the deadline of " +
                std::to_string(static_cast<int>(out.deadline_s)) +
                " s (static in this model: " + std::to_string(static_cast<int>(st.time)) +
                " s; the fastest schedule: " + std::to_string(static_cast<int>(fast.time)) +
                " s; the scenario's duration limit: " +
                std::to_string(static_cast<int>(in.duration_limit_s)) + " s)";
      best = fast;
    } else {
      for (int it = 0; it < kBisections && hi_l - lo > 1e-9 * hi_l; ++it) {
        const double mid = 0.5 * (lo + hi_l);
        (consider(mid).time > out.deadline_s + kTolerance ? lo : hi_l) = mid;
      }
    }
  }
  if (best.size_of_phase.empty()) best = st;  // cannot happen: lambda = 0 always has a path
  if (out.feasible) {
    // The Lagrangian's best feasible schedule bounds the exact search from above.
    bool thinned = false;
    Path exact = ParetoSolve(p, out.deadline_s, best.cost, &thinned);
    if (!exact.size_of_phase.empty() && exact.cost < best.cost) best = exact;
    if (thinned) {
      out.why += std::string(out.why.empty() ? "" : "; ") + "the exact search kept at most " +
                 std::to_string(kMaxLabels) +
                 " schedules per state, so the plan may be above the optimum (the lower bound "
                 "still holds)";
    }
  }
  out.gpu_hours = best.cost / 3600;
  out.completion_s = best.time;
  out.rescales = best.rescales;
  out.lower_bound_gpu_hours = out.feasible ? std::min(out.gpu_hours, dual / 3600) : 0;
  Describe(p, best, out);
  return out;
}

}  // namespace aiscale::sim
