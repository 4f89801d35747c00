// ParseStrictJson: what the plain parser silently accepts (a repeated key, absurd nesting)
// is an error naming the key and where it is; everything else parses as before.
#include "core/strict_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aiscale {
namespace {

TEST(StrictJson, Table) {
  struct Case {
    std::string name, text;
    std::string want;  // empty: parses
  };
  const std::vector<Case> cases = {
      {"plain object", R"({"a": 1, "b": [1, {"c": 2}]})", ""},
      {"same key in two objects", R"({"a": {"x": 1}, "b": {"x": 2}})", ""},
      {"duplicate at top", R"({"a": 1, "a": 2})", "duplicate key 'a' in the object at top level"},
      {"duplicate nested", R"({"cases": [{"n": 1}, {"n": 2, "min": 1, "min": 3}]})",
       "duplicate key 'min' in the object at cases[1]"},
      {"duplicate deeper", R"({"a": {"b": {"k": 1, "k": 1}}})",
       "duplicate key 'k' in the object at a.b"},
      {"syntax error", R"({"a": )", "not valid JSON"},
      {"number past double", R"({"a": 1e999})", "not valid JSON"},
      {"100k open brackets", std::string(100000, '['), "nested deeper than 64 levels"},
      {"100k open braces",
       [] {
         std::string s;
         for (int i = 0; i < 100000; ++i) s += "{\"a\":";
         return s;
       }(),
       "nested deeper than 64 levels"},
      {"64 levels", std::string(64, '[') + std::string(64, ']'), ""},
      {"65 levels", std::string(65, '[') + std::string(65, ']'), "nested deeper than 64"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParseStrictJson(c.text);
    if (c.want.empty()) {
      EXPECT_TRUE(r.ok()) << r.status().message();
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_TRUE(r.status().IsInvalid());
      EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
    }
  }
}

TEST(StrictJson, ValuesAreKept) {
  auto r = ParseStrictJson(R"({"a": [1, 2.5, "x"], "b": null})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["a"][1].get<double>(), 2.5);
  EXPECT_TRUE((*r)["b"].is_null());
}

}  // namespace
}  // namespace aiscale
