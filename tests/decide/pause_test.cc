// Pause and pin annotations: how each is read (and what a bad value says), and what each does
// to a constrained size, on top of min/max.
#include "decide/pause.h"

#include <gtest/gtest.h>

#include <map>

#include "decide/constraints.h"

namespace aiscale::decide {
namespace {

using Annotations = std::map<std::string, std::string>;

Result<PauseSpec> Parse(const Annotations& a) {
  return ParsePauseAnnotations([&](const std::string& k) -> std::optional<std::string> {
    auto it = a.find(k);
    return it == a.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

TEST(PauseAnnotations, ReadsEachAndRefusesBadValues) {
  struct Case {
    const char* name;
    Annotations annotations;
    std::string want_summary;  // "" with want_error empty: no hold
    std::string want_error;    // a piece of the error message
  };
  const std::vector<Case> cases = {
      {"none", {}, "", ""},
      {"paused", {{"aiscale.dev/paused", "true"}}, "paused", ""},
      {"paused false", {{"aiscale.dev/paused", "false"}}, "", ""},
      {"scale-down", {{"aiscale.dev/paused-scale-down", "true"}}, "scale-down paused", ""},
      {"scale-up", {{"aiscale.dev/paused-scale-up", "true"}}, "scale-up paused", ""},
      {"both directions",
       {{"aiscale.dev/paused-scale-down", "true"}, {"aiscale.dev/paused-scale-up", "true"}},
       "scale-down and scale-up paused",
       ""},
      {"pin", {{"aiscale.dev/paused-replicas", "3"}}, "pinned at 3", ""},
      {"pin zero", {{"aiscale.dev/paused-replicas", "0"}}, "pinned at 0", ""},
      {"pin wins",
       {{"aiscale.dev/paused", "true"}, {"aiscale.dev/paused-replicas", "2"}},
       "pinned at 2",
       ""},
      {"other annotations ignored", {{"autoscaling.keda.sh/paused", "true"}}, "", ""},
      {"yes is not true", {{"aiscale.dev/paused", "yes"}}, "", "aiscale.dev/paused: must be"},
      {"empty flag", {{"aiscale.dev/paused-scale-up", ""}}, "", "paused-scale-up"},
      {"negative pin", {{"aiscale.dev/paused-replicas", "-1"}}, "", "whole number"},
      {"fraction pin", {{"aiscale.dev/paused-replicas", "2.5"}}, "", "whole number"},
      {"huge pin", {{"aiscale.dev/paused-replicas", "99999999"}}, "", "whole number"},
      {"long value shortened", {{"aiscale.dev/paused", std::string(1 << 20, 'x')}}, "", "..."},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<PauseSpec> p = Parse(c.annotations);
    if (!c.want_error.empty()) {
      ASSERT_FALSE(p.ok());
      EXPECT_TRUE(p.status().IsInvalid());
      EXPECT_NE(p.status().message().find(c.want_error), std::string::npos) << p.status().message();
      EXPECT_LT(p.status().message().size(), 200u);
      continue;
    }
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->Summary(), c.want_summary);
    EXPECT_EQ(p->any(), !c.want_summary.empty());
  }
}

TEST(PausedConstraints, HoldsAfterMinAndMax) {
  ConstraintsConfig cc;
  cc.min_replicas = 2;
  cc.max_replicas = 10;
  const auto inner = std::make_shared<const Constraints>(cc);
  struct Case {
    const char* name;
    Annotations annotations;
    int desired, current;
    int want;
    std::string want_reason;  // a piece of it; "" when no hold applies
  };
  const std::vector<Case> cases = {
      {"no hold", {}, 6, 4, 6, ""},
      {"paused holds an up", {{"aiscale.dev/paused", "true"}}, 6, 4, 4, "paused by annotation"},
      {"paused holds a down", {{"aiscale.dev/paused", "true"}}, 3, 4, 4, "(would be 3)"},
      {"scale-down paused holds a down",
       {{"aiscale.dev/paused-scale-down", "true"}},
       3,
       4,
       4,
       "scale-down paused"},
      {"scale-down paused lets an up", {{"aiscale.dev/paused-scale-down", "true"}}, 6, 4, 6, ""},
      {"scale-up paused holds an up",
       {{"aiscale.dev/paused-scale-up", "true"}},
       6,
       4,
       4,
       "scale-up paused"},
      {"scale-up paused lets a down", {{"aiscale.dev/paused-scale-up", "true"}}, 3, 4, 3, ""},
      {"pin", {{"aiscale.dev/paused-replicas", "5"}}, 9, 4, 5, "pinned at 5 replicas"},
      {"pin below min is kept", {{"aiscale.dev/paused-replicas", "0"}}, 9, 4, 0, "(would be 9)"},
      {"min still binds first",
       {{"aiscale.dev/paused-scale-down", "true"}},
       1,
       1,
       2,
       "min_replicas"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<PauseSpec> p = Parse(c.annotations);
    ASSERT_TRUE(p.ok());
    const PausedConstraints pc(inner, *p);
    const ConstrainResult r = pc.Constrain(c.desired, c.current, std::nullopt);
    EXPECT_EQ(r.desired, c.want);
    if (c.want_reason.empty()) {
      EXPECT_EQ(r.reason.find("paused"), std::string::npos) << r.reason;
      EXPECT_EQ(r.reason.find("pinned"), std::string::npos) << r.reason;
    } else {
      EXPECT_NE(r.reason.find(c.want_reason), std::string::npos) << r.reason;
    }
  }
}

TEST(PausedConstraints, WorksWithoutInnerConstraints) {
  PauseSpec p;
  p.paused = true;
  p.source = "test";
  const PausedConstraints pc(nullptr, p);
  EXPECT_EQ(pc.Constrain(7, 3, 5).desired, 3);
}

}  // namespace
}  // namespace aiscale::decide
