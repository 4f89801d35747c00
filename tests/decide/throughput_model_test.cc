#include "decide/training/throughput_model.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

// Seconds per sample of a known curve: t_compute/n + s(n-1)/n + l(n-1).
double TrueY(double tc, double s, double l, int n) {
  return tc / n + s * (n - 1) / n + l * (n - 1);
}

TEST(ThroughputModel, RecoversKnownParameters) {
  struct Case {
    std::string name;
    double tc, s, l;
    std::vector<int> sizes;
  };
  const std::vector<Case> cases = {
      {"compute bound", 2e-3, 5e-5, 1e-6, {1, 2, 4, 8, 16}},
      {"comm heavy", 3e-4, 1e-4, 2e-7, {2, 4, 6, 8}},
      {"latency bound", 1e-3, 0, 2e-5, {1, 3, 8, 24}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ThroughputModel m;
    for (int rep = 0; rep < 40; ++rep) {
      for (int n : c.sizes) {
        // +-1% deterministic noise, alternating, so the mean is exact.
        const double noise = (rep % 2 == 0) ? 1.01 : 1 / 1.01;
        ASSERT_TRUE(m.Add(n, noise / TrueY(c.tc, c.s, c.l, n), 15));
      }
    }
    const ThroughputParams p = m.Params();
    EXPECT_NEAR(p.t_compute, c.tc, 0.03 * c.tc);
    // Inside the observed range and a little beyond it.
    for (int n : {c.sizes.front(), 3, 5, c.sizes.back() + 2}) {
      EXPECT_NEAR(*m.Predict(n) * TrueY(c.tc, c.s, c.l, n), 1.0, 0.03) << "n=" << n;
    }
  }
}

TEST(ThroughputModel, PriorShapeUntilDataExist) {
  ThroughputPrior prior;
  prior.efficiency = 0.9;
  prior.reference_nodes = 8;
  ThroughputModel none(prior);
  EXPECT_FALSE(none.HasData());
  EXPECT_FALSE(none.Predict(8).has_value());

  struct Case {
    std::string name;
    double util;   // -1: unknown, the efficiency prior applies
    double sigma;  // expected serial share at 8
  };
  const std::vector<Case> cases = {
      {"efficiency prior", -1, (1 - 0.9) * 8 / 7},
      {"util 50 means half the step waits", 50, 0.5},
      {"util 90", 90, 0.1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ThroughputModel m(prior);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(m.Add(8, 1000, 15, c.util));
    EXPECT_NEAR(m.PriorSerialShare(), c.sigma, 1e-9);
    EXPECT_NEAR(*m.Predict(8), 1000, 1);
    // Amdahl at 8: y(n)/y(8) = sigma + (1 - sigma) * 8 / n.
    for (int n : {1, 4, 16}) {
      const double expect = 1000 / (c.sigma + (1 - c.sigma) * 8.0 / n);
      EXPECT_NEAR(*m.Predict(n), expect, 0.01 * expect) << "n=" << n;
    }
  }
}

TEST(ThroughputModel, RobustToRestartZeros) {
  ThroughputModel m;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(m.Add(8, 1000, 15));
  const double before = *m.Predict(8);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::string name;
    int nodes;
    double rate, dt;
  };
  const std::vector<Case> rejected = {
      {"restart zero", 8, 0, 15},       {"negative", 8, -5, 15},     {"nan", 8, nan, 15},
      {"partial interval", 8, 100, 15}, {"no duration", 8, 1000, 0}, {"no nodes", 0, 1000, 15},
  };
  for (const Case& c : rejected) {
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(m.Add(c.nodes, c.rate, c.dt));
  }
  EXPECT_DOUBLE_EQ(*m.Predict(8), before);
}

TEST(ThroughputModel, StateIsBoundedAndRoundTrips) {
  ThroughputModel m;
  for (int n = 1; n <= 40; ++n) ASSERT_TRUE(m.Add(n, 100.0 * n / (1 + 0.05 * n), 15, 80));
  EXPECT_LE(m.DistinctSizes(), ThroughputModel::kMaxBuckets);
  PersistentState st;
  m.Save(st, "x");
  EXPECT_LE(st.values["x.buckets"].size(), 2 + 12u * ThroughputModel::kMaxBuckets);
  const ThroughputModel back = ThroughputModel::Load(st, "x", ThroughputPrior{});
  for (int n : {2, 10, 30}) EXPECT_DOUBLE_EQ(*back.Predict(n), *m.Predict(n));
  // Garbage in the store is skipped, not trusted.
  st.values["x.buckets"] = {-1, 1, 5, 5, 0, 0, 4, 1, std::nan(""), 3, 0, 0};
  EXPECT_FALSE(ThroughputModel::Load(st, "x", ThroughputPrior{}).HasData());
}

TEST(ThroughputModel, OneNoisyReadingBarelyMovesAMeasuredSize) {
  // 20 readings at 2 nodes around 939 samples/s (+-2%), then one taken on a busy machine. From
  // the 3rd reading on, a new one is clipped to the mean +- 2.5 sd (at least +-5%): the mean
  // moves by at most that band's share of the time, and the spread records the noise.
  struct Case {
    std::string name;
    double reading;
    bool learned;
  };
  const std::vector<Case> cases = {
      {"a third of the speed (busy machine)", 306.6, true},
      {"a fifth: not the job's speed at all", 180, false},
      {"twice as fast", 1878, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ThroughputModel m;
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(m.Add(2, i % 2 ? 939 * 1.02 : 939 / 1.02, 3));
    const SizeEvidence before = m.Evidence(2);
    EXPECT_EQ(m.Add(2, c.reading, 3), c.learned);
    const SizeEvidence after = m.Evidence(2);
    // Unclipped, 306.6 would take the mean to 909 (-3.2%) and 1878 to 984 (+4.8%).
    EXPECT_NEAR(after.mean, before.mean, 0.01 * before.mean);
    EXPECT_GE(after.sd, before.sd);
  }
}

TEST(ThroughputModel, EvidenceCountsReadingsAndTheirSpread) {
  ThroughputModel m;
  EXPECT_EQ(m.Evidence(3).count, 0);
  EXPECT_DOUBLE_EQ(m.PooledRelativeVariance(), ThroughputModel::kDefaultRelativeSpread *
                                                   ThroughputModel::kDefaultRelativeSpread);
  // Readings 90, 110 alternating at 3 nodes (sd 10), one reading of 500 at 4.
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(m.Add(3, i % 2 ? 110 : 90, 5));
  ASSERT_TRUE(m.Add(4, 500, 5));
  const SizeEvidence e3 = m.Evidence(3);
  EXPECT_EQ(e3.count, 16);
  EXPECT_DOUBLE_EQ(e3.mean, 100);
  EXPECT_NEAR(m.PooledRelativeVariance(), 0.01, 1e-12);  // (10 / 100)^2, pooled from 3 only
  // Shrunk toward the pool with 2 readings' weight: both say 10 here.
  EXPECT_NEAR(e3.sd, 10, 1e-9);
  EXPECT_NEAR(e3.se, 10 / 4.0, 1e-9);
  // One reading has no spread of its own: the pooled relative spread at its mean.
  const SizeEvidence e4 = m.Evidence(4);
  EXPECT_EQ(e4.count, 1);
  EXPECT_NEAR(e4.sd, 50, 1e-9);
  EXPECT_NEAR(e4.se, 50, 1e-9);
}

TEST(ThroughputModel, StateSavedBeforeTheSpreadLoadsWithTheDefaultSpread) {
  // The layout of 6 values per size: readings as strong as the default 25% spread allows.
  const ThroughputModel m = ThroughputModel::LoadFrom({2, 40, 40000, 40, 0, 0}, ThroughputPrior{});
  const SizeEvidence e = m.Evidence(2);
  EXPECT_EQ(e.count, 40);
  EXPECT_DOUBLE_EQ(e.mean, 1000);
  EXPECT_NEAR(e.sd, 250, 1e-9);
  // Saved again, it takes the new layout and reads back the same.
  std::vector<double> v;
  m.SaveTo(v);
  EXPECT_EQ(v.size(), 14u);
  const SizeEvidence back = ThroughputModel::LoadFrom(v, ThroughputPrior{}).Evidence(2);
  EXPECT_DOUBLE_EQ(back.sd, e.sd);
  EXPECT_DOUBLE_EQ(back.count, e.count);
}

TEST(ThroughputModel, StateInTheLayoutBeforeStintsLoadsWithoutOne) {
  // kSpreadTag (-2), then 8 values per size: no stint, so no drift can be claimed.
  const ThroughputModel m =
      ThroughputModel::LoadFrom({-2, 2, 40, 40000, 40, 0, 0, 400, 40}, ThroughputPrior{});
  EXPECT_EQ(m.Evidence(2).count, 40);
  EXPECT_FALSE(m.DriftAt(2).has_value());
  // A garbled stint (more readings than the whole) is dropped, the rest kept.
  const ThroughputModel g = ThroughputModel::LoadFrom(
      {-3, 2, 2, 40, 40000, 40, 0, 0, 400, 40, 99, 100, 1, 0}, ThroughputPrior{});
  EXPECT_EQ(g.Evidence(2).count, 40);
  EXPECT_FALSE(g.DriftAt(2).has_value());
}

}  // namespace
}  // namespace aiscale::decide
