#include "decide/text.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

std::string Printf(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// GNum must write exactly what printf's %.Ng writes: the reasons tests and the golden
// decisions compare the text byte for byte.
TEST(TextTest, GNumMatchesPrintf) {
  struct Case {
    const char* name;
    double v;
  };
  const std::vector<Case> cases = {
      {"zero", 0.0},
      {"negative zero", -0.0},
      {"integer", 42.0},
      {"negative integer", -42.0},
      {"whole at the precision", 9999.0},
      {"whole past 4 digits", 12345.0},
      {"whole past 6 digits", 1234567.0},
      {"negative whole past 4 digits", -99999.0},
      {"one", 1.0},
      {"fraction", 0.123456789},
      {"rounds up a digit", 9.99995},
      {"large", 123456789.0},
      {"exponent boundary", 1e6},
      {"small", 1.5e-7},
      {"negative", -3.25},
      {"huge", 1e300},
      {"max", std::numeric_limits<double>::max()},
      {"denormal", std::numeric_limits<double>::denorm_min()},
      {"infinity", std::numeric_limits<double>::infinity()},
      {"minus infinity", -std::numeric_limits<double>::infinity()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(StrCat(GNum{c.v, 4}), Printf("%.4g", c.v));
    EXPECT_EQ(StrCat(GNum{c.v, 6}), Printf("%.6g", c.v));
    EXPECT_EQ(StrCat(GNum{c.v, 17}), Printf("%.17g", c.v));
  }
}

TEST(TextTest, NanIsWrittenAsPrintfDoes) {
  // printf's sign of a NaN follows its bit; the policies only ever see the positive one.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(StrCat(GNum{nan, 4}), Printf("%.4g", nan));
}

TEST(TextTest, IntegersMatchToString) {
  struct Case {
    const char* name;
    int64_t v;
  };
  const std::vector<Case> cases = {
      {"zero", 0},
      {"negative", -17},
      {"int max", std::numeric_limits<int>::max()},
      {"int64 min", std::numeric_limits<int64_t>::min()},
      {"int64 max", std::numeric_limits<int64_t>::max()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(StrCat(c.v), std::to_string(c.v));
    if (c.v >= std::numeric_limits<int>::min() && c.v <= std::numeric_limits<int>::max()) {
      EXPECT_EQ(StrCat(static_cast<int>(c.v)), std::to_string(static_cast<int>(c.v)));
    }
  }
  EXPECT_EQ(StrCat(size_t{18446744073709551615u}), "18446744073709551615");
}

TEST(TextTest, PiecesAreJoinedInOrder) {
  const std::string signal = "concurrency";
  const std::string_view rule = "ratio";
  EXPECT_EQ(StrCat(signal, " (", rule, ") ", 3, " -> ", GNum{1.25, 4}, ""),
            "concurrency (ratio) 3 -> 1.25");
  EXPECT_EQ(StrCat(), "");
}

TEST(TextTest, StrAppendKeepsWhatIsThere) {
  std::string s = "desired 3";
  StrAppend(s, "; held at ", 4, " by the ", GNum{300, 4}, " s window");
  EXPECT_EQ(s, "desired 3; held at 4 by the 300 s window");
  StrAppend(s);
  EXPECT_EQ(s, "desired 3; held at 4 by the 300 s window");
  // Growing one piece at a time keeps every earlier piece.
  std::string grown;
  for (int i = 0; i < 100; ++i) StrAppend(grown, i, ",");
  EXPECT_EQ(grown.substr(0, 8), "0,1,2,3,");
  EXPECT_EQ(grown.size(), 10u * 2 + 90u * 3);
}

}  // namespace
}  // namespace aiscale::decide
