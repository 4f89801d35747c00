// PoolLoans: the measured life of GPUs lent to elastic workloads, the mean of the last loans,
// with an open loan (or, with none open, the quiet since the last) counted once past that mean.
#include "control/pool_loans.h"

#include <gtest/gtest.h>

namespace aiscale::control {
namespace {

struct Step {
  char op;  // 'o' open, 'c' close, 'd' drop
  std::string workload;
  double t_s;
};

struct Case {
  std::string name;
  std::vector<Step> steps;
  double now_s;
  std::optional<double> want;
};

TEST(PoolLoans, Expected) {
  std::vector<Case> cases = {
      {"nothing measured", {}, 100, std::nullopt},
      {"an open loan alone is no measure", {{'o', "a", 0}}, 1000, std::nullopt},
      {"one loan", {{'o', "a", 10}, {'c', "a", 70}}, 100, 60},
      {"the mean of closed loans",
       {{'o', "a", 0}, {'c', "a", 30}, {'o', "b", 0}, {'c', "b", 90}},
       100,
       60},
      {"an open loan younger than the mean does not count",
       {{'o', "a", 0}, {'c', "a", 60}, {'o', "b", 100}},
       130,
       60},
      {"an open loan older than the mean counts at its age",
       {{'o', "a", 0}, {'c', "a", 60}, {'o', "b", 100}},
       280,
       (60.0 + 180.0) / 2},
      {"reopening keeps the first start",
       {{'o', "a", 0}, {'o', "a", 50}, {'c', "a", 100}},
       200,
       100},
      {"closing what is not open measures nothing", {{'c', "a", 10}}, 20, std::nullopt},
      {"with no loan open, the quiet since the last one ended counts once past the mean",
       {{'o', "a", 0}, {'c', "a", 60}},
       260,
       (60.0 + 200.0) / 2},
      {"a dropped loan is forgotten",
       {{'o', "a", 0}, {'d', "a", 0}, {'c', "a", 500}},
       600,
       std::nullopt},
  };
  cases.push_back({"only the last 8 loans count", {{'o', "a", 0}, {'c', "a", 1000}}, 15, 10});
  for (int i = 0; i < 8; ++i) {  // eight 10 s loans push the 1000 s one out
    cases.back().steps.push_back({'o', "a", 0});
    cases.back().steps.push_back({'c', "a", 10});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PoolLoans loans;
    for (const Step& s : c.steps) {
      if (s.op == 'o') loans.Open(s.workload, s.t_s);
      if (s.op == 'c') loans.Close(s.workload, s.t_s);
      if (s.op == 'd') loans.Drop(s.workload);
    }
    const std::optional<double> got = loans.Expected(c.now_s);
    ASSERT_EQ(got.has_value(), c.want.has_value());
    if (c.want) {
      EXPECT_DOUBLE_EQ(*got, *c.want);
    }
  }
}

TEST(PoolLoans, OneLongLoanMovesTheFigureByItsShareOnly) {
  PoolLoans loans;
  for (int i = 0; i < 7; ++i) {
    loans.Open("a", 0);
    loans.Close("a", 60);
  }
  loans.Open("a", 0);
  loans.Close("a", 60 + 8 * 600);  // one loan held ten minutes longer than the rest
  EXPECT_DOUBLE_EQ(*loans.Expected(0), 660);
  EXPECT_FALSE(loans.IsOpen("a"));
}

}  // namespace
}  // namespace aiscale::control
