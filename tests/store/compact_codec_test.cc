// The store's compact decision form and binary state form: lossless round trips, and corrupt
// input is an error, never a crash.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/decision_codec.h"
#include "store/store_test_util.h"

namespace aiscale {
namespace {

using aiscale::testing::FullDecision;

TEST(CompactDecision, RoundTripsEveryField) {
  struct Case {
    const char* name;
    Decision d;
  };
  std::vector<Case> cases;
  for (int seq = 0; seq < 4; ++seq) {
    cases.push_back({"full", FullDecision("ns/w", 10, seq)});
  }
  Decision wall = FullDecision("ns/w", 20, 1);
  wall.wall = WallTime(Seconds(1796083200) + Duration(123456789));
  wall.engine_detail = "3 ready, 1 pending";
  wall.action = Action::kFailed;
  wall.action_code = StatusCode::kUnavailable;
  wall.vetoed = true;
  wall.unchanged_ticks = 20;
  wall.unchanged_for = Seconds(300);
  cases.push_back({"daemon heartbeat, failed action, veto", wall});
  Decision text = FullDecision("ns/w", 30, 2);
  text.recommendation.reason =
      "quote \" backslash \\ tab \t newline \n bell \x07 snow \xE2\x98\x83";
  text.inputs[0].detail = "caf\xC3\xA9 \xF0\x9F\x9A\x80";
  text.recommendation.facts = {{"zeta", 1e300}, {"alpha", -2.5}, {"tiny", 5e-324}};
  cases.push_back({"escapes, UTF-8, facts in their own order", text});
  Decision empty;
  empty.workload = "ns/e";
  cases.push_back({"defaults", empty});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string s = DecisionToCompact(c.d);
    auto back = DecisionFromCompact(s, c.d.workload, c.d.at);
    ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << s;
    EXPECT_EQ(ToJson(*back), ToJson(c.d)) << s;
    EXPECT_EQ(back->recommendation.facts, c.d.recommendation.facts);
    EXPECT_EQ(back->vetoed, c.d.vetoed);
    EXPECT_EQ(back->wall, c.d.wall);  // integer ns: exact
    EXPECT_EQ(back->unchanged_for, c.d.unchanged_for);
    // Smaller than the JSON the store wrote before.
    EXPECT_LT(s.size(), ToJson(c.d).dump().size());
  }
}

TEST(CompactDecision, NonFiniteNumbersReadBackAsNaN) {
  Decision d = FullDecision("ns/w", 1, 0);
  d.inputs[0].value = std::numeric_limits<double>::infinity();
  d.recommendation.facts = {{"nan", std::nan("")}};
  auto back = DecisionFromCompact(DecisionToCompact(d), d.workload, d.at);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(std::isnan(back->inputs[0].value));
  EXPECT_TRUE(std::isnan(back->recommendation.facts[0].second));
}

TEST(CompactDecision, InvalidUtf8IsReplacedNotFatal) {
  Decision d = FullDecision("ns/w", 1, 0);
  d.recommendation.reason = "bad \xFF\xC0\x80 end \xE2\x98";  // stray, overlong, truncated
  const std::string s = DecisionToCompact(d);
  auto back = DecisionFromCompact(s, d.workload, d.at);
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << s;
  EXPECT_EQ(back->recommendation.reason,
            "bad \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD end \xEF\xBF\xBD\xEF\xBF\xBD");
}

// The stored text itself, byte for byte: rows written before any change to the writer must
// keep reading the same, and the writer must keep writing them the same.
TEST(CompactDecision, EscapesAreWrittenExactly) {
  struct Case {
    const char* name;
    std::string reason;
    std::string want;  // what follows "re": in the row
  };
  const std::vector<Case> cases = {
      {"plain", "desired 4 (3.2 / 0.8)", "\"desired 4 (3.2 / 0.8)\""},
      {"empty run between escapes", "\"\"", R"("\"\"")"},
      {"quote and backslash", "a\"b\\c", R"("a\"b\\c")"},
      {"controls and DEL", std::string("t\tn\n\x01\x7f", 6), "\"t\\u0009n\\u000a\\u0001\x7f\""},
      {"UTF-8 kept, invalid replaced", "caf\xC3\xA9\xFFz", "\"caf\xC3\xA9\xEF\xBF\xBDz\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Decision d;
    d.workload = "ns/w";
    d.recommendation.reason = c.reason;
    const std::string s = DecisionToCompact(d);
    const size_t at = s.find("\"re\":");
    ASSERT_NE(at, std::string::npos) << s;
    EXPECT_EQ(s.substr(at + 5, c.want.size()), c.want) << s;
    EXPECT_EQ(s[at + 5 + c.want.size()], ',') << s;
  }
}

TEST(CompactDecision, BadTextIsAnError) {
  for (const char* bad : {"", "{", "[]", "{\"p\":1}", "{\"p\":\"x\",\"c\":1}",
                          "{\"p\":\"x\",\"c\":1,\"r\":1,\"i\":[[\"s\",\"weird\"]],\"d\":1,"
                          "\"s\":1,\"k\":1}"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(DecisionFromCompact(bad, "w", TimePoint{}).ok());
  }
}

// DecisionFromCompact reads rows with its own pull reader and leaves the rest to the full JSON
// document decoder: on the writer's rows and on 20,000 random corruptions of them, the two give
// the same Decision or the same refusal (a corrupt row never reads differently than before).
TEST(CompactDecision, TheFastReaderAgreesWithTheDocumentDecoder) {
  std::vector<std::string> rows;
  for (int seq = 0; seq < 4; ++seq)
    rows.push_back(DecisionToCompact(FullDecision("ns/w", 10, seq)));
  Decision text = FullDecision("ns/w", 30, 2);
  text.recommendation.reason = "quote \" backslash \\ tab \t snow \xE2\x98\x83";
  text.recommendation.facts = {{"zeta", 1e300}, {"nan", std::nan("")}};
  text.pool = {true, 4, 3, "serving", "reclaimed", "3 of 4"};
  text.action = Action::kFailed;
  text.action_code = StatusCode::kUnavailable;
  rows.push_back(DecisionToCompact(text));
  rows.push_back(DecisionToCompact(Decision{}));
  const std::string alphabet = "{}[]\",:0123456789.-+eE\\unlrtf \x01\xC3\xFF";
  std::mt19937 rng(11);
  size_t fast_answers = 0, refusals = 0;
  for (int k = 0; k < 20000; ++k) {
    std::string s = rows[static_cast<size_t>(k) % rows.size()];
    const int edits = k < static_cast<int>(rows.size()) ? 0 : 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          s[at] = c;
          break;
        case 1:
          s.erase(at, 1);
          break;
        default:
          s.insert(at, 1, c);
          break;
      }
    }
    SCOPED_TRACE(s);
    const Result<Decision> got = DecisionFromCompact(s, "w", TimePoint{});
    const Result<Decision> ref = DecisionFromCompactDocument(s, "w", TimePoint{});
    ASSERT_EQ(got.ok(), ref.ok()) << (got.ok() ? ref : got).status().message();
    if (!got.ok()) {
      ++refusals;
      continue;
    }
    ++fast_answers;
    EXPECT_EQ(DecisionToCompact(*got), DecisionToCompact(*ref));
  }
  EXPECT_GT(fast_answers, 1000u);  // the corruptions are not all refused
  EXPECT_GT(refusals, 1000u);
}

TEST(BinaryState, RoundTripsEveryDouble) {
  PersistentState s;
  s.values["tr.io_n1"] = {3};
  s.values["tr.io_size"] = {0};
  s.values["tr.io_shrunk"] = {};
  s.values["a"] = {1.5,
                   -0.0,
                   5e-324,
                   1e308,
                   std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity()};
  s.values[std::string(200, 'k')] = std::vector<double>(300, 2.25);  // multi-byte varints
  std::string bytes;
  StateToBytes(s, bytes);
  auto back = StateFromBytes(bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, s);
  PersistentState nan;
  nan.values["x"] = {std::nan("")};
  StateToBytes(nan, bytes);
  auto n = StateFromBytes(bytes);
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(std::isnan(n->values["x"].at(0)));
  StateToBytes(PersistentState{}, bytes);
  EXPECT_TRUE(bytes.empty());
}

TEST(BinaryState, EveryTruncationIsAnErrorOrAShorterState) {
  PersistentState s;
  s.values["alpha"] = {1, 2, 3};
  s.values["alphabet"] = {4};
  std::string bytes;
  StateToBytes(s, bytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE(n);
    auto r = StateFromBytes(std::string_view(bytes).substr(0, n));
    if (r.ok()) {
      EXPECT_LT(r->values.size(), s.values.size());
    }
  }
  // A count far past the input is refused before anything is allocated for it.
  const std::string huge = std::string("\x00\x01k\xFF\xFF\xFF\xFF\x0F", 8);
  EXPECT_FALSE(StateFromBytes(huge).ok());
}

}  // namespace
}  // namespace aiscale
