// The simulated engine's shared GPU pool: replicas start only on free GPUs, the rest wait as
// Pending and start in the order asked for when GPUs free up; and the peaks count of the pool
// comparison.
#include "sim/sim_pool.h"

#include <gtest/gtest.h>

#include "sim/pool_report.h"

namespace aiscale::sim {
namespace {

// A workload whose replicas are ready as soon as they are applied.
class Instant final : public SimWorkload {
 public:
  explicit Instant(std::string name) { ref_.name = std::move(name); }
  const WorkloadRef& ref() const override { return ref_; }
  void Start(EventQueue&) override {}
  void SetInitialReplicas(int n) override { n_ = n; }
  bool Done() const override { return false; }
  Result<ScaleState> Observe() override { return ScaleState{n_, n_, std::nullopt, ""}; }
  Status Apply(int desired) override {
    n_ = desired;
    applied.push_back(desired);
    return Status::Ok();
  }
  std::vector<Observation> Signal(std::string_view, TimePoint) override { return {}; }
  report::WorkloadSummary Summary() const override { return {}; }
  report::TimelinePoint TimelinePoint(TimePoint) const override { return {}; }
  std::vector<int> applied;

 private:
  WorkloadRef ref_;
  int n_ = 0;
};

TEST(SimPool, ReplicasThatDoNotFitWaitAndStartInOrderWhenGpusFree) {
  EventQueue q;
  SimPool pool(16, q);
  Instant a("a"), b("b"), c("c");
  a.SetInitialReplicas(2);
  b.SetInitialReplicas(1);
  pool.Add(&a, 4, 2);  // 8 GPUs
  pool.Add(&b, 8, 1);  // 8 GPUs: the pool is full
  pool.Add(&c, 1, 0);
  ASSERT_TRUE(pool.Apply(&c, 3).ok());  // nothing free: Pending
  EXPECT_TRUE(c.applied.empty());
  auto s = pool.Observe(&c);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->current, 3);  // the spec counts the Pending replicas
  EXPECT_EQ(s->ready, 0);
  EXPECT_NE(s->detail.find("3 replica(s) Pending"), std::string::npos) << s->detail;
  q.RunUntil(AtSeconds(10));
  ASSERT_TRUE(pool.Apply(&a, 4).ok());  // a asks later than c: waits behind it
  EXPECT_TRUE(a.applied.empty());
  ASSERT_TRUE(pool.Apply(&b, 0).ok());  // 8 GPUs free: c's 3 start first, then one of a's
  EXPECT_EQ(c.applied, (std::vector<int>{3}));
  EXPECT_EQ(a.applied, (std::vector<int>{3}));
  EXPECT_EQ(pool.HeldGpus(), 12 + 3);
  EXPECT_EQ(pool.PendingGpus(), 4);
  ASSERT_TRUE(pool.Apply(&c, 0).ok());  // c leaves: a's fourth replica fits
  EXPECT_EQ(a.applied, (std::vector<int>{3, 4}));
  EXPECT_EQ(pool.HeldGpus(), 16);
  EXPECT_EQ(pool.PendingGpus(), 0);
}

TEST(SimPool, AccountsHeldAndPendingGpuHours) {
  EventQueue q;
  SimPool pool(8, q);
  Instant a("a");
  pool.Add(&a, 4, 1);
  ASSERT_TRUE(pool.Apply(&a, 3).ok());  // 2 run (8 GPUs), 1 Pending (4 GPUs)
  q.RunUntil(AtSeconds(3600));
  const nlohmann::json s = pool.Summary();
  EXPECT_DOUBLE_EQ(s["workloads"]["a"]["gpu_hours_held"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(s["workloads"]["a"]["pending_gpu_hours"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(s["utilization"].get<double>(), 1.0);
}

TEST(PoolReport, PeaksAreRunsOverTheRoomMergedWhenClose) {
  // Room 10 GPUs, 2 GPUs a replica: over when replicas > 5. Minutes: two runs 2 min apart
  // (merged with a 5-minute merge window, separate with 60 s), then one more.
  const std::vector<int> plan = {1, 6, 7, 2, 2, 6, 1, 1, 1, 1, 1, 1, 8, 3};
  EXPECT_EQ(CountPeaks(plan, 60, 2, 10, 300), 2);
  EXPECT_EQ(CountPeaks(plan, 60, 2, 10, 60), 3);
  EXPECT_EQ(CountPeaks(plan, 60, 2, 100, 60), 0);
}

// A loan onto idle GPUs is not a rescale for a peak; the shrink and every growth until the job
// is back at the size it had are.
TEST(PoolReport, ReclaimRescalesAreTheShrinksAndTheRegrowthsBack) {
  using E = report::RunEvent;
  auto rescale = [](int from, int to, bool replacement = false) {
    E e;
    e.from = from;
    e.to = to;
    e.replacement = replacement;
    return e;
  };
  E failure;
  failure.kind = E::Kind::kFailure;
  struct Row {
    const char* name;
    std::vector<E> events;
    int want;
  };
  const Row rows[] = {
      {"loans only", {rescale(1, 5), rescale(5, 7)}, 0},
      {"shrink, back in one step", {rescale(1, 5), rescale(5, 1), rescale(1, 5)}, 2},
      {"shrink, back in two steps, then a loan",
       {rescale(1, 5), rescale(5, 1), rescale(1, 2), rescale(2, 5), rescale(5, 7)},
       3},
      {"two shrinks before it is back", {rescale(6, 4), rescale(4, 2), rescale(2, 6)}, 3},
      {"a failure and its replacement", {failure, rescale(3, 4, /*replacement=*/true)}, 0},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(ReclaimRescales(row.events), row.want) << row.name;
  }
}

}  // namespace
}  // namespace aiscale::sim
