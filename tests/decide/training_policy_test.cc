#include "decide/policies/training.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/signal.h"

namespace aiscale::decide {
namespace {

using signals::Phase;

// Samples/s of a data-parallel job whose all-reduce dominates past a few nodes (the knee).
double CommHeavy(int n) { return 512.0 / (1.28 / n + 0.004 + 2.0 * (n - 1) / n * 0.14); }
// Nearly linear scaling.
double Linear(int n) { return 1000.0 * n / (1 + 0.01 * (n - 1)); }

// A scripted job driven tick by tick: the policy's recommendations are applied at once
// (current = ready = desired) and the job then restarts for restart_s with no throughput.
struct Harness {
  Harness(TrainingConfig c, WorkloadContext ctx, int start) : policy(c, ctx), current(start) {
    ready = start;
  }
  TrainingPolicy policy;
  PersistentState state;
  WorkloadSignals sig;
  double now = 0;
  int current;
  int ready;
  std::optional<int> max_available;
  std::optional<int> pool_limit;  // what a shared pool granted when it was less than asked
  std::function<double(int)> rate = Linear;
  Phase phase = Phase::kCompute;
  double util = 92;
  double load_util = 25;
  double remaining = 1e9;
  double samples_per_epoch = 1e6;
  double done = 0;
  bool report_phase = true;
  bool report_samples = true;
  bool report_remaining = false;  // with report_samples off: samples_remaining still reported
  bool apply = true;
  double restart_until = -1;
  std::vector<std::pair<double, Recommendation>> log;

  double Samples() const {
    if (now < restart_until || phase != Phase::kCompute) return 0;
    return rate(current);
  }
  Recommendation Tick() {
    const TimePoint at = AtSeconds(now);
    auto put = [&](std::string_view name, double v) {
      sig.Ingest(name, {Observation{std::string(name), "", v, at, true}}, at, Seconds(45));
    };
    const double x = Samples();
    if (report_samples) {
      put(signals::kSamplesPerS, x);
    } else {
      sig.Ingest(signals::kSamplesPerS, {}, at, Seconds(45));
    }
    if (report_samples || report_remaining) {
      put(signals::kSamplesRemaining, remaining);
    } else {
      sig.Ingest(signals::kSamplesRemaining, {}, at, Seconds(45));  // the endpoint is gone
    }
    put(signals::kEpoch, std::floor(done / samples_per_epoch));
    const bool restarting = now < restart_until;
    put(signals::kGpuUtil, restarting ? 2 : (phase == Phase::kLoad ? load_util : util));
    if (report_phase) put(signals::kPhase, static_cast<double>(phase));
    PolicyInput in{sig, current, ready, at, max_available, pool_limit, std::nullopt, 0};
    Recommendation r = policy.Recommend(in, state);
    EXPECT_FALSE(r.rule.empty()) << "t=" << now;
    EXPECT_FALSE(r.reason.empty()) << "t=" << now;
    EXPECT_FALSE(r.facts.empty()) << "t=" << now;
    log.emplace_back(now, r);
    if (std::getenv("TRAINING_TEST_TRACE") &&
        (r.desired != current || !r.valid || std::getenv("TRAINING_TEST_TRACE")[0] == 'a')) {
      std::printf("t=%.0f cur=%d -> %d %s: %s\n", now, current, r.desired, r.rule.c_str(),
                  r.reason.c_str());
      for (const auto& [name, v] : r.facts) std::printf("  %s=%g\n", name.c_str(), v);
    }
    if (apply && r.valid && r.desired != current) {
      current = ready = r.desired;
      restart_until = now + policy.config().restart_cost_s;
    }
    return r;
  }
  // Runs ticks every `period` seconds until `until` (exclusive); the job makes progress.
  void RunUntil(double until, double period = 15) {
    while (now < until) {
      Tick();
      const double x = Samples();
      done += x * period;
      remaining = std::max(0.0, remaining - x * period);
      now += period;
    }
  }
  int Rescales() const {
    int n = 0;
    for (const auto& [t, r] : log)
      n += r.rule.rfind("rescale", 0) == 0 || r.rule == "probe_smaller_size";
    return n;
  }
};

WorkloadContext Ctx(int min = 1, int max = 100, int granularity = 1) {
  WorkloadContext c;
  c.min_replicas = min;
  c.max_replicas = max;
  c.granularity = granularity;
  c.control_period_s = 15;
  return c;
}

TEST(TrainingPolicy, FailedNodeReplacedAfterGraceEvenInsideTheDwell) {
  Harness h(TrainingConfig{}, Ctx(), 4);
  h.RunUntil(600);
  // Someone grows the job to 8: adopted as the asked size, and it starts a dwell.
  h.current = h.ready = 8;
  h.restart_until = h.now + 180;
  h.RunUntil(1200);
  EXPECT_EQ(h.log.back().second.rule, "hold_dwell");
  // A node fails at t=1200: current and ready drop to 7 (the contract), the job restarts.
  h.current = h.ready = 7;
  h.restart_until = h.now + 180;
  h.apply = false;
  for (double t : {1200.0, 1215.0, 1245.0, 1259.0}) {
    h.now = t;
    const Recommendation r = h.Tick();
    EXPECT_NE(r.rule, "replace_failed_nodes") << "t=" << t;
    EXPECT_EQ(r.desired, 7) << "t=" << t;
  }
  h.now = 1260;
  const Recommendation r = h.Tick();
  EXPECT_EQ(r.rule, "replace_failed_nodes");
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.desired, 8);
  // Capped by free capacity.
  h.max_available = 7;
  h.now = 1275;
  EXPECT_NE(h.Tick().desired, 8);
}

// A one-node job of a linear model with a long way to go, ticked (its asks not applied) until
// it asks to grow, or for 10 minutes.
Harness GrowingJob() {
  TrainingConfig c;
  c.reference_replicas = 8;
  Harness h(c, Ctx(), 1);
  h.remaining = Linear(8) * 30 * 3600;
  h.apply = false;
  for (h.now = 0; h.now < 600; h.now += 15) {
    const Recommendation r = h.Tick();
    if (r.valid && r.desired > 1) {
      h.now += 15;
      break;
    }
  }
  return h;
}

// The size the job last asked for (1 if it never asked to grow).
int LastAsk(const Harness& h) {
  for (auto it = h.log.rbegin(); it != h.log.rend(); ++it) {
    if (it->second.valid && it->second.desired > 1) return it->second.desired;
  }
  return 1;
}

TEST(TrainingPolicy, AGrowthThePoolDeniedIsNotANodeToReplace) {
  // The job asks for more; a shared pool grants none of it (pool_limit = current). Later the
  // pool frees one GPU at a time. The denied ask must not read as failed nodes: replacing them
  // would grow the job onto each freed GPU, one restart per tick, outside the rescale budget.
  // The control row, without the pool's word, is a real deficit and is replaced.
  for (const bool by_pool : {true, false}) {
    SCOPED_TRACE(by_pool ? "the pool denied the growth" : "control: nodes lost");
    Harness h = GrowingJob();
    ASSERT_GT(LastAsk(h), 2) << "the linear job never asked to grow";
    if (by_pool) h.pool_limit = 1;
    int replaced = 0;
    for (int free = 0; free < 10; ++free, h.now += 15) {
      h.max_available = 1 + free / 3;  // the pool frees a GPU every three ticks
      const Recommendation r = h.Tick();
      replaced += r.rule == "replace_failed_nodes";
    }
    if (by_pool) {
      EXPECT_EQ(replaced, 0);
    } else {
      EXPECT_GT(replaced, 0);
    }
  }
}

TEST(TrainingPolicy, ANodeLostBelowThePoolsGrantIsReplacedUpToTheGrant) {
  // The job asks to grow; the pool grants 4 of it and the engine gets only 3 (a node lost on the
  // way). The node is replaced, up to the pool's 4, not to the whole ask.
  Harness h = GrowingJob();
  ASSERT_GT(LastAsk(h), 4) << "the linear job never asked past the grant";
  h.pool_limit = 4;
  h.current = h.ready = 3;
  h.max_available = 10;
  std::optional<Recommendation> replaced;
  for (int i = 0; i < 12 && !replaced; ++i, h.now += 15) {
    const Recommendation r = h.Tick();
    if (r.rule == "replace_failed_nodes") replaced = r;
  }
  ASSERT_TRUE(replaced) << "the lost node was never replaced";
  EXPECT_EQ(replaced->desired, 4) << replaced->reason;
}

TEST(TrainingPolicy, NoRescaleInsideTheDwellOrBeyondTheBudget) {
  // After the first move below 8 (observed on the next tick), the size holds for min_dwell and
  // while the bucket has no token; the rules say which, to the second.
  struct Case {
    std::string name;
    double burst;
    double after_s;  // since the rescale was observed
    std::string want;
  };
  const std::vector<Case> cases = {
      {"dwell holds at 899 s", 2, 899, "hold_dwell"},
      {"dwell over at 900 s, a token left", 2, 900, ""},
      {"burst 1: no token at 900 s", 1, 900, "hold_rescale_budget"},
      {"burst 1: no token at 3599 s", 1, 3599, "hold_rescale_budget"},
      {"burst 1: a token at 3600 s", 1, 3600, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TrainingConfig cfg;
    cfg.rescale_burst = c.burst;
    cfg.restart_cost_s = 10;  // cheap enough that probing the knee pays for itself
    Harness h(cfg, Ctx(), 8);
    h.rate = CommHeavy;
    h.util = 60;  // the step waits on the network; the prior expects a knee below 8
    h.RunUntil(3600);
    double rescaled_at = -1;
    for (const auto& [t, r] : h.log) {
      if (r.valid && r.desired != 8 && rescaled_at < 0) rescaled_at = t;
    }
    ASSERT_GE(rescaled_at, 0) << "expected a first move below 8";
    const double observed = rescaled_at + 15;
    h.apply = false;
    h.now = observed + c.after_s;
    const std::string rule = h.Tick().rule;
    if (c.want.empty()) {
      EXPECT_NE(rule, "hold_dwell");
      EXPECT_NE(rule, "hold_rescale_budget");
    } else {
      EXPECT_EQ(rule, c.want);
    }
  }
}

TEST(TrainingPolicy, RescalesPerHourStayWithinTheBucket) {
  // A job whose best size keeps moving (phases alternate every 40 min) must not rescale more
  // than burst + rate x hours.
  TrainingConfig cfg;
  cfg.min_dwell_s = 60;
  Harness h(cfg, Ctx(), 8);
  h.rate = CommHeavy;
  h.util = 60;
  for (int i = 0; i < 12; ++i) {
    h.phase = i % 2 ? Phase::kLoad : Phase::kCompute;
    h.RunUntil(h.now + 2400);
  }
  const double hours = h.now / 3600;
  EXPECT_LE(h.Rescales(), cfg.rescale_burst + cfg.rescales_per_hour * hours);
  EXPECT_GT(h.Rescales(), 0);
}

TEST(TrainingPolicy, InitialIoBoundLoadShrinksThenRestoresAtTheBoundary) {
  // The story: loading -> 4 nodes, compute -> 8. Before any throughput, low util and no
  // samples: on first sight (after the phase dwell and two readings) n x util / load_util_max =
  // 8 x 22 / 50 -> 4 nodes; at the load -> compute boundary, back to 8 on the next tick.
  Harness h(TrainingConfig{}, Ctx(), 8);
  h.phase = Phase::kLoad;
  h.load_util = 22;
  h.RunUntil(1200);
  double shrink_at = -1;
  for (const auto& [t, r] : h.log) {
    if (r.rule == "shrink_io_bound_load" && shrink_at < 0) {
      shrink_at = t;
      EXPECT_EQ(r.desired, 4) << r.reason;
    }
  }
  ASSERT_GE(shrink_at, 0);
  EXPECT_LE(shrink_at, 60);
  EXPECT_EQ(h.current, 4);
  h.phase = Phase::kCompute;
  h.RunUntil(h.now + 15);
  EXPECT_EQ(h.log.back().second.rule, "restore_after_load") << h.log.back().second.reason;
  EXPECT_EQ(h.current, 8);
}

TEST(TrainingPolicy, TwoSizesTellHowFewNodesKeepTheLoadIoBound) {
  // Storage-bound, util = a + b/n: 22% at 8 nodes, 24% at 4 give a = 20, b = 16, and 1 node
  // stays under load_util_max (50%). The second step waits for the dwell and for the payoff
  // on the load's expected remaining length (as long again as so far).
  Harness h(TrainingConfig{}, Ctx(), 8);
  h.phase = Phase::kLoad;
  h.load_util = 22;
  h.RunUntil(120);
  ASSERT_EQ(h.current, 4);
  h.load_util = 24;
  h.RunUntil(4000);
  std::vector<int> sizes;
  for (const auto& [t, r] : h.log) {
    if (r.rule == "shrink_io_bound_load") sizes.push_back(r.desired);
  }
  EXPECT_EQ(sizes, (std::vector<int>{4, 1}));
  EXPECT_EQ(h.current, 1);
}

TEST(TrainingPolicy, GrowingBackAfterAFailureSpendsNoToken) {
  // A failure drops the job to 7; the constraints (or anyone) bring it back to 8: that is a
  // replacement, not a rescale, so the bucket keeps its tokens.
  Harness h(TrainingConfig{}, Ctx(), 8);
  h.RunUntil(600);
  auto tokens = [&] {
    for (const auto& [name, v] : h.log.back().second.facts) {
      if (name == "rescale_tokens") return v;
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(tokens(), 2);
  h.current = h.ready = 7;
  h.RunUntil(630);
  h.current = h.ready = 8;
  h.RunUntil(660);
  EXPECT_DOUBLE_EQ(tokens(), 2);
}

TEST(TrainingPolicy, GainBelowRestartCostHolds) {
  // Ten minutes of work left and a loose budget: 5 or 6 nodes finish in time and save node-
  // seconds (prior at 60% util: 6 is 1.2x slower, 5 is 1.36x), but the saving has to beat
  // (1 + margin) x the restart's node-seconds.
  struct Case {
    std::string name;
    double margin;
    std::string rule;
  };
  const std::vector<Case> cases = {
      {"gain pays for the restart", 0, "rescale_to_best_size"},
      {"gain below restart cost with margin", 2, "hold_gain_below_restart_cost"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TrainingConfig cfg;
    cfg.max_slowdown = 0.5;
    cfg.restart_cost_s = 60;
    cfg.gain_margin = c.margin;
    Harness h(cfg, Ctx(), 8);
    h.rate = CommHeavy;
    h.util = 60;
    h.apply = false;
    h.remaining = CommHeavy(8) * 600;
    // 5 readings at 8 (the first tick only starts the phase): the baseline a move to a size
    // never measured waits for.
    h.RunUntil(90);
    const Recommendation r = h.log.back().second;
    EXPECT_EQ(r.rule, c.rule) << r.reason;
    EXPECT_EQ(r.desired < 8, c.margin == 0) << r.reason;
  }
}

TEST(TrainingPolicy, IoBoundLongLoadPhaseRunsOnFewerNodes) {
  Harness h(TrainingConfig{}, Ctx(), 8);
  h.rate = Linear;
  h.remaining = Linear(8) * 20 * 3600;
  h.RunUntil(3 * 3600);
  EXPECT_EQ(h.current, 8) << "near-linear compute stays at (or returns to) the reference size";
  const size_t load_start = h.log.size();
  h.phase = Phase::kLoad;  // a long load from shared storage: no samples, GPUs at 25%
  h.RunUntil(5 * 3600);
  int smallest = 8;
  std::string rule;
  for (size_t i = load_start; i < h.log.size(); ++i) {
    const Recommendation& r = h.log[i].second;
    if (r.valid && r.desired < smallest) {
      smallest = r.desired;
      rule = r.rule;
    }
  }
  EXPECT_LT(smallest, 8);
  EXPECT_EQ(rule, "rescale_for_phase");
  // Compute resumes: the job grows back to the reference size.
  h.phase = Phase::kCompute;
  h.RunUntil(h.now + 2 * 3600);
  EXPECT_EQ(h.current, 8);
}

TEST(TrainingPolicy, ComputePhaseGoesToTheKnee) {
  TrainingConfig c;
  c.reference_replicas = 8;
  struct Case {
    std::string name;
    int start;
  };
  // The true cheapest size within 10% of the reference's time on the CommHeavy curve.
  int knee = 8;
  for (int n = 1; n <= 8; ++n) {
    if (CommHeavy(8) / CommHeavy(n) <= 1.10) {
      knee = n;
      break;
    }
  }
  for (const Case& k : std::vector<Case>{{"from the reference", 8}, {"from below", 2}}) {
    SCOPED_TRACE(k.name);
    Harness h(c, Ctx(), k.start);
    h.rate = CommHeavy;
    h.util = 80;
    h.samples_per_epoch = 1e5;
    h.remaining = CommHeavy(8) * 30 * 3600;
    h.RunUntil(8 * 3600);
    EXPECT_NEAR(h.current, knee, 1) << h.log.back().second.reason;
    EXPECT_LE(h.Rescales(), 8);
  }
}

TEST(TrainingPolicy, SizesStayWithinCapacityGroupsAndModelMinimum) {
  TrainingConfig c;
  c.reference_replicas = 8;
  c.min_dwell_s = 600;
  Harness h(c, Ctx(4, 16, 2), 8);
  h.rate = CommHeavy;
  h.util = 60;
  h.samples_per_epoch = 1e4;
  h.remaining = CommHeavy(8) * 20 * 3600;
  h.max_available = 8;
  h.RunUntil(3 * 3600);
  h.phase = Phase::kLoad;
  h.RunUntil(6 * 3600);
  h.phase = Phase::kCompute;
  h.max_available = 6;
  h.RunUntil(9 * 3600);
  int changes = 0;
  for (const auto& [t, r] : h.log) {
    double cur = -1;
    for (const auto& f : r.facts) {
      if (f.first == "current") cur = f.second;
    }
    if (!r.valid || r.desired == cur) continue;  // holds stay where they are
    SCOPED_TRACE(r.rule + ": " + r.reason);
    ++changes;
    EXPECT_EQ(r.desired % 2, 0);
    EXPECT_GE(r.desired, 4);
    EXPECT_LE(r.desired, t < 6 * 3600 ? 8 : 6);
  }
  EXPECT_GT(changes, 0) << "the scenario must exercise the bounds";
}

TEST(TrainingPolicy, MissingSamplesNeverScalesDown) {
  Harness h(TrainingConfig{}, Ctx(), 8);
  h.rate = CommHeavy;
  h.util = 60;
  h.apply = false;
  h.report_samples = false;
  h.RunUntil(3 * 3600);
  for (const auto& [t, r] : h.log) {
    EXPECT_FALSE(r.valid && r.desired < 8) << "t=" << t << " " << r.rule;
  }
  EXPECT_EQ(h.log.back().second.rule, "hold_missing_signal");
  EXPECT_NE(h.log.back().second.reason.find("samples_per_s"), std::string::npos);
}

TEST(TrainingPolicy, DecisionsCarryTheirNumbers) {
  TrainingConfig cfg;
  cfg.restart_cost_s = 10;  // cheap enough that probing the knee pays for itself
  Harness h(cfg, Ctx(), 8);
  h.rate = CommHeavy;
  h.util = 60;
  h.RunUntil(4 * 3600);
  // The facts each size-changing rule must carry.
  const std::vector<std::pair<std::string, std::vector<std::string>>> needs = {
      {"rescale", {"gain", "gain_needed", "best", "deadline_s", "stay_time_s"}},
      {"probe_smaller_size", {"probe", "probe_lag_s", "slack_s", "deadline_s"}},
  };
  int changes = 0;
  for (const auto& [t, r] : h.log) {
    for (const auto& [prefix, keys] : needs) {
      if (r.rule.rfind(prefix, 0) != 0) continue;
      ++changes;
      for (const std::string& k : keys) {
        bool has = false;
        for (const auto& f : r.facts) has |= f.first == k;
        EXPECT_TRUE(has) << r.rule << " lacks " << k;
      }
    }
  }
  EXPECT_GT(changes, 0);
}

// elastic_learn's job (tests/integration/elastic_learn.sh) on a busy machine: 3 agents slower
// than 2 (541 vs 939 samples/s), ticks every 3 s, reference 3.
struct ElasticLearn {
  static TrainingConfig Config() {
    TrainingConfig c;
    c.reference_replicas = 3;
    c.rescales_per_hour = 60;
    c.rescale_burst = 3;
    c.min_dwell_s = 45;
    c.restart_cost_s = 15;
    c.warmup_s = 30;
    c.grace_period_s = 30;
    return c;
  }
  static WorkloadContext Context() {
    WorkloadContext ctx = Ctx(2, 3);
    ctx.control_period_s = 3;
    return ctx;
  }
  // Runs the job from 2 agents until the policy has gone to 3 and back to 2, then `settle_s`
  // more at 2 (as the Harness applies at once).
  static void ToThreeAndBack(Harness& h, double settle_s) {
    h.rate = [](int n) { return n == 3 ? 541.0 : 939.0; };
    h.RunUntil(600, 3);
    ASSERT_EQ(h.current, 2) << h.log.back().second.reason;
    ASSERT_EQ(Moves(h, 3), 1) << "expected 2 -> 3 -> 2 first";
    h.RunUntil(h.now + settle_s, 3);
  }
  // Ticks every 3 s until the job has been at 3 and is back at 2 (at most until `limit`);
  // whether it came back.
  static bool UntilBackAtTwo(Harness& h, double limit) {
    bool was_at_3 = false;
    while (h.now < limit && !(was_at_3 && h.current == 2)) {
      was_at_3 = was_at_3 || h.current == 3;
      h.RunUntil(h.now + 3, 3);
    }
    return was_at_3 && h.current == 2;
  }
  static int Moves(const Harness& h, int to) {
    int n = 0;
    for (const auto& [t, r] : h.log)
      n += r.valid && r.desired == to && r.rule.rfind("rescale", 0) == 0;
    return n;
  }
};

TEST(TrainingPolicy, OneNoisyReadingAtAMeasuredSizeSendsNoJobBack) {
  // Issue 27: 3 was measured slower and the job came back to 2; its metrics are unreachable
  // for a minute (rank 0 restarting, scrapes timing out on the busy machine), then one late
  // tick, 30 s after the last, reads 306.6 samples/s at 2. On that one reading the job must not
  // go to 3 again: the move has to be backed beyond the noise seen at 2. (Before, the reading
  // weighed all 30 s against 2's one earlier reading, and the job went back to 3.)
  Harness h(ElasticLearn::Config(), ElasticLearn::Context(), 2);
  h.rate = [](int n) { return n == 3 ? 541.0 : 939.0; };
  ASSERT_TRUE(ElasticLearn::UntilBackAtTwo(h, 600)) << h.log.back().second.reason;
  h.report_samples = false;  // scrapes fail: samples_per_s missing, nothing learned
  h.RunUntil(h.now + 60, 3);
  h.report_samples = true;
  h.rate = [](int n) { return n == 3 ? 541.0 : 306.6; };
  h.now += 27;  // the late tick: 30 s after the last one
  h.Tick();
  h.rate = [](int n) { return n == 3 ? 541.0 : 939.0; };
  h.RunUntil(h.now + 900, 3);
  EXPECT_EQ(ElasticLearn::Moves(h, 3), 1) << "went back to 3 on one noisy reading";
  EXPECT_EQ(h.current, 2);
  // The decisions say how sure they are.
  bool stated = false;
  for (const auto& [t, r] : h.log) {
    for (const auto& [name, v] : r.facts) stated |= name == "compute_sd_at_2";
  }
  EXPECT_TRUE(stated);
}

TEST(TrainingPolicy, ASizeIsLeftForAnUnmeasuredOneOnlyWithReadingsToJudgeItBy) {
  // The CI run of elastic_learn (2026-12-05): the job started at 2, the prior sent it to 3 on
  // the first reading at 2, 3 read 222 samples/s per node against 2's 327, and the job stayed
  // at 3 for good: one reading at 2 has the pooled spread (15%) as its own, z = 2.2 < 3, and
  // no more readings at 2 could come. An exploring move must first leave a baseline to judge
  // it by: a few readings where the job is. Readings here vary +-15% tick to tick.
  Harness h(ElasticLearn::Config(), ElasticLearn::Context(), 2);
  int tick = 0;
  h.rate = [&tick](int n) {
    const double noise = 1 + 0.15 * ((tick++ + 1) % 3 - 1);  // first reading: 1.0
    return (n == 3 ? 3 * 222.0 : 2 * 327.0) * noise;
  };
  h.RunUntil(900, 3);
  EXPECT_EQ(ElasticLearn::Moves(h, 3), 1);
  EXPECT_EQ(ElasticLearn::Moves(h, 2), 1) << h.log.back().second.reason;
  EXPECT_EQ(h.current, 2) << h.log.back().second.reason;
  // The exploring move said what it waited for, and left with readings at 2 behind it.
  double readings_at_2 = 0;
  for (const auto& [t, r] : h.log) {
    if (r.desired == 3 && r.rule.rfind("rescale", 0) == 0) {
      for (const auto& [name, v] : r.facts) {
        if (name == "evidence_readings_at_2") readings_at_2 = v;
      }
      break;
    }
  }
  EXPECT_GE(readings_at_2, 5);
}

TEST(TrainingPolicy, AShrinkWithinTheBudgetIsNotUndoneByASmallDrift) {
  // elastic_learn on a busy machine (2026-12-05): 3 agents 672.6 samples/s, 2 agents 624.4,
  // 7.8% slower, within the 10% budget with the 2% a shrink must spare: 3 -> 2. At 2, the
  // machine got busier and 2 read 602.7 (11.6% slower than 3): staying missed the budget by
  // 1.6%, and the job went back to 3 for time, a revisit. Staying may use the same 2% a shrink
  // spared, so a drift within that band holds.
  Harness h(ElasticLearn::Config(), ElasticLearn::Context(), 2);
  h.rate = [](int n) { return n == 3 ? 672.6 : 624.4; };
  ASSERT_TRUE(ElasticLearn::UntilBackAtTwo(h, 900)) << h.log.back().second.reason;
  h.rate = [](int n) { return n == 3 ? 672.6 : 602.7; };
  h.RunUntil(h.now + 900, 3);
  EXPECT_EQ(ElasticLearn::Moves(h, 3), 1) << h.log.back().second.reason;
  EXPECT_EQ(h.current, 2);
  // The control: 2 falling well past the band (20% slower than 3) does go back to 3.
  h.rate = [](int n) { return n == 3 ? 672.6 : 560.0; };
  h.RunUntil(h.now + 900, 3);
  EXPECT_EQ(ElasticLearn::Moves(h, 3), 2) << h.log.back().second.reason;
  EXPECT_EQ(h.current, 3);
}

TEST(TrainingPolicy, AMachineThatGotBusierSendsNoJobBackToASizeMeasuredWorse) {
  // CI of 2026-12-05 (elastic_learn): 2 agents read 724 samples/s, 3 read 698, and the job came
  // back to 2. Then the machine got busier: 2 read about 520, and the whole of 2's readings
  // (575) against 3's (698, read before) sent the job to 3 again at z = 3, a revisit. 3 would
  // have been slower too; 2's readings from 3's time are what 3 is weighed against.
  Harness h(ElasticLearn::Config(), ElasticLearn::Context(), 2);
  h.rate = [](int n) { return n == 3 ? 698.0 : 724.0; };
  ASSERT_TRUE(ElasticLearn::UntilBackAtTwo(h, 600)) << h.log.back().second.reason;
  h.rate = [](int n) { return 0.72 * (n == 3 ? 698.0 : 724.0); };
  h.RunUntil(h.now + 150, 3);
  EXPECT_EQ(ElasticLearn::Moves(h, 3), 1) << h.log.back().second.reason;
  EXPECT_EQ(h.current, 2);
  bool said = false;
  for (const auto& [t, r] : h.log) {
    said = said || r.reason.find("2 changed speed since its earlier readings") != std::string::npos;
  }
  EXPECT_TRUE(said) << h.log.back().second.reason;
}

TEST(TrainingPolicy, NoisyReadingsAcrossTheBudgetLineSendNoJobBack) {
  // elastic_learn under two CPU hogs (2026-12-05): 3 agents 386.5 samples/s, 2 agents 7.2%
  // slower, a shrink within the 10% budget. Back at 2, its readings averaged 12.4% slower than
  // 3's, past the budget and its 2% band, and the job grew to 3 again, on readings whose
  // ratio had a 3.3% standard error. Staying may run past the budget by 2 such errors. Here
  // readings vary +-10% tick to tick; 2 then reads 14% slower than 3.
  Harness h(ElasticLearn::Config(), ElasticLearn::Context(), 2);
  int tick = 0;
  auto noisy = [&tick](double v) { return v * (1 + 0.10 * ((tick++ + 1) % 3 - 1)); };
  h.rate = [&](int n) { return noisy(n == 3 ? 386.5 : 358.8); };
  ASSERT_TRUE(ElasticLearn::UntilBackAtTwo(h, 900)) << h.log.back().second.reason;
  h.rate = [&](int n) { return noisy(n == 3 ? 386.5 : 386.5 / 1.14); };
  h.RunUntil(h.now + 600, 3);
  EXPECT_EQ(ElasticLearn::Moves(h, 3), 1) << h.log.back().second.reason;
  EXPECT_EQ(h.current, 2);
  // The control: 2 reading 35% slower is a miss whatever the noise, and the job grows.
  h.rate = [&](int n) { return noisy(n == 3 ? 386.5 : 386.5 / 1.35); };
  h.RunUntil(h.now + 600, 3);
  EXPECT_EQ(ElasticLearn::Moves(h, 3), 2) << h.log.back().second.reason;
  EXPECT_EQ(h.current, 3);
}

TEST(TrainingPolicy, ABetterSizeIsTakenOnceTheReadingsShowIt) {
  // The same job, but from 60 s after its return to 2 the machine is slower for good: 2
  // agents read 250 samples/s, tick after tick. The readings at 2 soon say, beyond their
  // noise, that 3 (541) is faster: the job goes to 3 and says what backed the move.
  Harness h(ElasticLearn::Config(), ElasticLearn::Context(), 2);
  ElasticLearn::ToThreeAndBack(h, 60);
  h.rate = [](int n) { return n == 3 ? 541.0 : 250.0; };
  h.RunUntil(h.now + 900, 3);
  EXPECT_EQ(ElasticLearn::Moves(h, 3), 2);
  EXPECT_EQ(h.current, 3);
  std::string reason;
  for (const auto& [t, r] : h.log) {
    if (r.rule == "rescale_to_best_size" && r.desired == 3) reason = r.reason;
  }
  EXPECT_NE(reason.find("evidence: measured"), std::string::npos) << reason;
}

TEST(TrainingPolicy, AFinishedJobIsCompletedNotReplaced) {
  // Issue 27 §3: the job trains, reports no samples remaining, then its agents exit (ready
  // drops to 0, its metrics endpoint goes, the signals go missing). Nothing is replaced or
  // restarted, however long that lasts; the decisions say "completed".
  struct Case {
    std::string name;
    bool report_zero;  // the job's last scrape read samples_remaining 0
    std::string rule;  // after the agents exited, past the grace period
  };
  const std::vector<Case> cases = {
      {"reported done", true, "completed"},
      // The control: the same exit without the report is a failure to replace.
      {"vanished mid-run", false, "replace_failed_nodes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h(ElasticLearn::Config(), ElasticLearn::Context(), 2);
    h.rate = [](int n) { return n == 3 ? 541.0 : 939.0; };
    h.RunUntil(600, 3);
    const int size = h.current;
    if (c.report_zero) {
      h.remaining = 0;
      h.Tick();
      EXPECT_EQ(h.log.back().second.rule, "completed") << h.log.back().second.reason;
      EXPECT_EQ(h.log.back().second.desired, size);
    }
    h.ready = 0;
    h.report_samples = false;
    h.RunUntil(h.now + 300, 3);
    const Recommendation& r = h.log.back().second;
    EXPECT_EQ(r.rule, c.rule) << r.reason;
    if (c.report_zero) {
      EXPECT_EQ(r.desired, size);
      EXPECT_TRUE(r.valid);
      for (const auto& [t, rec] : h.log) EXPECT_NE(rec.rule, "replace_failed_nodes") << t;
    }
  }
}

TEST(TrainingConfig, ValidationNamesTheField) {
  struct Case {
    std::string name;
    std::string yaml;
    std::string want;  // substring of the error text; empty: no error
  };
  const std::vector<Case> cases = {
      {"defaults", "name: training\n", ""},
      {"durations", "name: training\nmin_dwell: 30m\nrestart_cost: 2m\n", ""},
      {"budget", "name: training\nrescales_per_hour: 0.5\nrescale_burst: 3\n", ""},
      {"cooldown is gone", "name: training\ncooldown: 1h\n", "replaced by the rescale budget"},
      {"min_epochs is gone", "name: training\nmin_epochs: 1\n", "policy.min_epochs"},
      {"burst 0", "name: training\nrescale_burst: 0\n", "policy.rescale_burst"},
      {"negative rate", "name: training\nrescales_per_hour: -1\n", "policy.rescales_per_hour"},
      {"negative dwell", "name: training\nmin_dwell: -5\n", "policy.min_dwell"},
      {"slowdown 1", "name: training\nmax_slowdown: 1\n", "policy.max_slowdown"},
      {"slowdown negative", "name: training\nmax_slowdown: -0.1\n", "policy.max_slowdown"},
      {"negative restart", "name: training\nrestart_cost: -1\n", "policy.restart_cost"},
      {"unknown field", "name: training\nmin_dwel: 5\n", "min_dwel"},
      {"reference off the group", "name: training\nreference_replicas: 3\n",
       "policy.reference_replicas"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errs;
    config::ConfigNode root = config::ParseConfig(
        "policy:\n  " +
            [&] {
              std::string s;
              for (char ch : c.yaml) {
                s += ch;
                if (ch == '\n') s += "  ";
              }
              return s;
            }(),
        "t.yaml", errs);
    TrainingConfig::Parse(root.Child("policy"), Ctx(2, 16, 2));
    if (c.want.empty()) {
      EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
    } else {
      ASSERT_FALSE(errs.empty());
      EXPECT_NE(errs.ToStatus().message().find(c.want), std::string::npos)
          << errs.ToStatus().message();
    }
  }
}

}  // namespace
}  // namespace aiscale::decide
