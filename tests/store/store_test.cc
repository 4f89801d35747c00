// One typed suite for every Store, so the in-memory fake cannot drift from SQLite
// (docs/architecture.md, practice 9).
#include <cmath>
#include <limits>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace aiscale::store {
namespace {

using aiscale::testing::FreshTempDir;
using aiscale::testing::FullDecision;

template <typename T>
struct Maker;

template <>
struct Maker<MemoryStore> {
  static std::unique_ptr<Store> Make(StoreOptions o) { return std::make_unique<MemoryStore>(o); }
};

template <>
struct Maker<SqliteStore> {
  static std::unique_ptr<Store> Make(StoreOptions o) {
    auto s = SqliteStore::Open(FreshTempDir("store") + "/store.db", o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::unique_ptr<Store>(std::move(s).value()) : nullptr;
  }
};

template <typename T>
class StoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> Make(StoreOptions o = {}) { return Maker<T>::Make(o); }
};

using StoreTypes = ::testing::Types<MemoryStore, SqliteStore>;
TYPED_TEST_SUITE(StoreTest, StoreTypes);

// Recent() must give back the same decisions, in order; compared through their JSON.
void ExpectSame(const std::vector<Decision>& got, const std::vector<Decision>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("decision " + std::to_string(i));
    EXPECT_EQ(ToJson(got[i]), ToJson(want[i]));
    EXPECT_EQ(got[i].at, want[i].at);  // exact to the nanosecond
  }
}

TYPED_TEST(StoreTest, EmptyStoreHasNoDecisionsAndEmptyState) {
  auto s = this->Make();
  ASSERT_NE(s, nullptr);
  auto recent = s->Recent("ns/w", 10);
  ASSERT_TRUE(recent.ok()) << recent.status().message();
  EXPECT_TRUE(recent->empty());
  auto st = s->LoadState("ns/w/policy");
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_TRUE(st->values.empty());
}

TYPED_TEST(StoreTest, RecentIsNewestLastAndAtMostN) {
  auto s = this->Make();
  ASSERT_NE(s, nullptr);
  std::vector<Decision> all;
  for (int i = 0; i < 5; ++i) {
    all.push_back(FullDecision("ns/w", 100 + 15 * i, i));
    ASSERT_TRUE(s->Append(all.back()).ok());
  }
  struct Case {
    const char* name;
    size_t n;
    size_t first;  // index into `all` of the oldest expected
  };
  const std::vector<Case> cases = {
      {"none", 0, 5},
      {"one", 1, 4},
      {"three", 3, 2},
      {"exactly all", 5, 0},
      {"more than stored", 50, 0},
      {"no limit", std::numeric_limits<size_t>::max(), 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = s->Recent("ns/w", c.n);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ExpectSame(*got, std::vector<Decision>(all.begin() + static_cast<long>(c.first), all.end()));
  }
}

TYPED_TEST(StoreTest, DecisionsAreKeptPerWorkload) {
  auto s = this->Make();
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Append(FullDecision("a", 1, 0)).ok());
  ASSERT_TRUE(s->Append(FullDecision("b", 2, 1)).ok());
  ASSERT_TRUE(s->Append(FullDecision("a", 3, 2)).ok());
  auto a = s->Recent("a", 10);
  auto b = s->Recent("b", 10);
  auto c = s->Recent("c", 10);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ExpectSame(*a, {FullDecision("a", 1, 0), FullDecision("a", 3, 2)});
  ExpectSame(*b, {FullDecision("b", 2, 1)});
  EXPECT_TRUE(c->empty());
}

TYPED_TEST(StoreTest, RetentionKeepsNewestNPerWorkload) {
  auto s = this->Make(StoreOptions{3, false});
  ASSERT_NE(s, nullptr);
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(s->Append(FullDecision("a", i, i)).ok());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(s->Append(FullDecision("b", i, i)).ok());
  auto a = s->Recent("a", 100);
  auto b = s->Recent("b", 100);
  ASSERT_TRUE(a.ok() && b.ok());
  ExpectSame(*a, {FullDecision("a", 4, 4), FullDecision("a", 5, 5), FullDecision("a", 6, 6)});
  ExpectSame(*b, {FullDecision("b", 0, 0), FullDecision("b", 1, 1)});
}

bool SameState(const PersistentState& a, const PersistentState& b) {
  if (a.values.size() != b.values.size()) return false;
  for (const auto& [k, va] : a.values) {
    auto it = b.values.find(k);
    if (it == b.values.end() || it->second.size() != va.size()) return false;
    for (size_t i = 0; i < va.size(); ++i) {
      const double x = va[i], y = it->second[i];
      if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
    }
  }
  return true;
}

TYPED_TEST(StoreTest, StateRoundTripsAndOverwrites) {
  auto s = this->Make();
  ASSERT_NE(s, nullptr);
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* name;
    PersistentState state;
  };
  const std::vector<Case> cases = {
      {"empty", {}},
      {"scalars and vectors", {{{"last_scale_s", {3600.5}}, {"recs", {1, 2, 3, 4.25}}}}},
      {"empty vector", {{{"window", {}}}}},
      {"non-finite", {{{"fit", {std::nan(""), inf, -inf, 1e-300}}}}},
      {"overwrite drops old keys", {{{"only", {7}}}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(s->SaveState("ns/w/policy", c.state).ok());
    auto got = s->LoadState("ns/w/policy");
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE(SameState(*got, c.state));
  }
  auto other = s->LoadState("ns/w/stabilizer");
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->values.empty());
}

TYPED_TEST(StoreTest, WriteBatchIsEveryAppendAndSaveOfATick) {
  // A batch reads back exactly as the same writes made one by one, retention included.
  auto batched = this->Make(StoreOptions{2, false});
  auto single = this->Make(StoreOptions{2, false});
  ASSERT_NE(batched, nullptr);
  ASSERT_NE(single, nullptr);
  for (int tick = 0; tick < 3; ++tick) {
    std::vector<Decision> ds;
    std::vector<PersistentState> states;
    for (const char* w : {"a", "b", "c"}) {
      ds.push_back(FullDecision(w, tick, tick * 10));
      states.push_back(PersistentState{{{"tick", {static_cast<double>(tick)}}}});
    }
    std::vector<StoreWrite> writes;
    for (size_t i = 0; i < ds.size(); ++i) {
      writes.push_back({&ds[i], {{ds[i].workload + "/policy", &states[i]}}});
      ASSERT_TRUE(single->Append(ds[i]).ok());
      ASSERT_TRUE(single->SaveState(ds[i].workload + "/policy", states[i]).ok());
    }
    ASSERT_TRUE(batched->WriteBatch(writes).ok());
  }
  for (const char* w : {"a", "b", "c"}) {
    SCOPED_TRACE(w);
    auto got = batched->Recent(w, 10);
    auto want = single->Recent(w, 10);
    ASSERT_TRUE(got.ok() && want.ok());
    EXPECT_EQ(got->size(), 2u);
    ExpectSame(*got, *want);
    auto st = batched->LoadState(std::string(w) + "/policy");
    ASSERT_TRUE(st.ok());
    EXPECT_TRUE(SameState(*st, PersistentState{{{"tick", {2}}}}));
  }
  EXPECT_TRUE(batched->WriteBatch({}).ok());
}

TYPED_TEST(StoreTest, ConcurrentAppendsAreAllKept) {
  auto s = this->Make(StoreOptions{0, false});
  ASSERT_NE(s, nullptr);
  constexpr int kThreads = 4, kEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        EXPECT_TRUE(s->Append(FullDecision("w" + std::to_string(t % 2), i, i)).ok());
        PersistentState st;
        st.Set("i", i);
        EXPECT_TRUE(s->SaveState("w" + std::to_string(t), st).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const char* w : {"w0", "w1"}) {
    auto got = s->Recent(w, 1000);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->size(), static_cast<size_t>(2 * kEach));
  }
  auto st = s->LoadState("w3");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->Get("i", -1), kEach - 1);
}

// A steady workload at 15 s ticks: the first decision, then one heartbeat per 5 minutes that
// says how many ticks it stands for; a change is stored at once.
TYPED_TEST(StoreTest, ChangesAndHeartbeatsOnly) {
  StoreOptions o;
  o.heartbeat = Seconds(300);
  auto s = this->Make(o);
  ASSERT_NE(s, nullptr);
  auto tick = [](int k, int replicas) {
    Decision d = FullDecision("ns/w", 15.0 * k, 0);
    d.at = TimePoint(Seconds(15.0 * k));
    d.action = Action::kNone;
    d.current = replicas;
    d.inputs[0].value = 60 + k % 7;  // values jitter; that is not a change
    return d;
  };
  std::vector<StoreWrite> none;
  for (int k = 0; k <= 45; ++k) {
    const Decision d = tick(k, k < 45 ? 4 : 5);
    if (k % 2 == 0) {
      ASSERT_TRUE(s->Append(d).ok());
    } else {
      ASSERT_TRUE(s->WriteBatch({StoreWrite{&d, {}}}).ok());  // both paths filter alike
    }
  }
  auto got = s->Recent("ns/w", 100);
  ASSERT_TRUE(got.ok()) << got.status().message();
  struct Want {
    double t_s;
    int unchanged_ticks;
    double unchanged_for_s;
    int current;
  };
  const std::vector<Want> want = {
      {0, 0, 0, 4}, {300, 20, 300, 4}, {600, 20, 300, 4}, {675, 0, 0, 5}};
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    const Decision& d = (*got)[i];
    EXPECT_EQ(d.at, TimePoint(Seconds(want[i].t_s)));
    EXPECT_EQ(d.unchanged_ticks, want[i].unchanged_ticks);
    EXPECT_EQ(d.unchanged_for, Seconds(want[i].unchanged_for_s));
    EXPECT_EQ(d.current, want[i].current);
    // A heartbeat is the tick's own decision: what was seen then, not at the last change.
    EXPECT_EQ(d.inputs[0].value, 60 + static_cast<int>(want[i].t_s / 15) % 7);
  }
  EXPECT_EQ((*got)[1].UnchangedText(), "unchanged for 20 ticks since t=0s");
  EXPECT_EQ(ToJson((*got)[1])["unchanged_ticks"], 20);
}

// Decisions older than the retention go (by their own time, so a fake clock drives it); the
// newest stay, and state is never pruned.
TYPED_TEST(StoreTest, RetentionDropsDecisionsOlderThanItByTheirTime) {
  StoreOptions o;
  o.retention = Seconds(3600);
  o.prune_batch = 1;
  auto s = this->Make(o);
  ASSERT_NE(s, nullptr);
  PersistentState st;
  st.Set("x", 1);
  ASSERT_TRUE(s->SaveState("ns/w/policy", st).ok());
  for (int k = 0; k <= 18; ++k) {  // every 10 minutes for 3 hours
    const Decision d = FullDecision("ns/w", 600.0 * k, 0);
    ASSERT_TRUE(s->Append(d).ok());
  }
  auto got = s->Recent("ns/w", 100);
  ASSERT_TRUE(got.ok());
  ASSERT_FALSE(got->empty());
  EXPECT_EQ(got->back().at, FullDecision("ns/w", 600.0 * 18, 0).at);
  for (const Decision& d : *got) EXPECT_GE(d.at, TimePoint(Seconds(7200)));
  EXPECT_EQ(got->size(), 7u);  // 2:00, 2:10, ..., 3:00
  auto loaded = s->LoadState("ns/w/policy");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded, st);
}

}  // namespace
}  // namespace aiscale::store
