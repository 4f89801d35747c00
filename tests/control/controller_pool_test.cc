// The Controller with a shared GPU pool: grants in the Decisions, shrinks applied before
// growths, the regrowth hold, missing pool data holding everyone, a drop in the pool's size
// counted only once it lasts, and the pool's state surviving a restart.
#include <memory>

#include <gtest/gtest.h>

#include "control/controller.h"
#include "decide/allocator.h"
#include "fakes/fake_actuator.h"
#include "fakes/fake_metric_source.h"
#include "sim/event_queue.h"
#include "store/memory_store.h"

namespace aiscale::control {
namespace {

using aiscale::testing::FakeActuator;
using aiscale::testing::FakeMetricSource;

// A pool source the test sets; fails while `fail` is set.
class TestPoolSource final : public PoolSource {
 public:
  std::string_view Name() const override { return "test"; }
  Result<PoolCapacity> Observe() override {
    if (fail) return Status::Unavailable("unable to list nodes: connection refused");
    PoolCapacity c;
    c.gpus = gpus;
    c.detail = std::to_string(gpus) + " GPUs (test)";
    c.basis = basis;
    ++observed;
    return c;
  }
  uint64_t Basis() const override { return basis; }
  int64_t gpus = 16;
  bool fail = false;
  uint64_t basis = 0;  // the version of the managed workloads, as KubernetesPoolSource's
  int observed = 0;
};

// Wants whatever its own signal says (one signal per workload, so the test sets each), within
// the pool's room when `within_room` (as the training policy sizes), and keeps the pool lease
// it was last told of in `lease`.
class WantPolicy final : public Policy {
 public:
  explicit WantPolicy(std::string signal, bool within_room = false)
      : signal_(std::move(signal)), within_room_(within_room) {}
  std::string_view Name() const override { return "want"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override {
    (void)state;
    *lease = in.pool_lease;
    const SignalSnapshot& s = in.signals.Get(signal_);
    if (!s.ok()) return {in.current, false, "no_data", "no " + signal_, {}};
    int n = static_cast<int>(s.mean);
    if (within_room_ && in.max_available) n = std::min(n, *in.max_available);
    return {n, true, "want", "asked " + std::to_string(n), {}};
  }
  std::vector<std::string> Signals() const override { return {signal_}; }
  std::shared_ptr<std::optional<PolicyInput::Lease>> lease =
      std::make_shared<std::optional<PolicyInput::Lease>>();

 private:
  std::string signal_;
  bool within_room_ = false;
};

PoolSpec TwoTenants() {
  PoolSpec p;
  p.size = 16;
  p.tenants = {{"serve", 8, std::nullopt, 1}, {"train", 8, std::nullopt, 1}};
  p.priorities = {"serving", "training", "batch"};
  p.regrow_delay_s = 600;
  p.shrink_grace_s = 60;
  return p;
}

struct Harness {
  sim::EventQueue q;
  FakeActuator act;
  FakeMetricSource src;
  TestPoolSource pool;
  decide::Allocator allocator;
  std::unique_ptr<Controller> ctl;

  // `bert_held`: bert's binding carries a person's hold (an AIScaler's pause annotation).
  std::shared_ptr<std::optional<PolicyInput::Lease>> bert_lease;  // what bert's policy was told

  // `bert_job`: bert is a training job (it regrows whole after a shrink and sizes within the
  // pool's room) on 2-GPU nodes, at 6 of them: 12 GPUs, 4 borrowed.
  explicit Harness(Store* store = nullptr, bool bert_held = false, PoolSpec spec = TwoTenants(),
                   bool bert_job = false) {
    ControllerOptions o;
    o.collect_interval = Seconds(15);
    ctl = std::make_unique<Controller>(q.clock(), store, o);
    EXPECT_TRUE(ctl->SetPool(std::move(spec), &pool, &allocator).ok());
    Add("chat", 0, 0, 1, /*elastic=*/false);
    Add("bert", 1, 1, bert_job ? 2 : 4, /*elastic=*/true, bert_held, bert_job);
    act.Set("ns/chat", 4, 4);
    act.Set("ns/bert", bert_job ? 6 : 3, bert_job ? 6 : 3);  // 4 GPUs borrowed from serve's
    Want(4, bert_job ? 6 : 3);
  }
  void Add(const std::string& name, int tenant, int priority, int gpus, bool elastic,
           bool held = false, bool job = false) {
    WorkloadBinding b;
    b.ref = {job ? "TrainingJob" : "Deployment", "ns", name};
    auto policy = std::make_shared<WantPolicy>("want_" + name, job);
    if (name == "bert") bert_lease = policy->lease;
    b.policy = policy;
    b.actuator = &act;
    b.signals.push_back({"want_" + name, "", &src});
    b.pool = PoolMember{tenant, priority, gpus, 1, 1, elastic, !elastic, 120, job};
    b.held = held;
    ASSERT_TRUE(ctl->Add(std::move(b)).ok());
  }
  void Want(double chat, double bert) {
    src.Set("want_chat", {chat});
    src.Set("want_bert", {bert});
  }
  std::vector<Decision> Tick(double at_s) {
    q.RunUntil(AtSeconds(at_s));
    ctl->Collect();
    return ctl->Tick();
  }
};

TEST(ControllerPool, AnOwnerTakesItsGuaranteeBackShrinksFirstAndSaysSo) {
  Harness h;
  auto ds = h.Tick(15);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].pool.reason, "as_wanted");
  EXPECT_TRUE(ds[1].pool.active);
  EXPECT_EQ(ds[1].pool.tenant, "train");
  h.Want(8, 3);  // chat's peak: its guarantee back
  h.act.applies.clear();
  ds = h.Tick(30);
  EXPECT_EQ(ds[0].pool.wanted, 8);
  EXPECT_EQ(ds[0].pool.granted, 8);
  EXPECT_EQ(ds[0].pool.reason, "reclaimed");
  EXPECT_NE(ds[0].pool.detail.find("bert (tenant train) 4 GPUs"), std::string::npos)
      << ds[0].pool.detail;
  EXPECT_EQ(ds[1].pool.granted, 2);
  EXPECT_EQ(ds[1].pool.reason, "shrunk");
  EXPECT_NE(ds[1].Summary().find("reclaiming its guarantee"), std::string::npos);
  ASSERT_EQ(h.act.applies.size(), 2u);
  EXPECT_EQ(h.act.applies[0], (std::pair<std::string, int>{"ns/bert", 2}));  // shrink first
  EXPECT_EQ(h.act.applies[1], (std::pair<std::string, int>{"ns/chat", 8}));
  // The peak passes: bert wants its 3 nodes back, but not before its hold (600 s) ends.
  h.Want(4, 3);
  ds = h.Tick(45);
  EXPECT_EQ(ds[1].pool.reason, "regrow_held");
  EXPECT_EQ(ds[1].constrained, 2);
  ds = h.Tick(30 + 600 + 15);
  EXPECT_EQ(ds[1].pool.granted, 3);
  EXPECT_EQ(ds[1].pool.reason, "borrowed");
}

// A workload a person holds (an AIScaler's pause or pin annotation, in its constraints) is not
// shrunk for another tenant's peak, as one paused through the API is not: the peak waits.
TEST(ControllerPool, AHeldWorkloadIsNotShrunkForAPeak) {
  Harness h(nullptr, /*bert_held=*/true);
  h.Tick(15);
  h.Want(8, 3);  // chat's peak, which would take 4 GPUs back from bert
  h.act.applies.clear();
  const auto ds = h.Tick(30);
  EXPECT_EQ(ds[1].constrained, 3) << ds[1].pool.detail;
  EXPECT_NE(ds[1].pool.reason, "shrunk");
  EXPECT_EQ(ds[0].pool.granted, 4) << ds[0].pool.detail;
  for (const auto& [key, n] : h.act.applies) EXPECT_NE(key, "ns/bert") << n;
}

TEST(ControllerPool, ACompletedJobGivesItsGpusBack) {
  // bert (training, 3 nodes of 4 GPUs) finishes: its engine reports it completed. Its 12 GPUs
  // are free, so chat's peak needs nothing reclaimed, and bert's Decision says completed.
  Harness h;
  h.Tick(15);
  h.act.state["ns/bert"].completed = true;
  h.act.state["ns/bert"].ready = 0;
  h.Want(12, 3);
  h.act.applies.clear();
  const auto ds = h.Tick(30);
  EXPECT_EQ(ds[1].recommendation.rule, "completed");
  EXPECT_EQ(ds[1].pool.granted, 0) << ds[1].pool.detail;
  EXPECT_EQ(ds[0].pool.granted, 12) << ds[0].pool.detail;
  EXPECT_EQ(ds[0].constrained, 12);
  ASSERT_EQ(h.act.applies.size(), 1u);  // nothing applied to the finished job
  EXPECT_EQ(h.act.applies[0], (std::pair<std::string, int>{"ns/chat", 12}));
}

TEST(ControllerPool, MissingPoolDataHoldsEveryoneNeverShrinks) {
  Harness h;
  h.Tick(15);
  h.pool.fail = true;
  h.Want(8, 3);
  const auto ds = h.Tick(30);
  EXPECT_EQ(ds[0].constrained, 4);
  EXPECT_EQ(ds[0].pool.reason, "pool_unknown");
  EXPECT_NE(ds[0].pool.detail.find("connection refused"), std::string::npos) << ds[0].pool.detail;
  EXPECT_EQ(ds[1].constrained, 3);
}

// A member whose Observe has never answered (a restart, a leader's first tick) holds GPUs no one
// knows the number of: lending "idle" GPUs then could grant its GPUs twice. Everyone holds
// until it answers.
TEST(ControllerPool, AMemberNeverObservedHoldsEveryone) {
  Harness h;
  h.act.fail_observe_of = "ns/bert";
  h.Want(12, 3);
  auto ds = h.Tick(15);
  EXPECT_EQ(ds[0].pool.reason, "pool_unknown") << ds[0].pool.detail;
  EXPECT_NE(ds[0].pool.detail.find("the size of ns/bert is not known"), std::string::npos)
      << ds[0].pool.detail;
  EXPECT_EQ(ds[0].constrained, 4);
  h.act.fail_observe_of.clear();
  ds = h.Tick(30);  // bert answers: 12 GPUs held, 16 in the pool, chat reclaims serve's own
  EXPECT_NE(ds[0].pool.reason, "pool_unknown") << ds[0].pool.detail;
  EXPECT_LE(ds[0].constrained + 4 * ds[1].constrained, 16);
  // Once it has answered, a failed Observe keeps the size it last had (past the grace of the
  // pool's first readings, which holds while more is held than reported).
  h.act.fail_observe_of = "ns/bert";
  ds = h.Tick(90);
  EXPECT_NE(ds[0].pool.reason, "pool_unknown") << ds[0].pool.detail;
}

// A first reading (after a start) or the first after an outage longer than the grace has no
// earlier one to outweigh it: a size below what is held shrinks no one until the readings span
// the grace; then it counts.
TEST(ControllerPool, ALowFirstReadingShrinksNoOneUntilItLasts) {
  struct Row {
    const char* name;
    bool outage;  // else the very first reading is low
  };
  for (const Row& row : {Row{"first reading", false}, Row{"after an outage", true}}) {
    SCOPED_TRACE(row.name);
    Harness h;
    double t = 15;
    if (row.outage) {
      h.Tick(t);
      h.pool.fail = true;
      for (t = 30; t <= 150; t += 15) h.Tick(t);
      h.pool.fail = false;
    }
    h.pool.gpus = 12;  // 16 held
    h.Want(6, 3);      // chat would grow: its Decision says why it does not
    auto ds = h.Tick(t);
    EXPECT_EQ(ds[1].constrained, 3) << ds[1].pool.detail;
    EXPECT_EQ(ds[0].constrained, 4) << ds[0].pool.detail;
    EXPECT_NE(ds[0].pool.detail.find("fewer than the workloads hold"), std::string::npos)
        << ds[0].pool.detail;
    h.Want(4, 3);
    ds = h.Tick(t + 45);
    EXPECT_EQ(ds[1].constrained, 3) << ds[1].pool.detail;
    ds = h.Tick(t + 75);  // read low for longer than the 60 s grace
    EXPECT_EQ(ds[1].constrained, 2) << ds[1].pool.detail;
  }
}

// A workload removed from aiscale (its AIScaler deleted) leaves its replicas running: in a pool
// of a fixed size their GPUs are not lent to others until the workload is managed again.
TEST(ControllerPool, ARemovedWorkloadsGpusAreNotLent) {
  Harness h;  // 16 GPUs: chat 4, bert 3 x 4 = 12
  h.Tick(15);
  ASSERT_TRUE(h.ctl->Remove("ns/chat").ok());
  h.Want(4, 4);  // bert would take chat's 4 once they were idle for the lend delay (120 s)
  std::vector<Decision> ds;
  for (double t = 30; t <= 210; t += 15) ds = h.Tick(t);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].constrained, 3) << ds[0].pool.detail;
  EXPECT_NE(ds[0].pool.detail.find("pool full (12 GPUs"), std::string::npos) << ds[0].pool.detail;
  // Managed again, its claim counts what it holds: the pool is whole, and nothing is lent twice.
  h.Add("chat", 0, 0, 1, /*elastic=*/false);
  ds = h.Tick(225);
  ASSERT_EQ(ds.size(), 2u);
  ASSERT_EQ(ds[0].workload, "ns/bert");
  EXPECT_EQ(ds[1].constrained + 4 * ds[0].constrained, 16) << ds[0].pool.detail;
}

// On Kubernetes an AIScaler that joins changes which pods are others' (PoolSource::Basis): a
// size counted before is unknown (everyone holds), and it is read again at once, not when due.
TEST(ControllerPool, ASizeCountedWithAnOlderSetOfWorkloadsIsReadAgainBeforeUse) {
  Harness h;
  h.Tick(15);
  h.q.RunUntil(AtSeconds(30));
  h.Want(8, 3);
  h.ctl->Collect();
  const int observed = h.pool.observed;
  h.pool.basis = 1;  // the set changed after the size was read
  auto ds = h.ctl->Tick();
  EXPECT_EQ(ds[0].pool.reason, "pool_unknown");
  EXPECT_NE(ds[0].pool.detail.find("the workloads aiscale manages changed"), std::string::npos)
      << ds[0].pool.detail;
  EXPECT_EQ(ds[0].constrained, 4);
  EXPECT_EQ(ds[1].constrained, 3);
  h.q.RunUntil(AtSeconds(31));
  h.ctl->Collect();  // the next read is due at 45 s; this one is for the new set
  EXPECT_EQ(h.pool.observed, observed + 1);
  ds = h.ctl->Tick();
  EXPECT_NE(ds[0].pool.reason, "pool_unknown") << ds[0].pool.detail;
  h.q.RunUntil(AtSeconds(32));
  h.ctl->Collect();  // read for this set already: not again before due
  EXPECT_EQ(h.pool.observed, observed + 1);
}

TEST(ControllerPool, ADropInThePoolCountsOnlyOnceItLasts) {
  Harness h;
  h.Tick(15);
  h.pool.gpus = 12;  // a node lost: 16 held, 12 reported
  auto ds = h.Tick(30);
  EXPECT_EQ(ds[1].constrained, 3) << ds[1].pool.detail;  // within the 60 s grace: held
  ds = h.Tick(45);
  EXPECT_EQ(ds[1].constrained, 3);
  ds = h.Tick(100);  // reported low for longer than the grace
  EXPECT_EQ(ds[1].constrained, 2) << ds[1].pool.detail;
  EXPECT_EQ(ds[1].pool.reason, "shrunk");
  EXPECT_NE(ds[1].pool.detail.find("the pool shrank to 12 GPUs"), std::string::npos);
}

// The life of a loan is measured and told to the elastic borrower (PolicyInput::pool_lease):
// bert grows on GPUs lent from serve's idle guarantee at 15 s, chat takes them back at 45 s, so
// bert's next decision reads a 30 s loan above its 2 secure nodes (train's 8 GPUs, all held).
TEST(ControllerPool, TheLifeOfALoanReachesTheBorrower) {
  PoolSpec spec = TwoTenants();
  spec.lend_delay_s = 0;
  Harness h(nullptr, false, spec);
  h.act.Set("ns/bert", 2, 2);
  h.Want(4, 3);
  auto ds = h.Tick(15);
  ASSERT_EQ(ds[1].pool.reason, "borrowed") << ds[1].pool.detail;
  EXPECT_FALSE(h.bert_lease->has_value());  // nothing measured yet: no lease
  ds = h.Tick(30);
  EXPECT_FALSE(h.bert_lease->has_value());
  h.Want(8, 3);
  ds = h.Tick(45);
  ASSERT_EQ(ds[1].pool.reason, "shrunk") << ds[1].pool.detail;
  h.Tick(60);
  ASSERT_TRUE(h.bert_lease->has_value());
  EXPECT_EQ((*h.bert_lease)->secure, 2);
  EXPECT_DOUBLE_EQ((*h.bert_lease)->expected_s, 30);
}

// Idle GPUs are lent to a borrowing job only when a serving workload's ramp will not take them
// back within minutes: chat ends its 135 s at 4 either way (4 GPUs idle all the lend delay,
// one of bert's 4-GPU nodes), but rising from 2 it is expected to rise 2 more, so bert is not
// grown onto GPUs it would give back at its next restart.
TEST(ControllerPool, IdleGpusAServiceIsRampingTowardAreNotLent) {
  struct Row {
    const char* name;
    std::vector<double> chat;  // chat's wants at 15, 30, ... s
    int bert_after;
  };
  const Row rows[] = {
      {"chat flat at 4", {4, 4, 4, 4, 4, 4, 4, 4, 4}, 3},
      {"chat ramping 2 -> 4", {2, 2, 2, 3, 3, 3, 4, 4, 4}, 2},
  };
  for (const Row& row : rows) {
    Harness h;
    h.act.Set("ns/bert", 2, 2);  // its guarantee of 8 GPUs; wants a third node, borrowed
    std::vector<Decision> ds;
    for (size_t k = 0; k < row.chat.size(); ++k) {
      h.Want(row.chat[k], 3);
      ds = h.Tick(15.0 * static_cast<double>(k + 1));
    }
    EXPECT_EQ(ds[1].constrained, row.bert_after) << row.name << ": " << ds[1].pool.detail;
  }
}

// A training job shrunk for a peak grows back in one step once what it lost is free, not a
// restart per step of the service's descent; if only part comes free for a whole hold (the
// service settled higher), it grows on that part. bert: 6 nodes of 2 GPUs, shrunk to 4 for
// chat's peak of 8; its hold is 600 s.
TEST(ControllerPool, AJobShrunkForAPeakGrowsBackInOneStep) {
  struct Row {
    const char* name;
    std::vector<std::pair<double, double>> chat;  // (from t s, chat's want) after the peak
    std::vector<std::pair<double, int>> bert;     // (at t s, bert's size then)
  };
  const Row rows[] = {
      {"the service steps down 8 -> 6 -> 4", {{660, 6}, {900, 4}}, {{675, 4}, {885, 4}, {915, 6}}},
      {"the service settles at 6", {{660, 6}}, {{675, 4}, {1260, 4}, {1305, 5}}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    PoolSpec spec = TwoTenants();
    spec.lend_delay_s = 0;
    Harness h(nullptr, false, spec, /*bert_job=*/true);
    h.Tick(15);
    h.Want(8, 6);
    auto ds = h.Tick(30);
    ASSERT_EQ(ds[1].pool.reason, "shrunk") << ds[1].pool.detail;
    ASSERT_EQ(ds[1].constrained, 4);
    size_t next = 0;
    for (double t = 45; t <= row.bert.back().first; t += 15) {
      double chat = 8;
      for (const auto& [from, want] : row.chat) chat = t >= from ? want : chat;
      h.Want(chat, 6);
      ds = h.Tick(t);
      if (next < row.bert.size() && row.bert[next].first == t) {
        EXPECT_EQ(ds[1].constrained, row.bert[next].second)
            << "at " << t << " s: " << ds[1].Summary();
        ++next;
      }
    }
    EXPECT_EQ(next, row.bert.size());
  }
}

// 17 GPUs: chat, bert (a training job on 2-GPU nodes, at 6) and roberta (a training job of
// 1-GPU replicas, at 1, wanting 4); chat's peak of 8 at 30 s shrinks bert 6 -> 4.
void ShrinkBertBesideRoberta(std::unique_ptr<Harness>& h) {
  PoolSpec spec = TwoTenants();
  spec.size = 17;
  spec.lend_delay_s = 0;
  h = std::make_unique<Harness>(nullptr, false, spec, /*bert_job=*/true);
  h->pool.gpus = 17;
  h->Add("roberta", 1, 1, 1, /*elastic=*/true, false, /*job=*/true);
  h->act.Set("ns/roberta", 1, 1);
  h->src.Set("want_roberta", {4});
  h->Tick(15);
  h->Want(8, 6);
  const std::vector<Decision> ds = h->Tick(30);
  ASSERT_EQ(ds[1].constrained, 4) << ds[1].Summary();
}

// What a job lost for a peak is kept for it while it waits to grow back in one step: another
// job wanting more does not borrow the first GPUs the service frees (it would pay a restart for
// GPUs owed to the waiting job), and the waiting job comes back whole once the service is down.
// bert (2-GPU nodes) is shrunk 6 -> 4 for chat's peak; chat steps down 8 -> 6 -> 4; roberta
// (1-GPU replicas, at 1) wants 4 throughout.
TEST(ControllerPool, GpusAJobWaitsForAreNotLentToAnother) {
  std::unique_ptr<Harness> hp;
  ASSERT_NO_FATAL_FAILURE(ShrinkBertBesideRoberta(hp));
  Harness& h = *hp;
  std::vector<Decision> ds;
  for (double t = 45; t <= 915; t += 15) {
    h.Want(t >= 900 ? 4 : t >= 660 ? 6 : 8, 6);
    ds = h.Tick(t);
    ASSERT_EQ(ds[2].constrained, 1) << "at " << t << " s: " << ds[2].Summary();
  }
  EXPECT_EQ(ds[1].constrained, 6) << "bert whole again in one step: " << ds[1].Summary();
}

// The reservation ends: a service that settles one GPU short of a whole node of bert's leaves a
// GPU bert cannot use; roberta gets it once bert has waited one hold past its regrowth hold
// (shrunk at 30 s, holds of 600 s: from 1,230 s), not never.
TEST(ControllerPool, GpusKeptForAWaitingJobAreLentOnceItWaitedAHold) {
  std::unique_ptr<Harness> hp;
  ASSERT_NO_FATAL_FAILURE(ShrinkBertBesideRoberta(hp));
  Harness& h = *hp;
  std::vector<Decision> ds;
  for (double t = 45; t <= 1260; t += 15) {
    h.Want(t >= 660 ? 7 : 8, 6);
    ds = h.Tick(t);
    if (t < 1230) {
      ASSERT_EQ(ds[2].constrained, 1) << "at " << t << " s: " << ds[2].Summary();
    }
  }
  EXPECT_EQ(ds[2].constrained, 2) << ds[2].Summary();
  EXPECT_EQ(ds[1].constrained, 4) << "no whole node of bert's came free: " << ds[1].Summary();
}

TEST(ControllerPool, TheHoldSurvivesARestart) {
  store::MemoryStore store;
  {
    Harness h(&store);
    h.Tick(15);
    h.Want(8, 3);
    const auto ds = h.Tick(30);
    ASSERT_EQ(ds[1].pool.reason, "shrunk");
  }
  Harness h(&store);
  h.act.Set("ns/chat", 8, 8);
  h.act.Set("ns/bert", 2, 2);
  h.Want(4, 3);
  const auto ds = h.Tick(120);
  EXPECT_EQ(ds[1].pool.reason, "regrow_held") << ds[1].pool.detail;
}

TEST(ControllerPool, AddChecksThePoolPlace) {
  sim::EventQueue q;
  FakeActuator act;
  TestPoolSource pool;
  decide::Allocator allocator;
  Controller ctl(q.clock(), nullptr);
  WorkloadBinding b;
  b.ref = {"Deployment", "ns", "x"};
  b.policy = std::make_shared<WantPolicy>("w");
  b.actuator = &act;
  FakeMetricSource src;
  b.signals.push_back({"w", "", &src});
  b.pool = PoolMember{};
  EXPECT_TRUE(ctl.Add(b).IsInvalid());  // a pool place without a pool
  ASSERT_TRUE(ctl.SetPool(TwoTenants(), &pool, &allocator).ok());
  b.pool->tenant = 5;
  EXPECT_TRUE(ctl.Add(b).IsInvalid());
  b.pool.reset();
  EXPECT_TRUE(ctl.Add(b).IsInvalid());  // no place in a pool the controller has
}

}  // namespace
}  // namespace aiscale::control
