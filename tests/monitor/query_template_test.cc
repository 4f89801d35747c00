#include "monitor/query_template.h"

#include <gtest/gtest.h>

namespace aiscale::monitor {
namespace {

WorkloadRef Ref(std::string ns, std::string name) {
  return WorkloadRef{"Deployment", std::move(ns), std::move(name)};
}

TEST(QueryTemplate, Expands) {
  struct Case {
    std::string name;
    std::string tmpl;
    WorkloadRef ref;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"no placeholders", "sum(up)", Ref("ns", "w"), "sum(up)"},
      {"both placeholders",
       R"(sum by (pod) (rate(vllm:request_success_total{namespace="{namespace}",deployment="{workload}"}[1m])))",
       Ref("serving", "llm"),
       R"(sum by (pod) (rate(vllm:request_success_total{namespace="serving",deployment="llm"}[1m])))"},
      {"twice", R"(a{x="{workload}"} / b{y="{workload}"})", Ref("", "w"), R"(a{x="w"} / b{y="w"})"},
      {"quote and backslash escaped", R"(a{x="{workload}"})", Ref("", R"(q"b\s)"),
       R"(a{x="q\"b\\s"})"},
      {"newline escaped", R"(a{x="{workload}"})", Ref("", "a\nb"), R"(a{x="a\nb"})"},
      {"single quotes", R"(a{x='{workload}'})", Ref("", "it's"), R"(a{x='it\'s'})"},
      {"double quote inside single quotes kept", R"(a{x='{workload}'})", Ref("", R"(a"b)"),
       R"(a{x='a"b'})"},
      {"regex matcher escapes dots and dashes stay", R"(a{pod=~"{workload}-.*"})",
       Ref("", "llm.v2-x"), R"(a{pod=~"llm\\.v2-x-.*"})"},
      {"negative regex matcher", R"(a{pod!~"{workload}"})", Ref("", "a+b"), R"(a{pod!~"a\\+b"})"},
      {"not-equal matcher is literal", R"(a{pod!="{workload}"})", Ref("", "a.b"),
       R"(a{pod!="a.b"})"},
      {"raw string", "a{x=`{workload}`}", Ref("", R"(a\b)"), R"(a{x=`a\b`})"},
      {"outside a literal: verbatim", "a_{workload}", Ref("", "x"), "a_x"},
      {"escaped quote does not end the literal", R"(a{x="\"{workload}"})", Ref("", "w\""),
       R"(a{x="\"w\""})"},
      {"empty namespace", R"(a{ns="{namespace}"})", Ref("", "w"), R"(a{ns=""})"},
      {"comment: quotes and placeholders left alone",
       "a{x=\"{workload}\"} # don't {workload}\n+ b{y='{namespace}'}", Ref("n", "w"),
       "a{x=\"w\"} # don't {workload}\n+ b{y='n'}"},
      {"label_replace argument", R"(label_replace(up, "dst", "{workload}", "", ""))",
       Ref("", "a.b"), R"(label_replace(up, "dst", "a.b", "", ""))"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::string> got = ExpandTemplate(c.tmpl, c.ref);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(QueryTemplate, RawStringCannotHoldABacktick) {
  Result<std::string> got = ExpandTemplate("a{x=`{workload}`}", Ref("", "a`b"));
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(got.status().IsInvalid());
}

TEST(QueryTemplate, Escapes) {
  EXPECT_EQ(EscapeRegex("llm.v2-x"), R"(llm\.v2-x)");
  EXPECT_EQ(EscapeRegex(R"(\.+*?()|[]{}^$)"), R"(\\\.\+\*\?\(\)\|\[\]\{\}\^\$)");
  EXPECT_EQ(EscapeRegex("plain-name_1"), "plain-name_1");
  EXPECT_EQ(EscapePromString(R"(a"b\c)"), R"(a\"b\\c)");
  EXPECT_EQ(EscapePromString("tab\there"), R"(tab\there)");
  EXPECT_EQ(EscapePromString(std::string("nul\x01", 4)), R"(nul\x01)");
  EXPECT_EQ(EscapePromString("it's", '\''), R"(it\'s)");
  EXPECT_TRUE(HasPlaceholders("a{x=\"{namespace}\"}"));
  EXPECT_FALSE(HasPlaceholders("a{x=\"workload\"}"));
}

TEST(QueryTemplate, DetectsBatchableTemplates) {
  struct Case {
    std::string name;
    std::string tmpl;
    bool batchable;
    std::string label;
  };
  const std::vector<Case> cases = {
      {"equality matcher", R"(sum by (pod, deployment) (x{deployment="{workload}"}))", true,
       "deployment"},
      {"spaces around =", R"(x{ deployment = "{workload}" })", true, "deployment"},
      {"with namespace", R"(x{namespace="{namespace}", app="{workload}"})", true, "app"},
      {"single quotes", R"(x{app='{workload}'})", true, "app"},
      {"placeholder in a comment does not count", "x{app=\"{workload}\"} # by {workload}", true,
       "app"},
      {"no placeholder", "sum(up)", false, ""},
      {"regex matcher", R"(x{pod=~"{workload}-.*"})", false, ""},
      {"not-equal matcher", R"(x{app!="{workload}"})", false, ""},
      {"literal holds more", R"(x{app="{workload}-svc"})", false, ""},
      {"prefix in literal", R"(x{app="svc-{workload}"})", false, ""},
      {"twice", R"(a{app="{workload}"} / b{app="{workload}"})", false, ""},
      {"not a matcher", R"(label_replace(up, "dst", "{workload}", "", ""))", false, ""},
      {"raw string", "x{app=`{workload}`}", false, ""},
      {"outside a literal", "x_{workload}", false, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<BatchPlan> plan = PlanBatch(c.tmpl, Ref("ns", "w"));
    ASSERT_EQ(plan.has_value(), c.batchable);
    if (plan) {
      EXPECT_EQ(plan->label, c.label);
    }
  }
}

TEST(QueryTemplate, BatchQuerySelectsEveryNameExactly) {
  const std::string tmpl =
      R"(sum by (pod, deployment) (rate(x{namespace="{namespace}",deployment="{workload}"}[1m])))";
  std::optional<BatchPlan> plan = PlanBatch(tmpl, Ref("serving", "ignored"));
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(
      plan->Query({"llm-a", "llm.b", "c+d"}),
      R"(sum by (pod, deployment) (rate(x{namespace="serving",deployment=~"llm-a|llm\\.b|c\\+d"}[1m])))");
  // The same template in another namespace must not share a request.
  std::optional<BatchPlan> other = PlanBatch(tmpl, Ref("prod", "x"));
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(plan->Key(), other->Key());
  EXPECT_EQ(plan->Key(), PlanBatch(tmpl, Ref("serving", "y"))->Key());
}

TEST(QueryTemplate, ChunksNamesByRegexBytes) {
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back("w" + std::to_string(1000 + i));  // 5 bytes
  const auto chunks = ChunkNames(names, 60);  // 10 names of 5 bytes + '|' per chunk
  ASSERT_EQ(chunks.size(), 10u);
  size_t total = 0;
  for (const auto& c : chunks) {
    EXPECT_EQ(c.size(), 10u);
    total += c.size();
  }
  EXPECT_EQ(total, names.size());
  EXPECT_EQ(chunks[1].front(), "w1010");
  // A name longer than the cap still goes out, alone.
  const auto big = ChunkNames({"a", std::string(100, 'x'), "b"}, 10);
  ASSERT_EQ(big.size(), 3u);
  EXPECT_EQ(big[1].front().size(), 100u);
  EXPECT_TRUE(ChunkNames({}, 10).empty());
}

}  // namespace
}  // namespace aiscale::monitor
