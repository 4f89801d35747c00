// OracleStatement: what a ratio to the oracle is measured against, in one sentence.
#include "sim/oracle_statement.h"

#include <gtest/gtest.h>

namespace aiscale::sim {
namespace {

TEST(OracleStatement, SaysBothBoundsItsAttainmentAndFeasibility) {
  struct Case {
    std::string name;
    nlohmann::json run;
    std::vector<std::string> has;
  };
  const nlohmann::json base = {{"requests", 8819},
                               {"oracle_gpu_hours", 15.49},
                               {"oracle_interval_gpu_hours", 15.49},
                               {"oracle_work_gpu_hours", 2.65},
                               {"oracle_attainment", 0.991},
                               {"oracle_feasible", true},
                               {"oracle_unservable", 19}};
  nlohmann::json out_of_reach = base;
  out_of_reach["oracle_feasible"] = false;
  out_of_reach["oracle_unservable"] = 200;
  const std::vector<Case> cases = {
      {"feasible",
       base,
       {"15.49 GPU-hours = max(interval bound 15.49, work bound 2.65)", "serves 0.9910",
        "the target is feasible (19 of 8819 requests miss it at any size)"}},
      {"out of reach", out_of_reach, {"out of reach for any policy (200 of 8819"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string s = OracleStatement(c.run);
    for (const auto& h : c.has) EXPECT_NE(s.find(h), std::string::npos) << s;
  }
  EXPECT_EQ(OracleStatement(nlohmann::json{{"gpu_hours", 1}}), "");
  EXPECT_EQ(OracleStatement(nlohmann::json::array()), "");
}

}  // namespace
}  // namespace aiscale::sim
