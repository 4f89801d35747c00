// An AIScaler's status from the tick's Decision: HPA's conditions and reasons for each outcome,
// the Paused condition, the TARGETS text, what counts as a change worth writing at once, and a
// condition's lastTransitionTime kept while its status holds.
#include "act/aiscaler_status.h"

#include <gtest/gtest.h>

#include <functional>

#include "decide/constraints.h"

namespace aiscale::act {
namespace {

Decision Base() {
  Decision d;
  d.workload = "ai/llm";
  d.policy = "hpa";
  d.current = d.ready = 2;
  d.recommendation = {3, true, "metric_ratio", "concurrency 24 vs 16", {}};
  d.stabilized = d.constrained = 3;
  d.action = Action::kScaled;
  d.inputs = {{"concurrency", SignalStatus::kOk, 12, 24, 2, ""}};
  return d;
}

struct Want {
  std::string able, active, limited;  // "Status/Reason"
};

std::string Of(const AiScalerStatus& s, const char* type) {
  const StatusCondition* c = s.Condition(type);
  return c ? c->status + "/" + c->reason : "absent";
}

TEST(AiScalerStatus, ConditionsForEachOutcome) {
  struct Case {
    const char* name;
    std::function<void(Decision&, StatusInput&)> edit;
    Want want;
  };
  const std::vector<Case> cases = {
      {"scaled",
       [](Decision&, StatusInput&) {},
       {"True/SucceededRescale", "True/ValidMetricFound", "False/DesiredWithinRange"}},
      {"steady",
       [](Decision& d, StatusInput&) {
         d.action = Action::kNone;
         d.recommendation.desired = d.stabilized = d.constrained = 2;
       },
       {"True/ReadyForNewScale", "True/ValidMetricFound", "False/DesiredWithinRange"}},
      {"held by the scale-down window",
       [](Decision& d, StatusInput&) {
         d.action = Action::kNone;
         d.recommendation.desired = 1;
         d.stabilized = d.constrained = 2;
         d.stabilize_reason = "recent recommendations were higher";
       },
       {"True/ScaleDownStabilized", "True/ValidMetricFound", "False/DesiredWithinRange"}},
      {"scale-down vetoed",
       [](Decision& d, StatusInput&) {
         d.action = Action::kNone;
         d.vetoed = true;
         d.stabilized = d.constrained = 2;
         d.stabilize_reason = "scale-down vetoed: kv_cache_usage is missing";
       },
       {"True/ScaleDownVetoed", "True/ValidMetricFound", "False/DesiredWithinRange"}},
      {"no metrics",
       [](Decision& d, StatusInput&) {
         d.action = Action::kNone;
         d.recommendation.valid = false;
         d.recommendation.reason = "concurrency is missing";
         d.inputs[0].status = SignalStatus::kMissing;
       },
       {"True/ReadyForNewScale", "False/FailedGetMetrics", "Unknown/NoRecommendation"}},
      {"observe failed",
       [](Decision& d, StatusInput&) {
         d.action = Action::kFailed;
         d.recommendation = {0, false, "observe_failed", "deployments.apps not found", {}};
         d.action_detail = "unable to observe scale: not found";
       },
       {"False/FailedGetScale", "Unknown/FailedGetScale", "Unknown/NoRecommendation"}},
      {"apply failed",
       [](Decision& d, StatusInput&) {
         d.action = Action::kFailed;
         d.action_detail = "HTTP 403: forbidden";
       },
       {"False/FailedUpdateScale", "True/ValidMetricFound", "False/DesiredWithinRange"}},
      {"capped at max",
       [](Decision& d, StatusInput&) { d.constrain_reason = "capped at max_replicas 3"; },
       {"True/SucceededRescale", "True/ValidMetricFound", "True/TooManyReplicas"}},
      {"raised to min",
       [](Decision& d, StatusInput&) { d.constrain_reason = "raised to min_replicas 3"; },
       {"True/SucceededRescale", "True/ValidMetricFound", "True/TooFewReplicas"}},
      {"invalid spec",
       [](Decision&, StatusInput& in) { in.invalid = "spec.policy.name: unknown policy 'hpx'"; },
       {"False/InvalidSpec", "False/InvalidSpec", "Unknown/InvalidSpec"}},
      {"name clash",
       [](Decision&, StatusInput& in) { in.conflict = "the config file already has ai/llm"; },
       {"False/NameConflict", "False/NameConflict", "Unknown/NameConflict"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Decision d = Base();
    StatusInput in;
    in.generation = 4;
    in.reference = "Deployment/llm";
    in.decision = &d;
    in.targets = {{"concurrency", "16"}};
    c.edit(d, in);
    const AiScalerStatus s = BuildStatus(in, nullptr, "2026-12-01T10:00:00Z");
    EXPECT_EQ(Of(s, "AbleToScale"), c.want.able);
    EXPECT_EQ(Of(s, "ScalingActive"), c.want.active);
    EXPECT_EQ(Of(s, "ScalingLimited"), c.want.limited);
    EXPECT_EQ(Of(s, "Paused"), "False/NotPaused");
    EXPECT_EQ(s.observed_generation, 4);
    if (!in.invalid.empty()) {
      EXPECT_EQ(s.Condition("ScalingActive")->message, in.invalid) << "the field path is shown";
      EXPECT_FALSE(s.current_replicas.has_value());
    }
  }
}

TEST(AiScalerStatus, ReplicasTargetsAndJson) {
  Decision d = Base();
  d.inputs.push_back({"kv_cache_usage", SignalStatus::kStale, 0, 0, 0, "old"});
  StatusInput in;
  in.reference = "Deployment/llm";
  in.decision = &d;
  in.targets = {{"concurrency", "16"}, {"kv_cache_usage", "0.75"}};
  in.last_scale_time = "2026-12-01T09:59:00Z";
  const AiScalerStatus s = BuildStatus(in, nullptr, "2026-12-01T10:00:00Z");
  EXPECT_EQ(s.current_replicas, 3) << "scaled this tick: the new size";
  EXPECT_EQ(s.desired_replicas, 3);
  EXPECT_EQ(s.targets, "12/16, <unknown>/0.75");
  const nlohmann::json j = s.ToJson();
  EXPECT_EQ(j["reference"], "Deployment/llm");
  EXPECT_EQ(j["lastScaleTime"], "2026-12-01T09:59:00Z");
  EXPECT_EQ(j["currentMetrics"][1]["status"], "stale");
  EXPECT_EQ(j["conditions"].size(), 4u);
  // Read back (what a restarted aiscale finds on the object): the same core.
  EXPECT_TRUE(AiScalerStatus::FromJson(j).SameCore(s));
}

TEST(AiScalerStatus, PausedCondition) {
  struct Case {
    std::string hold, error, want;
  };
  const std::vector<Case> cases = {
      {"paused", "", "True/ScalingPaused"},
      {"pinned at 3", "", "True/ReplicasPinned"},
      {"scale-down paused", "", "True/ScaleDownPaused"},
      {"scale-up paused", "", "True/ScaleUpPaused"},
      {"paused", "annotation aiscale.dev/paused: must be \"true\" or \"false\", got 'yes'",
       "True/InvalidAnnotation"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.want);
    Decision d = Base();
    StatusInput in;
    in.decision = &d;
    in.hold = c.hold;
    in.hold_source = "annotation aiscale.dev/paused";
    in.hold_error = c.error;
    EXPECT_EQ(Of(BuildStatus(in, nullptr, "t"), "Paused"), c.want);
  }
}

TEST(AiScalerStatus, ChangesAndTransitionTimes) {
  Decision d = Base();
  StatusInput in;
  in.decision = &d;
  in.targets = {{"concurrency", "16"}};
  const AiScalerStatus first = BuildStatus(in, nullptr, "T1");
  // Only a signal value moved: not a core change.
  d.inputs[0].value = 13;
  const AiScalerStatus second = BuildStatus(in, &first, "T2");
  EXPECT_TRUE(second.SameCore(first));
  EXPECT_FALSE(second.SameMetrics(first));
  EXPECT_EQ(second.Condition("AbleToScale")->last_transition_time, "T1");
  // A failed apply flips AbleToScale: a core change, stamped now; the others keep theirs.
  d.action = Action::kFailed;
  d.action_detail = "HTTP 409";
  const AiScalerStatus third = BuildStatus(in, &second, "T3");
  EXPECT_FALSE(third.SameCore(second));
  EXPECT_EQ(third.Condition("AbleToScale")->last_transition_time, "T3");
  EXPECT_EQ(third.Condition("ScalingActive")->last_transition_time, "T1");
}

// ScalingLimited reads decide::Constraints' own words: this fails if they change.
TEST(AiScalerStatus, ConstraintPhrasesAreTheOnesConstraintsWrites) {
  decide::ConstraintsConfig cc;
  cc.min_replicas = 2;
  cc.max_replicas = 5;
  const decide::Constraints k(cc);
  EXPECT_NE(k.Constrain(9, 3, std::nullopt).reason.find("capped at max_replicas"),
            std::string::npos);
  EXPECT_NE(k.Constrain(1, 3, std::nullopt).reason.find("raised to min_replicas"),
            std::string::npos);
  EXPECT_NE(k.Constrain(5, 3, 4).reason.find("cluster can host"), std::string::npos);
}

TEST(AiScalerStatus, KubeTime) {
  EXPECT_EQ(FormatKubeTime(WallTime{}), "");
  EXPECT_EQ(
      FormatKubeTime(WallTime(std::chrono::seconds(1796119200) + std::chrono::milliseconds(7))),
      "2026-12-01T10:00:00Z");
}

}  // namespace
}  // namespace aiscale::act
