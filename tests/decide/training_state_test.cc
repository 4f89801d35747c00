#include "decide/training/training_state.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "decide/training/phase_detector.h"
#include "decide/training/throughput_model.h"

namespace aiscale::decide {
namespace {

TrainingState Sample() {
  TrainingState t;
  t.initialized = true;
  t.last_asked = 12;
  t.reference = 8;
  t.last_tick = 1234.5;
  t.change_at = kNever;
  t.tokens = 1.75;
  t.io_shrunk = true;
  t.phase_util_t = 99.25;
  return t;
}

// The slots a tick loads from and saves to must read and write exactly what the keyed
// TrainingState::Load and a save key by key (PersistentState::Set) do, whatever the state
// already holds.
TEST(TrainingStateSlots, LoadAndSaveMatchTheKeyedState) {
  struct Case {
    std::string name;
    PersistentState before;
  };
  PersistentState saved;
  Sample().Save(saved);
  PersistentState with_others = saved;
  with_others.values["a.first"] = {1};
  with_others.values["tr.load.buckets"] = {2, 1, 100, 10, 0, 0};
  with_others.values["tr.pd.phase"] = {1};
  with_others.values["zz.last"] = {3};
  PersistentState emptied = saved;
  emptied.values["tr.tokens"].clear();
  emptied.values.erase("tr.reference");
  PersistentState extra = saved;
  extra.values["tr.last_asked"] = {5, 6, 7};  // the first value counts
  const std::vector<Case> cases = {
      {"empty", PersistentState{}},      {"saved", saved},
      {"among other keys", with_others}, {"an empty and a missing key", emptied},
      {"more than one value", extra},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const TrainingState keyed = TrainingState::Load(c.before);
    PersistentState s = c.before;
    const TrainingStateSlots slots(s);
    const TrainingState loaded = slots.Load();
    // Field by field through a save: Load has no operator==.
    PersistentState a, b;
    keyed.Save(a);
    loaded.Save(b);
    EXPECT_EQ(a, b);

    const TrainingState t = Sample();
    slots.Save(t);
    PersistentState want = c.before;
    PersistentState fields;
    t.Save(fields);
    for (const auto& [key, v] : fields.values) want.Set(key, v.front());
    EXPECT_EQ(s, want);
  }
}

TEST(ThroughputModel, LoadFromAndSaveToMatchTheKeyedForms) {
  ThroughputModel m;
  for (int n : {2, 4, 8}) ASSERT_TRUE(m.Add(n, 100.0 * n, 15, 70));
  PersistentState st;
  m.Save(st, "tr.compute");
  std::vector<double> v;
  m.SaveTo(v);
  EXPECT_EQ(v, st.values.at("tr.compute.buckets"));
  const ThroughputModel a = ThroughputModel::Load(st, "tr.compute", ThroughputPrior{});
  const ThroughputModel b = ThroughputModel::LoadFrom(v, ThroughputPrior{});
  for (int n : {1, 3, 8, 16}) EXPECT_EQ(*a.SecondsPerSample(n), *b.SecondsPerSample(n));
  EXPECT_FALSE(ThroughputModel::LoadFrom({}, ThroughputPrior{}).HasData());
}

TEST(PhaseKeys, NameTheDetectorsState) {
  const PhaseKeys k("tr.pd");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {k.phase, "tr.pd.phase"}, {k.since, "tr.pd.since"},
      {k.cand, "tr.pd.cand"},   {k.cand_since, "tr.pd.cand_since"},
      {k.len, "tr.pd.len"},     {k.count, "tr.pd.count"},
      {k.var, "tr.pd.var"}};
  for (const auto& [got, want] : cases) EXPECT_EQ(got, want);
  // The keyed and the prefixed Update write the same state.
  const PhaseDetector d;
  PersistentState a, b;
  for (double t : {0.0, 15.0, 30.0, 45.0, 60.0}) {
    const PhaseReading r{std::nullopt, t < 30 ? 10.0 : 90.0, t < 30 ? 0.0 : 50.0};
    d.Update(r, t, a, "tr.pd");
    d.Update(r, t, b, k);
  }
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a.values.empty());
}

}  // namespace
}  // namespace aiscale::decide
