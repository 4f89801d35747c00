// The Helios loaders: the real VC sequences and quota file (read from ../shared), and a table
// of malformed files written to a temp dir, each error naming file, line and field.
#include "sim/traces/helios_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/fixtures.h"
#include "sim/traces/demand_series.h"

namespace aiscale::sim::traces {
namespace {

std::string Shared(const std::string& rel) { return std::string(AISCALE_SHARED_DIR) + "/" + rel; }

const char kHeader[] = "time,total_gpu_num,running_gpu_num,pending_gpu_num,idle_gpu_num\n";

TEST(HeliosTrace, RealSequenceIsAMonthOfMinutes) {
  auto s = LoadHeliosVcSequence(
      Shared("traces/helios_earth_vc_sequence/vc6YE_cluster_sequence_vc.csv.gz"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->points.size(), 44640u);  // 31 days x 1440 minutes (the README)
  EXPECT_DOUBLE_EQ(s->end_s, 31 * 86400.0);
  EXPECT_TRUE(ValidateDemand(*s, "vc6YE").ok());
}

TEST(HeliosTrace, RealQuotasOfADay) {
  auto q = LoadHeliosQuotas(Shared("traces/helios_earth_vc_sequence/Earth_gpu_number.csv"),
                            "2020-04-01");
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->at("vchbv"), 112);  // the file's first row
  EXPECT_EQ(q->at("vc6YE"), 128);
  EXPECT_EQ(q->count("total"), 0u);
  int64_t sum = 0;
  for (const auto& [vc, gpus] : *q) sum += gpus;
  EXPECT_EQ(sum, 784);
}

class HeliosFiles : public fixtures::TempDirTest {
 protected:
  HeliosFiles() : TempDirTest("helios") {}
};

TEST_F(HeliosFiles, DemandIsRunningPlusPendingAndTheLastRowLastsAMinute) {
  const std::string p =
      Write(fixtures::Gzip(std::string(kHeader) + "2020-05-01 00:00:00,64,10,2,54\n"
                                                  "2020-05-01 00:01:00,64,12,0,52\n"
                                                  "2020-05-01 00:02:00,64,0,5,64\n"));
  auto s = LoadHeliosVcSequence(p);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->points.size(), 3u);
  EXPECT_EQ(s->points[0].gpus, 12);
  EXPECT_EQ(s->points[1].gpus, 12);
  EXPECT_EQ(s->points[2].gpus, 5);
  EXPECT_DOUBLE_EQ(s->points[2].t_s, 120);
  EXPECT_DOUBLE_EQ(s->end_s, 180);
  EXPECT_EQ(s->GpusAt(119.9), 12);
  EXPECT_EQ(s->GpusAt(179), 5);
}

TEST_F(HeliosFiles, BadSequenceRowsNameFileLineAndField) {
  struct Case {
    std::string body;
    std::string want;  // in the message, after the file name
  };
  const std::vector<Case> cases = {
      {"2020-05-01 00:00:00,64,x,0,0\n2020-05-01 00:01:00,64,1,0,0\n", ":2: field running_gpu_num"},
      {"2020-05-01 00:00:00,64,1,0,0\n2020-05-01 00:01:00,64,1,-3,0\n",
       ":3: field pending_gpu_num"},
      {"2020-05-01 00:00:00,64,1,0,0\n2020-05-01 00:00:00,64,1,0,0\n", ":3: field time"},
      {"2020-05-01 00:01:00,64,1,0,0\n2020-05-01 00:00:00,64,1,0,0\n", ":3: field time"},
      {"2020-05-01 00:00:00,64,1,0,0\n2020-13-01 00:01:00,64,1,0,0\n", ":3: field time"},
      {"2020-05-01 00:00:00,64,1\n2020-05-01 00:01:00,64,1,0,0\n", ":2: field pending_gpu_num"},
      {"2020-05-01 00:00:00,64,1,0,0\n", "two rows"},
  };
  for (const Case& c : cases) {
    const std::string p = Write(std::string(kHeader) + c.body);
    SCOPED_TRACE(c.body);
    auto s = LoadHeliosVcSequence(p);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find(p), std::string::npos) << s.status().message();
    EXPECT_NE(s.status().message().find(c.want), std::string::npos) << s.status().message();
  }
  auto missing = LoadHeliosVcSequence(Write("time,running_gpu_num\n2020-05-01 00:00:00,1\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("pending_gpu_num"), std::string::npos);
}

TEST_F(HeliosFiles, BadQuotaRowsNameFileLineAndField) {
  const std::string header = "date,vcA,vcB,total\n";
  struct Case {
    std::string body;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"2020-04-01,8,8,17\n", ":2: field total"},
      {"2020-04-01,8,x,16\n", ":2: field vcB"},
      {"2020-04-02,8,8,16\n2020-04-01,8,8,16\n", ":3: field date"},
      {"2020-04-01,8,8\n", ":2: 3 columns"},
      {"2020-04-02,8,8,16\n", "no row for date 2020-04-01"},
  };
  for (const Case& c : cases) {
    const std::string p = Write(header + c.body);
    SCOPED_TRACE(c.body);
    auto q = LoadHeliosQuotas(p, "2020-04-01");
    ASSERT_FALSE(q.ok());
    EXPECT_NE(q.status().message().find(c.want), std::string::npos) << q.status().message();
  }
  auto good = LoadHeliosQuotas(Write(header + "2020-04-01,8,24,32\n"), "2020-04-01");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_EQ(good->at("vcB"), 24);
}

TEST(DemandSeries, WindowAndValidation) {
  DemandSeries s;
  s.points = {{0, 4}, {60, 8}, {120, 2}};
  s.end_s = 180;
  auto w = DemandWindow(s, 90, 60);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->points.size(), 2u);
  EXPECT_EQ(w->points[0].gpus, 8);
  EXPECT_DOUBLE_EQ(w->points[0].t_s, 0);
  EXPECT_DOUBLE_EQ(w->points[1].t_s, 30);
  EXPECT_DOUBLE_EQ(w->end_s, 60);
  EXPECT_FALSE(DemandWindow(s, 180, 0).ok());
  DemandSeries bad = s;
  bad.points[1].t_s = 0;
  EXPECT_FALSE(ValidateDemand(bad, "x").ok());
  bad = s;
  bad.points[2].gpus = -1;
  EXPECT_FALSE(ValidateDemand(bad, "x").ok());
}

}  // namespace
}  // namespace aiscale::sim::traces
