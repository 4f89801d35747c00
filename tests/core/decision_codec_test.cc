#include "core/decision_codec.h"

#include <cmath>

#include <gtest/gtest.h>

namespace aiscale {
namespace {

Decision Sample() {
  Decision d;
  d.workload = "ns/job";
  d.policy = "training";
  d.at = AtSeconds(3600.25);
  d.current = 8;
  d.ready = 7;
  d.inputs = {{"gpu_util", SignalStatus::kOk, 80, 640, 8, "dropped 0 invalid and 1 stale of 9"},
              {"phase", SignalStatus::kMissing, 0, 0, 0, "no observations"},
              {"samples_per_s", SignalStatus::kInvalid, 0, 0, 0, "1 of 1 values NaN"}};
  d.recommendation = {
      16, true, "rescale_gain", "gain 412 s > cost 180 s", {{"cost_s", 180}, {"gain_s", 412}}};
  d.stabilized = 16;
  d.constrained = 16;
  d.constrain_reason = "";
  d.action = Action::kScaled;
  d.action_detail = "8 -> 16";
  return d;
}

TEST(DecisionCodec, RoundTripsEveryField) {
  const Decision d = Sample();
  auto back = DecisionFromJson(ToJson(d));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ToJson(*back), ToJson(d));
  EXPECT_EQ(back->at, d.at);
  EXPECT_EQ(back->inputs[0].detail, d.inputs[0].detail);
  EXPECT_EQ(back->recommendation.facts, d.recommendation.facts);
  EXPECT_EQ(back->action, Action::kScaled);
}

TEST(DecisionCodec, NaNFactReadsBackAsNaN) {
  Decision d = Sample();
  d.recommendation.facts = {{"forecast", std::nan("")}};
  auto back = DecisionFromJson(nlohmann::json::parse(ToJson(d).dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->recommendation.facts.size(), 1u);
  EXPECT_TRUE(std::isnan(back->recommendation.facts[0].second));
}

TEST(DecisionCodec, BadInputIsAnError) {
  struct Case {
    const char* name;
    std::function<void(nlohmann::json&)> spoil;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"not an object", [](nlohmann::json& j) { j = nlohmann::json::array(); },
       "not a JSON object"},
      {"missing field", [](nlohmann::json& j) { j.erase("current"); }, "current"},
      {"wrong type", [](nlohmann::json& j) { j["ready"] = "seven"; }, "unable to decode"},
      {"unknown status", [](nlohmann::json& j) { j["inputs"][0]["status"] = "weird"; },
       "unknown signal status 'weird'"},
      {"unknown action", [](nlohmann::json& j) { j["action"] = "exploded"; },
       "unknown action 'exploded'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    nlohmann::json j = ToJson(Sample());
    c.spoil(j);
    auto r = DecisionFromJson(j);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().message();
  }
}

TEST(StateCodec, RoundTripsIncludingNonFinite) {
  PersistentState s;
  s.Vec("a") = {1, -2.5, std::numeric_limits<double>::infinity(),
                -std::numeric_limits<double>::infinity()};
  s.Vec("empty") = {};
  s.Vec("nan") = {std::nan("")};
  auto back = StateFromJson(nlohmann::json::parse(StateToJson(s).dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->values.at("a"), s.values.at("a"));
  EXPECT_TRUE(back->values.at("empty").empty());
  EXPECT_TRUE(std::isnan(back->values.at("nan").at(0)));
}

TEST(StateCodec, BadInputIsAnError) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"[1, 2]", "not a JSON object"},
      {R"({"a": 3})", "'a' is not an array"},
      {R"({"a": [1, "x"]})", "'a' holds a non-number"},
  };
  for (const auto& [text, expect] : cases) {
    SCOPED_TRACE(text);
    auto r = StateFromJson(nlohmann::json::parse(text));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(expect), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace aiscale
