#include "core/numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/time.h"
#include "core/utf8.h"

namespace aiscale {
namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Numeric, SecondsToNanosSaturatesInsteadOfWrapping) {
  struct Case {
    std::string name;
    double seconds;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"zero", 0, 0},
      {"one second", 1, 1'000'000'000},
      {"truncates toward zero like the cast it replaced", 1.9e-9, 1},
      {"negative", -2.5, -2'500'000'000},
      {"1e10 s is past int64 ns", 1e10, kI64Max},
      {"-1e10 s", -1e10, kI64Min},
      {"1e308", 1e308, kI64Max},
      {"+inf", kInf, kI64Max},
      {"-inf", -kInf, kI64Min},
      {"NaN is no time", kNaN, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(SaturatingNanos(c.seconds), c.want);
    EXPECT_EQ(Seconds(c.seconds).count(), c.want);  // core/time.h goes through it
  }
}

TEST(Numeric, CheckedNanosSaysWhy) {
  EXPECT_EQ(*CheckedNanos(1.5, "x"), 1'500'000'000);
  for (double bad : {1e10, -1e10, kInf, kNaN}) {
    SCOPED_TRACE(bad);
    auto r = CheckedNanos(bad, "failure at");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("failure at"), std::string::npos);
    EXPECT_NE(r.status().message().find("int64 nanoseconds"), std::string::npos);
  }
}

TEST(Numeric, DoubleToIntSaturates) {
  struct Case {
    std::string name;
    double v;
    int lo, hi, want;
  };
  const std::vector<Case> cases = {
      {"inside", 7.9, 0, 100, 7},
      {"a need of 1e12 is the most, never 1", 1e12, 0, kMaxReplicaCount, kMaxReplicaCount},
      {"past INT_MAX", 3e9, 0, std::numeric_limits<int>::max(), std::numeric_limits<int>::max()},
      {"below", -5, 0, 10, 0},
      {"+inf", kInf, 1, 10, 10},
      {"-inf", -kInf, 1, 10, 1},
      {"NaN is the floor", kNaN, 2, 10, 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ClampToInt(c.v, c.lo, c.hi), c.want);
  }
}

TEST(Numeric, ReplicaCountCeil) {
  struct Case {
    double need;
    int want;
  };
  const std::vector<Case> cases = {{0, 0},
                                   {0.2, 1},
                                   {3.0000000001, 3},
                                   {3.2, 4},
                                   {1e12, kMaxReplicaCount},
                                   {1e300, kMaxReplicaCount},
                                   {kInf, kMaxReplicaCount},
                                   {kNaN, 0},
                                   {-4, 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.need);
    EXPECT_EQ(ReplicaCountCeil(c.need), c.want);
  }
  EXPECT_EQ(CeilToInt(2.1, 0, 10), 3);
  EXPECT_EQ(CeilToInt(1e20, 0, 10), 10);
}

TEST(Numeric, IntegerArithmeticSaturates) {
  int64_t out = 0;
  EXPECT_TRUE(CheckedAdd(1, 2, &out));
  EXPECT_EQ(out, 3);
  EXPECT_FALSE(CheckedAdd(kI64Max, 1, &out));
  EXPECT_FALSE(CheckedMul(int64_t{1} << 40, int64_t{1} << 40, &out));
  EXPECT_EQ(SaturatingAdd(kI64Max, 5), kI64Max);
  EXPECT_EQ(SaturatingAdd(kI64Min, -5), kI64Min);
  EXPECT_EQ(SaturatingMul(int64_t{30'000'000'000}, 1'000'000'000), kI64Max);
  EXPECT_EQ(SaturatingMul(int64_t{-30'000'000'000}, 1'000'000'000), kI64Min);
  EXPECT_EQ(SaturatingMul(-3, -4), 12);
}

TEST(Numeric, NeverPlusNowStaysNever) {
  const TimePoint now = AtSeconds(1e9);
  EXPECT_EQ(AddSaturating(now, Seconds(1e10)), TimePoint::max());
  EXPECT_EQ(AddSaturating(now, Seconds(5)), AtSeconds(1e9 + 5));
}

TEST(Utf8, ValidAndRepaired) {
  struct Case {
    std::string name;
    std::string text;
    bool valid;
    std::string repaired;
  };
  const std::vector<Case> cases = {
      {"ascii", "chat-13b", true, "chat-13b"},
      {"two-byte", "caf\xc3\xa9", true, "caf\xc3\xa9"},
      {"four-byte", "\xf0\x9f\x9a\x80", true, "\xf0\x9f\x9a\x80"},
      {"stray continuation", "a\x80z", false, "a?z"},
      {"lone lead byte", "\xff", false, "?"},
      {"truncated", "ab\xe2\x82", false, "ab??"},
      {"overlong slash", "\xc0\xaf", false, "??"},
      {"surrogate", "\xed\xa0\x80", false, "???"},
      {"past U+10FFFF", "\xf4\x90\x80\x80", false, "????"},
      // ASCII is checked 8 bytes at a time: bad bytes and sequences at and across the edges.
      {"17 ascii", "spec.workloads[0]", true, "spec.workloads[0]"},
      {"bad byte 8th",
       "abcdefg\xff"
       "hijklmnop",
       false, "abcdefg?hijklmnop"},
      {"bad byte 9th",
       "abcdefgh\xff"
       "ijklmnop",
       false, "abcdefgh?ijklmnop"},
      {"bad byte last of 16", "abcdefghijklmno\xff", false, "abcdefghijklmno?"},
      {"sequence across words",
       "1234567\xc3\xa9"
       "890123456",
       true,
       "1234567\xc3\xa9"
       "890123456"},
      {"truncated at a word edge", "1234567\xe2\x82", false, "1234567??"},
      {"runs of both",
       "\xff"
       "abcdefghij\xfe\xf0\x9f\x9a\x80klmnopqrstuv\x80",
       false, "?abcdefghij?\xf0\x9f\x9a\x80klmnopqrstuv?"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsValidUtf8(c.text), c.valid);
    EXPECT_EQ(ToValidUtf8(c.text), c.repaired);
    EXPECT_TRUE(IsValidUtf8(ToValidUtf8(c.text)));
  }
}

}  // namespace
}  // namespace aiscale
