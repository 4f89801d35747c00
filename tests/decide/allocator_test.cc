// The pool's Allocator: guarantees, weighted borrowing, reclaims from the cheapest source,
// floors, granularity, holds on missing data, whole-job mode, and invariants on random pools.
#include "decide/allocator.h"

#include <map>
#include <random>

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

// A claim written compactly: tenant, priority rank, GPUs a replica, group, current, want, floor.
PoolClaim Claim(std::string_view name, int tenant, int priority, int gpus, int group, int current,
                int want, int floor, bool elastic = false) {
  PoolClaim c;
  c.name = name;
  c.tenant = tenant;
  c.priority = priority;
  c.gpus_per_replica = gpus;
  c.granularity = group;
  c.current = current;
  c.want = want;
  c.floor = floor;
  c.elastic = elastic;
  return c;
}

TenantSpec Tenant(std::string name, int64_t guaranteed, std::optional<int64_t> borrow = {},
                  double weight = 1) {
  return TenantSpec{std::move(name), guaranteed, borrow, weight};
}

AllocatorInput Input(int64_t pool, std::vector<TenantSpec> tenants, std::vector<PoolClaim> claims) {
  AllocatorInput in;
  in.pool_gpus = pool;
  in.tenants = std::move(tenants);
  in.claims = std::move(claims);
  in.priorities = {"serving", "training", "batch"};
  return in;
}

struct Expect {
  int replicas;
  GrantReason reason;
};

struct Case {
  std::string name;
  AllocatorInput in;
  std::vector<Expect> want;
  std::string detail_has = "";  // in the first grant whose reason is not as_wanted
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({"within guarantees nothing moves",
                   Input(16, {Tenant("a", 8), Tenant("b", 8)},
                         {Claim("chat", 0, 0, 1, 1, 4, 6, 1), Claim("bert", 1, 1, 8, 1, 1, 1, 1)}),
                   {{6, GrantReason::kGuarantee}, {1, GrantReason::kAsWanted}}});
  cases.push_back({"idle guarantee is lent up to the borrow limit",
                   Input(32, {Tenant("a", 16), Tenant("b", 16, 8)},
                         {Claim("chat", 0, 0, 1, 1, 2, 2, 1), Claim("bert", 1, 1, 8, 1, 2, 4, 1)}),
                   {{2, GrantReason::kAsWanted}, {3, GrantReason::kBorrowed}},
                   "wanted 4, granted 3: tenant b holds 24 GPUs, its limit (guarantee 16 GPUs + "
                   "borrow limit 8 GPUs)"});
  cases.push_back({"weighted max-min shares idle GPUs 1:2",
                   Input(12, {Tenant("a", 0, {}, 1), Tenant("b", 0, {}, 2)},
                         {Claim("x", 0, 2, 1, 1, 0, 20, 0), Claim("y", 1, 2, 1, 1, 0, 20, 0)}),
                   {{4, GrantReason::kBorrowed}, {8, GrantReason::kBorrowed}}});
  cases.push_back(
      {"an owner takes its guarantee back from a borrowing elastic job",
       Input(32, {Tenant("serve", 16), Tenant("train", 16)},
             {Claim("chat", 0, 0, 1, 1, 4, 12, 1), Claim("bert", 1, 1, 8, 1, 3, 3, 1, true)}),
       {{12, GrantReason::kReclaimed}, {2, GrantReason::kShrunk}},
       "bert (tenant train) 8 GPUs"});
  cases.push_back(
      {"serving shrinks training before lower-priority serving (one tenant)",
       Input(16, {Tenant("default", 0)},
             {Claim("chat", 0, 0, 1, 1, 4, 8, 1), Claim("bert", 0, 1, 4, 1, 2, 2, 1, true),
              Claim("batchy", 0, 2, 1, 1, 4, 4, 1)}),
       {{8, GrantReason::kReclaimed}, {1, GrantReason::kShrunk}, {4, GrantReason::kAsWanted}}});
  cases.push_back(
      {"floors hold: granted what is left, pool full",
       Input(16, {Tenant("default", 0)},
             {Claim("chat", 0, 0, 1, 1, 4, 20, 1), Claim("bert", 0, 1, 4, 1, 3, 3, 2, true)}),
       {{8, GrantReason::kReclaimed}, {2, GrantReason::kShrunk}},
       "wanted 20, granted 8"});
  cases.push_back(
      {"a group is freed whole and the rest sits idle",
       Input(16, {Tenant("default", 0)},
             {Claim("chat", 0, 0, 1, 1, 8, 9, 1), Claim("gpt", 0, 1, 2, 2, 4, 4, 2, true)}),
       {{9, GrantReason::kReclaimed}, {2, GrantReason::kShrunk}}});
  cases.push_back({"nothing lower to take: pool full, nobody shrunk",
                   Input(8, {Tenant("default", 0)},
                         {Claim("chat", 0, 1, 1, 1, 4, 6, 1), Claim("api", 0, 0, 1, 1, 4, 4, 1)}),
                   {{4, GrantReason::kPoolFull}, {4, GrantReason::kAsWanted}},
                   "pool full"});
  cases.push_back({"a workload the pool may not shrink never borrows",
                   [] {
                     auto in = Input(
                         16, {Tenant("a", 4), Tenant("b", 12)},
                         {Claim("job", 0, 1, 1, 1, 4, 10, 4), Claim("z", 1, 1, 1, 1, 0, 0, 0)});
                     in.claims[0].may_borrow = false;
                     return in;
                   }(),
                   {{4, GrantReason::kPoolFull}, {0, GrantReason::kAsWanted}}});
  cases.push_back({"regrowth held after a pool shrink",
                   [] {
                     auto in = Input(16, {Tenant("default", 0)},
                                     {Claim("bert", 0, 1, 4, 1, 2, 4, 1, true)});
                     in.claims[0].regrow_held = true;
                     return in;
                   }(),
                   {{2, GrantReason::kRegrowHeld}}});
  cases.push_back({"the engine's quota caps a tenant",
                   [] {
                     auto in = Input(32, {Tenant("a", 8), Tenant("b", 8)},
                                     {Claim("chat", 0, 0, 1, 1, 2, 20, 1)});
                     in.tenant_ceilings = {std::optional<int64_t>(10), std::nullopt};
                     return in;
                   }(),
                   {{10, GrantReason::kBorrowed}},
                   "engine quota 10 GPUs"});
  cases.push_back(
      {"at its borrow limit from the start: borrow_limit is the reason",
       Input(32, {Tenant("a", 8, 0), Tenant("b", 8)}, {Claim("chat", 0, 0, 1, 1, 8, 12, 1)}),
       {{8, GrantReason::kBorrowLimit}},
       "tenant a holds 8 GPUs, its limit (guarantee 8 GPUs + borrow limit 0 GPUs)"});
  cases.push_back(
      {"a smaller pool takes borrowed GPUs back first",
       Input(24, {Tenant("a", 16), Tenant("b", 8)},
             {Claim("chat", 0, 0, 1, 1, 16, 16, 1), Claim("bert", 1, 1, 8, 1, 2, 2, 1, true)}),
       {{16, GrantReason::kAsWanted}, {1, GrantReason::kShrunk}},
       "the pool shrank to 24 GPUs"});
  cases.push_back(
      {"each job shrunk frees toward the owner's expected need, not only what is short now",
       [] {
         // chat needs 4 more now and expects 7 (its guarantee leaves room for 5); neither job
         // frees 4 alone, so both pay a restart, and together they free the 5.
         auto in = Input(11, {Tenant("serve", 9), Tenant("train", 2)},
                         {Claim("chat", 0, 0, 1, 1, 4, 8, 1), Claim("r", 1, 1, 1, 1, 3, 3, 1, true),
                          Claim("b", 1, 1, 1, 1, 4, 4, 1, true)});
         in.claims[0].expected = 11;
         return in;
       }(),
       {{8, GrantReason::kReclaimed}, {1, GrantReason::kShrunk}, {1, GrantReason::kShrunk}}});
  cases.push_back({"idle GPUs not idle for the lend delay are not lent, and the reason says so",
                   [] {
                     auto in = Input(16, {Tenant("a", 8), Tenant("b", 2)},
                                     {Claim("chat", 0, 0, 1, 1, 8, 8, 1),
                                      Claim("bert", 1, 1, 1, 1, 2, 6, 1, true)});
                     in.elastic_idle = 1;  // 6 idle now, 1 of them for the whole delay; 5 left
                     return in;
                   }(),
                   {{8, GrantReason::kAsWanted}, {3, GrantReason::kBorrowed}},
                   "5 GPUs idle, lent to elastic growth only once idle for the pool's lend delay"});
  cases.push_back(
      {"fewer idle GPUs than one step of the job: the reason says so",
       Input(16, {Tenant("a", 10), Tenant("b", 2)},
             {Claim("chat", 0, 0, 1, 1, 10, 10, 1), Claim("gpt", 1, 1, 4, 1, 1, 2, 1, true)}),
       {{10, GrantReason::kAsWanted}, {1, GrantReason::kPoolFull}},
       "2 GPUs idle, less than one step of 4 GPUs"});
  cases.push_back(
      {"below floors only when floors alone exceed the pool",
       Input(4, {Tenant("default", 0)},
             {Claim("chat", 0, 0, 1, 1, 4, 4, 4), Claim("bert", 0, 1, 4, 1, 1, 1, 1, true)}),
       {{4, GrantReason::kAsWanted}, {0, GrantReason::kShrunk}}});
  // A pinned workload (floor = current, may not borrow) gives way below floors last, whatever
  // its priority: the batch job an operator pinned at 4 keeps them while chat may give more.
  {
    AllocatorInput in =
        Input(5, {Tenant("default", 0)},
              {Claim("chat", 0, 0, 1, 1, 4, 4, 2), Claim("pinned", 0, 2, 1, 1, 4, 4, 4)});
    in.claims[1].may_borrow = false;
    cases.push_back({"below floors a pinned workload gives way last",
                     in,
                     {{1, GrantReason::kShrunk}, {4, GrantReason::kAsWanted}}});
    in.pool_gpus = 3;  // nothing else is left: the pin gives way too
    cases.push_back({"below floors a pin gives way only where nothing else is left",
                     in,
                     {{0, GrantReason::kShrunk}, {3, GrantReason::kShrunk}}});
  }
  // An owner reclaiming its guarantee from a job whose floor stands on borrowed GPUs (its
  // tenant guaranteed less than the floor): shrinking to the floor would keep the owner out for
  // as long as the job runs, so the job is suspended whole; toward its floor where that covers.
  cases.push_back(
      {"an owner suspends a borrower whose floor is borrowed",
       Input(8, {Tenant("serve", 8), Tenant("train", 0)},
             {Claim("chat", 0, 0, 1, 1, 0, 4, 1), Claim("bert", 1, 1, 4, 1, 2, 2, 2, true)}),
       {{4, GrantReason::kReclaimed}, {0, GrantReason::kShrunk}},
       "bert (tenant train) 8 GPUs"});
  cases.push_back(
      {"toward the floor when that covers the owner",
       Input(8, {Tenant("serve", 8), Tenant("train", 0)},
             {Claim("chat", 0, 0, 1, 1, 0, 3, 1), Claim("bert", 1, 1, 1, 1, 8, 8, 4, true)}),
       {{3, GrantReason::kReclaimed}, {5, GrantReason::kShrunk}}});
  cases.push_back(
      {"past the floor only when the floor does not cover the owner",
       Input(8, {Tenant("serve", 8), Tenant("train", 0)},
             {Claim("chat", 0, 0, 1, 1, 0, 6, 1), Claim("bert", 1, 1, 1, 1, 8, 8, 4, true)}),
       {{6, GrantReason::kReclaimed}, {0, GrantReason::kShrunk}}});
  // A floor within the tenant's guarantee is not suspended: the owner gets what is borrowed.
  cases.push_back(
      {"a floor within the borrower's guarantee stays",
       Input(8, {Tenant("serve", 6), Tenant("train", 2)},
             {Claim("chat", 0, 0, 1, 1, 0, 8, 1), Claim("bert", 1, 1, 1, 1, 8, 8, 2, true)}),
       {{6, GrantReason::kReclaimed}, {2, GrantReason::kShrunk}}});
  // Idle first: a tenant at its guarantee whose serving grows borrows idle GPUs before its own
  // lower priorities are shrunk (they were shrunk, and with the tenant over its guarantee the
  // GPUs taken went to no one).
  cases.push_back(
      {"idle GPUs before the tenant's own training",
       Input(16, {Tenant("a", 8), Tenant("b", 8)},
             {Claim("chat", 0, 0, 1, 1, 4, 6, 1), Claim("bert", 0, 1, 1, 1, 4, 4, 1, true)}),
       {{6, GrantReason::kBorrowed}, {4, GrantReason::kAsWanted}}});
  cases.push_back(
      {"idle GPUs before the tenant's own batch, default tenant",
       Input(32, {Tenant("default", 0)},
             {Claim("chat", 0, 0, 1, 1, 4, 8, 1), Claim("batchy", 0, 2, 1, 1, 8, 8, 1)}),
       {{8, GrantReason::kBorrowed}, {8, GrantReason::kAsWanted}}});
  // With no idle GPU the tenant may borrow (its quota binds), its own batch gives way.
  {
    AllocatorInput in =
        Input(32, {Tenant("default", 0)},
              {Claim("chat", 0, 0, 1, 1, 4, 8, 1), Claim("batchy", 0, 2, 1, 1, 8, 8, 1)});
    in.tenant_ceilings = {12};
    cases.push_back({"the tenant's own batch when its quota binds",
                     in,
                     {{8, GrantReason::kReclaimed}, {4, GrantReason::kShrunk}}});
  }
  return cases;
}

TEST(Allocator, Rules) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const Allocation a = Allocate(c.in);
    ASSERT_EQ(a.grants.size(), c.want.size());
    std::string detail;
    for (size_t i = 0; i < c.want.size(); ++i) {
      EXPECT_EQ(a.grants[i].replicas, c.want[i].replicas)
          << "claim " << i << ": " << a.grants[i].detail;
      EXPECT_EQ(GrantReasonName(a.grants[i].reason), GrantReasonName(c.want[i].reason))
          << "claim " << i << ": " << a.grants[i].detail;
      if (detail.empty() && a.grants[i].reason != GrantReason::kAsWanted) {
        detail = a.grants[i].detail;
      }
    }
    if (!c.detail_has.empty()) {
      EXPECT_NE(detail.find(c.detail_has), std::string::npos) << detail;
    }
  }
}

TEST(Allocator, ShrinksTheJobAndSizeThatLoseTheLeastProgress) {
  // Two borrowing jobs of 2 nodes (8 GPUs each); chat needs 8 GPUs more than are idle. `a`
  // scales nearly linearly (a node lost costs a lot), `b` barely (a node costs little): b gives
  // one node back.
  auto in = Input(56, {Tenant("serve", 32), Tenant("train", 0)},
                  {Claim("chat", 0, 0, 1, 1, 0, 32, 1), Claim("a", 1, 1, 8, 1, 2, 2, 1, true),
                   Claim("b", 1, 1, 8, 1, 2, 2, 1, true)});
  in.shrink_cost = [](size_t i, int to) { return (2 - to) * (i == 1 ? 900.0 : 100.0); };
  Allocation got = Allocate(in);
  EXPECT_EQ(got.grants[0].replicas, 32);
  EXPECT_EQ(got.grants[1].replicas, 2);
  EXPECT_EQ(got.grants[2].replicas, 1);
  EXPECT_EQ(got.reclaimed_gpus, 8);
  // The other way round, the other job gives.
  in.shrink_cost = [](size_t i, int to) { return (2 - to) * (i == 1 ? 100.0 : 900.0); };
  got = Allocate(in);
  EXPECT_EQ(got.grants[1].replicas, 1);
  EXPECT_EQ(got.grants[2].replicas, 2);
}

TEST(Allocator, WholeJobModeSuspendsAndResumesOnlyWhole) {
  auto in = Input(32, {Tenant("serve", 16), Tenant("train", 16)},
                  {Claim("chat", 0, 0, 1, 1, 4, 12, 1), Claim("bert", 1, 1, 8, 1, 3, 3, 1, true)});
  in.mode = ReclaimMode::kWholeJob;
  Allocation got = Allocate(in);
  EXPECT_EQ(got.grants[0].replicas, 12);
  EXPECT_EQ(got.grants[1].replicas, 0);
  EXPECT_EQ(got.grants[1].reason, GrantReason::kSuspended);
  // Suspended, it wants its 3 nodes back; 20 GPUs idle of 32 once chat holds 12: too few.
  in.claims[0].current = 12;
  in.claims[1].current = 0;
  got = Allocate(in);
  EXPECT_EQ(got.grants[1].replicas, 0);  // 16 of its own guarantee would fit, but not all 24
  in.claims[0].current = in.claims[0].want = 8;  // the peak passes: 24 idle, the job fits whole
  got = Allocate(in);
  EXPECT_EQ(got.grants[1].replicas, 3);
}

TEST(Allocator, UnknownPoolHoldsEveryone) {
  auto in = Input(16, {Tenant("default", 0)},
                  {Claim("chat", 0, 0, 1, 1, 4, 8, 1), Claim("bert", 0, 1, 4, 1, 3, 2, 1, true)});
  in.pool_gpus.reset();
  in.pool_detail = "kubernetes: connection refused";
  const Allocation got = Allocate(in);
  EXPECT_FALSE(got.pool_known);
  EXPECT_EQ(got.grants[0].replicas, 4);
  EXPECT_EQ(got.grants[0].reason, GrantReason::kPoolUnknown);
  EXPECT_NE(got.grants[0].detail.find("connection refused"), std::string::npos);
  EXPECT_EQ(got.grants[1].replicas, 2);  // its own scale-down stands
}

TEST(Allocator, InvalidClaimsHold) {
  for (int bad = 0; bad < 4; ++bad) {
    auto in = Input(16, {Tenant("default", 0)}, {Claim("x", 0, 0, 1, 1, 2, 6, 1)});
    if (bad == 0) in.claims[0].tenant = 3;
    if (bad == 1) in.claims[0].want = -1;
    if (bad == 2) in.claims[0].gpus_per_replica = 0;
    if (bad == 3) in.pool_gpus = -5;
    const Allocation got = Allocate(in);
    EXPECT_EQ(got.grants[0].replicas, 2) << bad;  // held where it is
    EXPECT_FALSE(got.pool_known) << bad;
  }
}

// Invariants over random pools: never past the pool, never above what a workload wants, floors
// kept unless floors alone exceed the pool or an owner takes back a borrowed floor whole, group
// multiples, and every tenant gets at least min(its demand, its guarantee) when nothing else
// holds it back.
TEST(Allocator, InvariantsOnRandomPools) {
  std::mt19937_64 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 3000; ++round) {
    SCOPED_TRACE(round);
    const int tenants = pick(1, 4);
    std::vector<TenantSpec> ts;
    int64_t guaranteed = 0;
    const int64_t pool = pick(0, 64);
    for (int t = 0; t < tenants; ++t) {
      const int64_t q = pick(0, static_cast<int>(std::max<int64_t>(0, pool - guaranteed)));
      guaranteed += q;
      std::optional<int64_t> b;
      if (pick(0, 2) == 0) b = pick(0, 16);
      ts.push_back(Tenant("t" + std::to_string(t), q, b, pick(1, 3)));
    }
    std::vector<std::string> names;
    const int n = pick(0, 8);
    for (int i = 0; i < n; ++i) names.push_back("w" + std::to_string(i));
    std::vector<PoolClaim> claims;
    for (int i = 0; i < n; ++i) {
      const int group = pick(1, 2);
      claims.push_back(Claim(names[i], pick(0, tenants - 1), pick(0, 2), pick(1, 4), group,
                             group * pick(0, 4), group * pick(0, 6), 0, pick(0, 1) == 1));
      claims.back().floor = group * pick(0, claims.back().current / group);
    }
    auto in = Input(pool, ts, claims);
    if (pick(0, 3) == 0) in.mode = ReclaimMode::kWholeJob;
    const Allocation got = Allocate(in);
    int64_t total = 0, floors = 0;
    for (size_t i = 0; i < claims.size(); ++i) {
      const PoolClaim& c = claims[i];
      const int g = got.grants[i].replicas;
      total += int64_t{g} * c.gpus_per_replica;
      floors += int64_t{std::min(c.floor, std::min(c.current, c.want))} * c.gpus_per_replica;
      EXPECT_GE(g, 0);
      EXPECT_LE(g, c.want);
      EXPECT_EQ(g % c.granularity, 0) << got.grants[i].detail;
    }
    EXPECT_LE(total, pool);
    if (floors <= pool && in.mode == ReclaimMode::kShrink) {
      for (size_t i = 0; i < claims.size(); ++i) {
        const Grant& g = got.grants[i];
        if (claims[i].elastic && g.replicas == 0 &&
            g.detail.find("reclaiming its guarantee") != std::string::npos) {
          continue;  // suspended whole for an owner: its floor stood on borrowed GPUs
        }
        EXPECT_GE(g.replicas,
                  std::min(claims[i].floor, std::min(claims[i].current, claims[i].want)))
            << g.detail;
      }
    }
  }
}

}  // namespace
}  // namespace aiscale::decide
