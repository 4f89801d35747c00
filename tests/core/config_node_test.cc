#include "core/config/config_node.h"

#include <gtest/gtest.h>

namespace aiscale::config {
namespace {

TEST(ConfigNode, ReportsFileLineColumnAndPath) {
  struct Case {
    const char* name;
    const char* yaml;
    std::string want;  // substring of the first error
  };
  const std::vector<Case> cases = {
      {"unknown field", "apiVersion: aiscale.dev/v1alpha1\nkind: Scenario\nspec:\n  bogus: 1\n",
       "x.yaml:4:3: spec.bogus: unknown field 'bogus'"},
      {"wrong type", "apiVersion: aiscale.dev/v1alpha1\nkind: Scenario\nspec:\n  cooldown: abc\n",
       "x.yaml:4:13: spec.cooldown: must be a duration"},
      {"negative", "apiVersion: aiscale.dev/v1alpha1\nkind: Scenario\nspec:\n  cooldown: -5\n",
       "x.yaml:4:13: spec.cooldown: must be >= 0, got -5"},
      {"syntax", "apiVersion: [\n", "x.yaml:2:1: YAML syntax"},
      {"bad api", "apiVersion: v1\nkind: Scenario\nspec: {}\n",
       "x.yaml:1:13: apiVersion: must be aiscale.dev/v1alpha1"},
      {"bad kind", "apiVersion: aiscale.dev/v1alpha1\nkind: Nope\nspec: {}\n",
       "x.yaml:2:7: kind: must be one of Scenario"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ConfigErrors errs;
    ConfigNode root = ParseConfig(c.yaml, "x.yaml", errs);
    CheckHeader(root, {"Scenario"});
    ConfigNode spec = root.Child("spec");
    spec.CheckKnown({"cooldown"});
    spec.DurationSeconds("cooldown", 3600, AtLeast(0));
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs.all()[0].ToString().find(c.want), std::string::npos) << errs.all()[0].ToString();
  }
}

TEST(ConfigNode, DurationsAndDefaults) {
  ConfigErrors errs;
  ConfigNode n = ParseConfig("a: 90\nb: 5m\nc: 2h\nd: 500ms\n", "d.yaml", errs);
  EXPECT_EQ(n.DurationSeconds("a", 0), 90);
  EXPECT_EQ(n.DurationSeconds("b", 0), 300);
  EXPECT_EQ(n.DurationSeconds("c", 0), 7200);
  EXPECT_DOUBLE_EQ(n.DurationSeconds("d", 0), 0.5);
  EXPECT_EQ(n.DurationSeconds("absent", 42), 42);
  EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
}

}  // namespace
}  // namespace aiscale::config

namespace aiscale::config {
namespace {

TEST(ConfigNode, AbsentChildrenAreSafeAndLocatedAtTheirParent) {
  ConfigErrors errs;
  ConfigNode root = ParseConfig("spec:\n  cluster: {}\n", "c.yaml", errs);
  ConfigNode deep = root.Child("spec").Child("missing").Child("deeper");
  EXPECT_FALSE(deep.IsDefined());
  EXPECT_FALSE(deep.IsMap());
  EXPECT_FALSE(deep.Has("x"));
  EXPECT_EQ(deep.Number("x", 7), 7);
  EXPECT_TRUE(deep.Items().empty());
  deep.Error("needed here");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs.all()[0].ToString(), "c.yaml:2:3: spec.missing.deeper: needed here");
}

}  // namespace
}  // namespace aiscale::config

namespace aiscale::config {
namespace {

// A field read by two checks (the workload spec and its constraints) reports its error once;
// distinct errors, even on the same line, are all kept.
TEST(ConfigErrors, AnErrorIsReportedOnceEvenWhenAFieldIsReadTwice) {
  ConfigErrors errs;
  ConfigNode root = ParseConfig("max_replicas: 0\nmin_replicas: 0\n", "w.yaml", errs);
  for (int read = 0; read < 2; ++read) root.Int("max_replicas", 1, AtLeast(1));
  root.Int("min_replicas", 1, AtLeast(1));
  root.Child("max_replicas").Error("another problem");
  ASSERT_EQ(errs.size(), 3u) << errs.ToStatus().message();
  EXPECT_NE(errs.all()[0].ToString().find("w.yaml:1:15: max_replicas: must be >= 1"),
            std::string::npos)
      << errs.all()[0].ToString();
  EXPECT_NE(errs.all()[1].ToString().find("min_replicas"), std::string::npos);
  EXPECT_NE(errs.all()[2].ToString().find("another problem"), std::string::npos);
}

// Errors are told apart by every field: one that differs from another in a single field is
// kept beside it, and an exact repeat is dropped, however many there are (the check is by hash).
TEST(ConfigErrors, ErrorsDifferingInAnyOneFieldAreAllKept) {
  const ConfigError base{"a.yaml", 3, 7, "spec.x", "must be >= 1"};
  struct Row {
    const char* what;
    ConfigError other;
  };
  const Row rows[] = {
      {"file", {"b.yaml", 3, 7, "spec.x", "must be >= 1"}},
      {"line", {"a.yaml", 4, 7, "spec.x", "must be >= 1"}},
      {"column", {"a.yaml", 3, 8, "spec.x", "must be >= 1"}},
      {"path", {"a.yaml", 3, 7, "spec.y", "must be >= 1"}},
      {"message", {"a.yaml", 3, 7, "spec.x", "must be >= 2"}},
  };
  for (const Row& r : rows) {
    ConfigErrors errs;
    errs.Add(base);
    errs.Add(r.other);
    errs.Add(base);
    errs.Add(r.other);
    EXPECT_EQ(errs.size(), 2u) << r.what;
  }
  ConfigErrors many;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 20000; ++i) {
      many.Add({"a.yaml", i / 4 + 1, i % 4 + 1, "spec.w[" + std::to_string(i) + "]", "bad"});
    }
  }
  ASSERT_EQ(many.size(), 20000u);
  EXPECT_EQ(many.all()[19999].path, "spec.w[19999]");
}

}  // namespace
}  // namespace aiscale::config
