#include "sim/training_job.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/signal.h"

namespace aiscale::sim {
namespace {

using signals::Phase;

TrainingJobConfig BertLike() {
  TrainingJobConfig c;
  c.parameters = 340e6;
  c.global_batch = 512;
  c.total_steps = 20000;
  c.epochs = 10;
  c.sample_compute_s = 0.0025;
  c.inter_node_gb_per_s = 25;
  c.intra_node_gb_per_s = 300;
  c.initial_load_gb = 360;  // 15 min at 0.4 GB/s
  c.reload_gb = 180;
  c.reload_every_epochs = 5;
  c.storage_gb_per_s = 0.4;
  c.node_gb_per_s = 0.5;
  c.eval_every_epochs = 5;
  c.eval_samples = 1e6;
  c.eval_batch_per_gpu = 16;
  c.eval_sample_forward_s = 0.0033;
  c.eval_host_overhead_s = 0.03;
  c.checkpoint_s = 60;
  c.rendezvous_s = 30;
  c.restore_s = 90;
  return c;
}

ClusterConfig Nodes(int n, double delay_s = 0) {
  ClusterConfig c;
  c.nodes = n;
  c.gpus_per_node = 8;
  c.provisioning_delay_s = delay_s;
  return c;
}

TEST(TrainingModel, ComputeThroughputIsMonotonicAndSubLinear) {
  const TrainingJobConfig c = BertLike();
  double prev = 0, prev_per_node = 1e18;
  for (int n = 1; n <= 64; ++n) {
    SCOPED_TRACE(n);
    const PhaseRates r = RatesFor(c, Phase::kCompute, n, 8, 80);
    EXPECT_GT(r.samples_per_s, prev);                      // more nodes never slower
    EXPECT_LT(r.samples_per_s / n, prev_per_node + 1e-9);  // but less per node
    prev = r.samples_per_s;
    prev_per_node = r.samples_per_s / n;
  }
  // 8x the nodes gives far less than 8x: the all-reduce of 0.68 GB dominates.
  const double s1 = RatesFor(c, Phase::kCompute, 1, 8, 80).samples_per_s;
  const double s8 = RatesFor(c, Phase::kCompute, 8, 8, 80).samples_per_s;
  EXPECT_LT(s8 / s1, 4);
  EXPECT_GT(s8 / s1, 1.5);
}

TEST(TrainingModel, StepTimeMatchesTheRingAllReduceFormula) {
  const TrainingJobConfig c = BertLike();
  struct Case {
    int nodes;
    double want_ms;
  };
  // t = 512 * 2.5 ms / (8n) + 2*7/8*0.68/300 s + (n>1) 2(n-1)/n*0.68/25 s + 2(n-1)*10 us.
  const std::vector<Case> cases = {
      {1, 160 + 3.9667}, {2, 80 + 3.9667 + 27.2 + 0.02}, {8, 20 + 3.9667 + 47.6 + 0.14}};
  for (const auto& k : cases) {
    SCOPED_TRACE(k.nodes);
    EXPECT_NEAR(ComputeStepTime(c, k.nodes, 8).total() * 1000, k.want_ms, 0.01);
  }
}

TEST(TrainingModel, LoadIsBoundByStorageAndUtilStaysInRanges) {
  const TrainingJobConfig c = BertLike();
  const double r1 = RatesFor(c, Phase::kLoad, 1, 8, 80).progress_per_s;
  const double r100 = RatesFor(c, Phase::kLoad, 100, 8, 80).progress_per_s;
  EXPECT_DOUBLE_EQ(r100, c.storage_gb_per_s);
  EXPECT_LE(r100 / r1, 1.25);
  struct Case {
    Phase phase;
    UtilRange range;
  };
  for (const Case& k : {Case{Phase::kLoad, c.load_util}, Case{Phase::kCompute, c.compute_util},
                        Case{Phase::kEval, c.eval_util}}) {
    for (int n : {1, 2, 4, 8, 16, 100}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(k.phase)) + "/" + std::to_string(n));
      const PhaseRates r = RatesFor(c, k.phase, n, 8, 80);
      EXPECT_GE(r.util, k.range.lo);
      EXPECT_LE(r.util, k.range.hi);
      EXPECT_GE(r.mem_frac, 0);
      EXPECT_LE(r.mem_frac, 1);
      EXPECT_LE(r.sm_active, r.util);
    }
  }
  // Compute waits more on the network with more nodes, so its utilization falls.
  EXPECT_GT(RatesFor(c, Phase::kCompute, 2, 8, 80).util,
            RatesFor(c, Phase::kCompute, 16, 8, 80).util);
}

struct Harness {
  EventQueue q;
  Cluster cluster;
  TrainingJob job;
  Harness(TrainingJobConfig c, ClusterConfig cc, int initial)
      : cluster(cc, q, 1), job(std::move(c), WorkloadEnv{"job", initial, 5, 15, 0.0, &cluster}) {
    job.Start(q);
  }
  double SamplesPerS() {
    auto obs = job.Signal(signals::kSamplesPerS, q.Now());
    return obs.empty() ? -1 : obs[0].value;
  }
};

TEST(TrainingJob, RunsPhasesInOrderAndFinishes) {
  TrainingJobConfig c = BertLike();
  Harness h(c, Nodes(4), 2);
  std::vector<int> seen;
  for (int i = 0; i < 100000 && !h.job.Done(); ++i) {
    h.q.RunUntil(h.q.Now() + Seconds(30));
    const int p = static_cast<int>(h.job.phase());
    if (seen.empty() || seen.back() != p) seen.push_back(p);
  }
  ASSERT_TRUE(h.job.Done());
  // load, compute (epochs 1-5), eval, reload, compute (6-10), eval.
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 0, 1, 2}));
  const auto s = h.job.Summary();
  const double load_s = (360 + 180) / 0.4;
  const double compute_s = 20000 * ComputeStepTime(c, 2, 8).total();
  const PhaseRates ev = RatesFor(c, Phase::kEval, 2, 8, 80);
  const double eval_s = 2 * 1e6 / ev.progress_per_s;
  EXPECT_NEAR(s.completion_time_s, load_s + compute_s + eval_s, 1.0);
  ASSERT_TRUE(s.training.has_value());
  EXPECT_NEAR(s.training->load_s, load_s, 1.0);
  // Two nodes x 8 GPUs for the whole run, no rescale.
  EXPECT_NEAR(s.gpu_hours, 16 * s.completion_time_s / 3600, 1e-6);
  EXPECT_EQ(s.rescales, 0);
  EXPECT_DOUBLE_EQ(h.job.steps(), 20000);
  // Nothing is billed after the job finished.
  h.q.RunUntil(h.q.Now() + Seconds(3600));
  EXPECT_NEAR(h.cluster.GpuHours("job", h.q.Now()), s.gpu_hours, 1e-9);
}

TEST(TrainingJob, ResizePaysTheRestartCostWithZeroThroughput) {
  struct Case {
    std::string name;
    int from, to;
    double delay_s;
    double zero_for_s;  // provisioning is not a restart; then checkpoint+rendezvous+restore
  };
  const std::vector<Case> cases = {
      {"grow, no delay", 2, 4, 0, 180},
      {"grow after provisioning", 2, 4, 120, 180},
      {"shrink", 4, 2, 0, 180},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.name);
    TrainingJobConfig c = BertLike();
    c.initial_load_gb = 0;
    Harness h(c, Nodes(8, k.delay_s), k.from);
    h.q.RunUntil(AtSeconds(600));
    ASSERT_EQ(h.job.phase(), Phase::kCompute);
    ASSERT_TRUE(h.job.Apply(k.to).ok());
    auto st = h.job.Observe();
    EXPECT_EQ(st->current, k.to);
    // Still training on the old nodes while the new ones boot.
    if (k.delay_s > 0) {
      h.q.RunUntil(h.q.Now() + Seconds(k.delay_s - 1));
      EXPECT_EQ(h.job.Observe()->ready, k.from);
      EXPECT_FALSE(h.job.restarting());
      h.q.RunUntil(h.q.Now() + Seconds(1));
    }
    h.q.RunUntil(h.q.Now() + Seconds(1));
    EXPECT_TRUE(h.job.restarting());
    EXPECT_EQ(h.job.Observe()->ready, 0);
    const double steps_before = h.job.steps();
    h.q.RunUntil(h.q.Now() + Seconds(k.zero_for_s - 2));
    EXPECT_TRUE(h.job.restarting());
    h.q.RunUntil(h.q.Now() + Seconds(45));  // past the restart and a full scrape interval
    EXPECT_FALSE(h.job.restarting());
    EXPECT_EQ(h.job.Observe()->ready, k.to);
    EXPECT_NEAR(h.SamplesPerS(), RatesFor(c, Phase::kCompute, k.to, 8, 80).samples_per_s, 1e-6);
    EXPECT_GT(h.job.steps(), steps_before);
    EXPECT_EQ(h.job.Summary().rescales, 1);
  }
}

TEST(TrainingJob, ScrapeDuringRestartReadsZeroThroughput) {
  TrainingJobConfig c = BertLike();
  c.initial_load_gb = 0;
  Harness h(c, Nodes(8), 2);
  h.q.RunUntil(AtSeconds(600));
  ASSERT_TRUE(h.job.Apply(4).ok());
  h.q.RunUntil(AtSeconds(600 + 60));
  EXPECT_DOUBLE_EQ(h.SamplesPerS(), 0);
  for (const auto& o : h.job.Signal(signals::kGpuUtil, h.q.Now())) EXPECT_LT(o.value, 5);
}

TEST(TrainingJob, FailureDropsANodeLosesProgressSinceCheckpointAndRestarts) {
  TrainingJobConfig c = BertLike();
  c.initial_load_gb = 0;
  c.checkpoint_every_steps = 1000;
  Harness h(c, Nodes(4), 3);
  h.q.RunUntil(AtSeconds(150));  // ~1650 steps at 3 nodes
  const double before = h.job.steps();
  ASSERT_GT(before, 1000);
  h.cluster.FailNode(1);
  auto st = h.job.Observe();
  EXPECT_EQ(st->current, 2);
  EXPECT_EQ(st->ready, 0);
  EXPECT_DOUBLE_EQ(h.job.steps(), 1000);
  // No checkpoint save on a failure: rendezvous + restore only.
  h.q.RunUntil(h.q.Now() + Seconds(119));
  EXPECT_TRUE(h.job.restarting());
  h.q.RunUntil(h.q.Now() + Seconds(2));
  EXPECT_FALSE(h.job.restarting());
  EXPECT_EQ(h.job.Observe()->ready, 2);
  // Replacing it: a new node, a restart with checkpoint; the failure then counts as replaced.
  ASSERT_TRUE(h.job.Apply(3).ok());
  h.q.RunUntil(h.q.Now() + Seconds(181));
  const auto s = h.job.Summary();
  std::vector<report::RunEvent> failures;
  for (const auto& e : s.events) {
    if (e.kind == report::RunEvent::Kind::kFailure) failures.push_back(e);
  }
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_TRUE(failures[0].replaced);
  EXPECT_NEAR(s.max_failure_replacement_s, 121 + 180, 1.0);
}

TEST(TrainingJob, EmitsEveryContractSignalInRangeAndStamped) {
  TrainingJobConfig c = BertLike();
  Harness h(c, Nodes(4), 3);
  h.q.RunUntil(AtSeconds(1000 + 7));  // compute phase, 7 s after a scrape
  const std::vector<std::string> job_level = {"samples_per_s",    "steps_per_s", "phase",
                                              "epoch_progress",   "epoch",       "job_progress",
                                              "samples_remaining"};
  const std::vector<std::string> per_gpu = {"gpu_util", "sm_active", "gpu_mem_used_frac",
                                            "gpu_power_w"};
  for (const auto& name : job_level) {
    SCOPED_TRACE(name);
    auto obs = h.job.Signal(name, h.q.Now());
    ASSERT_EQ(obs.size(), 1u);
    EXPECT_TRUE(signals::IsValidValue(name, obs[0].value)) << obs[0].value;
    EXPECT_DOUBLE_EQ(SinceEpochSeconds(obs[0].at), 1005);  // last scrape, not now
  }
  for (const auto& name : per_gpu) {
    SCOPED_TRACE(name);
    auto obs = h.job.Signal(name, h.q.Now());
    ASSERT_EQ(obs.size(), 24u);  // 3 nodes x 8 GPUs
    std::set<std::string> instances;
    for (const auto& o : obs) {
      instances.insert(o.instance);
      EXPECT_TRUE(signals::IsValidValue(name, o.value)) << o.value;
      EXPECT_DOUBLE_EQ(SinceEpochSeconds(o.at), 1005);
    }
    EXPECT_EQ(instances.size(), 24u);
    EXPECT_TRUE(instances.count("node0/gpu0") && instances.count("node2/gpu7"));
  }
  EXPECT_DOUBLE_EQ(h.job.Signal("phase", h.q.Now())[0].value, 1);
  const double util = h.job.Signal("gpu_util", h.q.Now())[0].value;
  EXPECT_GE(util, 100 * c.compute_util.lo * 0.97);
  EXPECT_LE(util, 100 * c.compute_util.hi * 1.03);
  const double spe = c.steps_per_epoch();
  const double steps = h.job.Signal("job_progress", h.q.Now())[0].value * c.total_steps;
  EXPECT_NEAR(h.job.Signal("samples_remaining", h.q.Now())[0].value,
              (c.total_steps - steps) * c.global_batch, 1e-3);
  EXPECT_NEAR(h.job.Signal("epoch", h.q.Now())[0].value, std::floor(steps / spe), 1e-9);
}

TEST(TrainingJob, NoiseIsSeededAndOrderIndependent) {
  auto read = [](uint64_t seed, bool extra_reads) {
    TrainingJobConfig c = BertLike();
    EventQueue q;
    Cluster cl(Nodes(4), q, 1);
    TrainingJob job(c, WorkloadEnv{"job", 2, seed, 15, 0.05, &cl});
    job.Start(q);
    q.RunUntil(AtSeconds(1200));
    if (extra_reads) job.Signal("samples_per_s", q.Now());
    return job.Signal("gpu_util", q.Now())[3].value;
  };
  EXPECT_DOUBLE_EQ(read(9, false), read(9, true));
  EXPECT_NE(read(9, false), read(10, false));
}

}  // namespace
}  // namespace aiscale::sim
