// The limits every ConfigNode reader applies (docs/limits.md): durations that would wrap int64
// nanoseconds or round to 0 ns, integers past an int, and text that is not UTF-8 are errors
// naming file:line:column and the field, never values passed on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/utf8.h"

namespace aiscale::config {
namespace {

struct Case {
  std::string name;
  std::string yaml;  // one field, `v`
  std::string want;  // substring of the error; empty: no error
};

void RunCases(const std::vector<Case>& cases, void (*read)(const ConfigNode&)) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ConfigErrors errs;
    ConfigNode root = ParseConfig(c.yaml, "l.yaml", errs);
    read(root);
    if (c.want.empty()) {
      EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
      continue;
    }
    ASSERT_FALSE(errs.empty());
    const std::string msg = errs.ToStatus().message();
    EXPECT_NE(msg.find(c.want), std::string::npos) << msg;
    EXPECT_TRUE(IsValidUtf8(msg)) << "an error message must be printable as JSON";
  }
}

TEST(ConfigLimits, Durations) {
  const std::vector<Case> cases = {
      {"an hour", "v: 1h", ""},
      {"zero is allowed", "v: 0", ""},
      {"a microsecond", "v: 0.000001", ""},
      {"100 years", "v: 36500d", ""},
      {"1e10 s wraps int64 ns", "v: 1e10", "l.yaml:1:4: v: must be at most 3.1536e+09 s"},
      {"1e300 s", "v: 1e300s", "must be at most"},
      {"1e9 hours", "v: 1e9h", "must be at most"},
      {"rounds to 0 ns", "v: 1e-10", "l.yaml:1:4: v: must be 0 or at least 1 microsecond"},
      {"0.1 us in ms", "v: 0.0001ms", "at least 1 microsecond"},
      {"infinite", "v: .inf", "must be a duration"},
  };
  RunCases(cases, [](const ConfigNode& n) { n.DurationSeconds("v", 1, AtLeast(0)); });
}

TEST(ConfigLimits, Integers) {
  const std::vector<Case> cases = {
      {"small", "v: 12", ""},
      {"3e9 is past an int", "v: 3000000000", "l.yaml:1:4: v: must be an integer within +/-2e9"},
      {"1e300", "v: 1e300", "within +/-2e9"},
      {"-1e10", "v: -1e10", "within +/-2e9"},
      {"fraction", "v: 1.5", "must be an integer, got '1.5'"},
      {"bounded by the field", "v: 1e9", "must be <= 100000"},
  };
  RunCases(cases, [](const ConfigNode& n) { n.Int("v", 1, Between(-1e12, 100000)); });
}

TEST(ConfigLimits, TextMustBeUtf8) {
  const std::vector<Case> cases = {
      {"ascii", "v: chat", ""},
      {"accented", "v: \"caf\xc3\xa9\"", ""},
      {"invalid byte",
       "v: \"a\xff"
       "b\"",
       "l.yaml:1:4: v: must be valid UTF-8 text"},
      {"overlong", "v: \"\xc0\xaf\"", "must be valid UTF-8 text"},
  };
  RunCases(cases, [](const ConfigNode& n) { n.String("v", ""); });
  RunCases({{"enum reads through String", "v: \"\xff\"", "must be valid UTF-8 text"}},
           [](const ConfigNode& n) {
             n.Enum("v", "a", {"a", "b"});
           });
  RunCases({{"a map key", "v: {\"k\xff\": 1}", "key is not valid UTF-8"}},
           [](const ConfigNode& n) { n.Child("v").Entries(); });
}

}  // namespace
}  // namespace aiscale::config
