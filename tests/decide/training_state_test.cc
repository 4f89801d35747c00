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

// Sample() as the layout before the packed one wrote it: one key per field (those at their
// default left out, as a state that never set them).
PersistentState SampleKeyed() {
  PersistentState s;
  s.values["tr.init"] = {1};
  s.values["tr.last_asked"] = {12};
  s.values["tr.reference"] = {8};
  s.values["tr.last_tick"] = {1234.5};
  s.values["tr.tokens"] = {1.75};
  s.values["tr.io_shrunk"] = {1};
  s.values["tr.phase_util_t"] = {99.25};
  return s;
}

// What a tick loads and saves: the packed fields, whatever else the state holds; a state of
// the keyed layout (an older aiscale's) reads as it was written and is packed, its keys gone.
TEST(TrainingStateSlots, LoadsBothLayoutsAndSavesPacked) {
  PersistentState packed;
  Sample().Save(packed);
  PersistentState others;
  others.values["a.first"] = {1};
  others.values["tr.load.buckets"] = {2, 1, 100, 10, 0, 0};
  others.values["tr.pd.phase"] = {1};
  others.values["zz.last"] = {3};
  const auto with = [](PersistentState a, const PersistentState& b) {
    for (const auto& [k, v] : b.values) a.values[k] = v;
    return a;
  };
  PersistentState emptied = SampleKeyed();
  emptied.values["tr.tokens"].clear();  // an empty key reads as the default
  PersistentState first = SampleKeyed();
  first.values["tr.last_asked"] = {12, 6, 7};  // the first value counts
  PersistentState shorter = packed;
  shorter.values["tr.fields"].resize(10);  // saved before the later fields existed
  TrainingState sample_emptied = Sample();
  sample_emptied.tokens = 0;
  TrainingState sample_shorter;
  for (const auto& [key, v] : packed.values) {
    sample_shorter = TrainingState::Load(
        PersistentState{{{key, std::vector<double>(v.begin(), v.begin() + 10)}}});
  }
  struct Case {
    std::string name;
    PersistentState before;
    TrainingState want;
  };
  const std::vector<Case> cases = {
      {"empty", PersistentState{}, TrainingState{}},
      {"packed", packed, Sample()},
      {"packed among other keys", with(packed, others), Sample()},
      {"keyed", SampleKeyed(), Sample()},
      {"keyed among other keys", with(SampleKeyed(), others), Sample()},
      {"keyed, an empty key", emptied, sample_emptied},
      {"keyed, more than one value", first, Sample()},
      {"packed, shorter", shorter, sample_shorter},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PersistentState want_saved;
    c.want.Save(want_saved);
    // Field by field through a save: TrainingState has no operator==.
    PersistentState read;
    TrainingState::Load(c.before).Save(read);
    EXPECT_EQ(read, want_saved) << "TrainingState::Load";

    PersistentState s = c.before;
    const TrainingStateSlots slots(s);
    PersistentState loaded;
    slots.Load().Save(loaded);
    EXPECT_EQ(loaded, want_saved) << "TrainingStateSlots::Load";

    // Saved packed; the other keys as they were, the keyed ones gone.
    slots.Save(Sample());
    PersistentState want = with(others, packed);
    for (auto it = want.values.begin(); it != want.values.end();) {
      const bool kept = it->first == "tr.fields" || c.before.values.count(it->first);
      it = kept ? std::next(it) : want.values.erase(it);
    }
    want.values["tr.fields"] = packed.values["tr.fields"];
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
