// State deltas (state_delta.h): applying the delta from A to B to A gives B bit for bit, the
// delta of a moved window is small, and no corrupt delta crashes or allocates past its input.
#include "store/state_delta.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::store {
namespace {

bool SameBits(const PersistentState& a, const PersistentState& b) {
  if (a.values.size() != b.values.size()) return false;
  for (auto x = a.values.begin(), y = b.values.begin(); x != a.values.end(); ++x, ++y) {
    if (x->first != y->first || x->second.size() != y->second.size()) return false;
    if (!x->second.empty() &&
        std::memcmp(x->second.data(), y->second.data(), x->second.size() * sizeof(double)) != 0) {
      return false;
    }
  }
  return true;
}

std::vector<double> Iota(int n, double from) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(from + i);
  return v;
}

TEST(StateDelta, ApplyingTheDeltaGivesTheNewStateBitForBit) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::string name;
    PersistentState from, to;
    bool changed;
    size_t max_bytes;  // the delta is at most this long
  };
  const std::vector<Case> cases = {
      {"equal", {{{"a", {1, 2}}, {"b", {}}}}, {{{"a", {1, 2}}, {"b", {}}}}, false, 0},
      {"both empty", {}, {}, false, 0},
      {"one scalar", {{{"a", {1}}, {"b", {2}}}}, {{{"a", {1}}, {"b", {3}}}}, true, 16},
      {"one slot of a long season",
       {{{"season", Iota(1440, 0)}}},
       [] {
         PersistentState s{{{"season", Iota(1440, 0)}}};
         s.values["season"][700] = -1;
         return s;
       }(),
       true,
       32},
      {"window lost its oldest entry and gained one",
       {{{"w", Iota(84, 100)}}},
       {{{"w", Iota(84, 104)}}},
       true,
       48},
      {"appended", {{{"w", {1, 2}}}}, {{{"w", {1, 2, 3, 4}}}}, true, 32},
      {"shrunk", {{{"w", {1, 2, 3, 4}}}}, {{{"w", {1, 2}}}}, true, 16},
      {"key added", {{{"a", {1}}}}, {{{"a", {1}}, {"b", {5, 6}}}}, true, 32},
      {"key erased", {{{"a", {1}}, {"b", {5}}}}, {{{"a", {1}}}}, true, 8},
      {"to empty", {{{"a", {1}}, {"b", {5}}}}, {}, true, 16},
      {"from empty", {}, {{{"a", {1}}, {"b", {5}}}}, true, 40},
      {"-0.0 is not 0.0", {{{"a", {0.0}}}}, {{{"a", {-0.0}}}}, true, 16},
      {"NaN to NaN is no change", {{{"a", {nan, inf}}}}, {{{"a", {nan, inf}}}}, false, 0},
      {"to NaN and infinity", {{{"a", {1, 2}}}}, {{{"a", {nan, -inf}}}}, true, 32},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PersistentState last = c.from;
    std::string delta = "prefix";
    EXPECT_EQ(TakeStateDelta(last, c.to, delta), c.changed);
    EXPECT_TRUE(SameBits(last, c.to));  // the running copy follows
    ASSERT_EQ(delta.rfind("prefix", 0), 0u);
    delta.erase(0, 6);
    EXPECT_LE(delta.size(), c.max_bytes);
    PersistentState applied = c.from;
    ASSERT_TRUE(ApplyStateDelta(delta, applied).ok());
    EXPECT_TRUE(SameBits(applied, c.to));
  }
}

TEST(StateDelta, AChainOfDeltasReplaysToTheLastState) {
  PersistentState last, base;
  std::vector<std::string> deltas;
  PersistentState s;
  for (int t = 0; t < 200; ++t) {
    std::vector<double>& w = s.Vec("w");
    w.push_back(t * 0.5);
    if (w.size() > 20) w.erase(w.begin(), w.begin() + 2);
    s.Set("t", t);
    if (t % 7 == 0) s.values.erase("odd");
    if (t % 7 == 3) s.Vec("odd") = Iota(t % 5, t);
    std::string d;
    TakeStateDelta(last, s, d);
    deltas.push_back(d);
  }
  for (const std::string& d : deltas) ASSERT_TRUE(ApplyStateDelta(d, base).ok());
  EXPECT_TRUE(SameBits(base, s));
}

TEST(StateDelta, CorruptDeltasAreErrorsNotCrashes) {
  PersistentState from{{{"w", Iota(50, 0)}, {"x", {1}}}};
  PersistentState to{{{"w", Iota(60, 3)}, {"y", {2, 3}}}};
  std::string delta;
  PersistentState last = from;
  ASSERT_TRUE(TakeStateDelta(last, to, delta));
  // Every truncation: an error or a state, never a crash.
  for (size_t n = 0; n < delta.size(); ++n) {
    PersistentState s = from;
    (void)ApplyStateDelta(std::string_view(delta).substr(0, n), s);
  }
  std::string huge;
  PutVarint(huge, 1);
  huge += "w";
  PutVarint(huge, 1);  // set
  PutVarint(huge, 0);
  PutVarint(huge, uint64_t{1} << 60);  // size far past what the input carries
  PutVarint(huge, 0);
  PutVarint(huge, 0);
  const struct {
    std::string name, bytes;
  } bad[] = {
      {"unknown op", std::string("\x01w\x07", 3)},
      {"name past the end", std::string("\x09w", 2)},
      {"size not carried by the input", huge},
      {"drop past the vector", std::string("\x01x\x01\x05\x00\x00\x00", 7)},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.name);
    PersistentState s = from;
    EXPECT_FALSE(ApplyStateDelta(b.bytes, s).ok());
  }
}

}  // namespace
}  // namespace aiscale::store
