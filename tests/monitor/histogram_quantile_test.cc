#include "monitor/histogram_quantile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace aiscale::monitor {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void ExpectSame(double got, double want) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << got;
  } else {
    EXPECT_DOUBLE_EQ(got, want);
  }
}

TEST(HistogramQuantile, LikePromQL) {
  struct Case {
    std::string name;
    double q;
    std::vector<Bucket> buckets;
    double want;
  };
  // The prometheus docs' example histogram: 144320 observations.
  const std::vector<Bucket> docs = {{0.05, 24054}, {0.1, 33444}, {0.2, 100392},
                                    {0.5, 129389}, {1, 133988},  {kInf, 144320}};
  const std::vector<Case> cases = {
      // rank 72160 falls in (0.1, 0.2]: 0.1 + 0.1 * (72160-33444)/(100392-33444).
      {"median, interpolated", 0.5, docs, 0.1 + 0.1 * (72160.0 - 33444) / (100392.0 - 33444)},
      // rank 0.99*144320 = 142876.8 > 133988: in the +Inf bucket -> second-highest bound.
      {"p99 in the +Inf bucket", 0.99, docs, 1},
      {"lowest bucket from 0", 0.1, {{1, 10}, {2, 20}, {kInf, 20}}, 0.2},
      {"lowest bound <= 0 returned as is", 0.1, {{-1, 10}, {2, 20}, {kInf, 20}}, -1},
      {"unsorted input", 0.5, {{kInf, 20}, {2, 20}, {1, 10}}, 1},
      {"equal bounds merged", 0.5, {{1, 5}, {1, 5}, {2, 20}, {kInf, 20}}, 1},
      {"monotonicity forced", 0.75, {{1, 10}, {2, 8}, {3, 20}, {kInf, 20}}, 2.5},
      {"only +Inf bucket", 0.5, {{kInf, 10}}, kNaN},
      {"+Inf bucket takes everything", 0.5, {{1, 0}, {kInf, 10}}, 1},
      {"no +Inf bucket", 0.5, {{1, 5}, {2, 10}}, kNaN},
      {"no observations", 0.5, {{1, 0}, {kInf, 0}}, kNaN},
      {"empty", 0.5, {}, kNaN},
      {"q < 0", -0.1, docs, -kInf},
      {"q > 1", 1.1, docs, kInf},
      {"q NaN", kNaN, docs, kNaN},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExpectSame(HistogramQuantile(c.q, c.buckets), c.want);
  }
}

TEST(CounterIncrease, HandlesResets) {
  struct Case {
    std::string name;
    std::vector<double> values;
    double want;
  };
  const std::vector<Case> cases = {
      {"steady", {10, 15, 30}, 20},
      {"reset: the new value is the increase", {100, 5}, 5},
      {"reset mid-window", {10, 40, 3, 8}, 30 + 3 + 5},
      {"reset to zero", {10, 0}, 0},
      {"flat", {7, 7}, 0},
      {"NaN reading skipped", {10, kNaN, 16}, 6},
      {"one reading: no value", {10}, kNaN},
      {"none", {}, kNaN},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExpectSame(CounterIncrease(c.values), c.want);
  }
}

}  // namespace
}  // namespace aiscale::monitor
