#include "monitor/scrape_eval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "monitor/testdata_util.h"

namespace aiscale::monitor {
namespace {

// A history of scrapes, one text each, `step_s` apart starting at t = 100 s.
std::vector<Scrape> History(const std::vector<std::string>& texts, double step_s = 30) {
  std::vector<Scrape> out;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto e = ParseExposition(texts[i], ExpositionFormat::kPrometheusText);
    EXPECT_TRUE(e.ok()) << e.status().message();
    if (!e.ok()) std::abort();
    out.push_back(Scrape{AtSeconds(100 + step_s * static_cast<double>(i)),
                         std::make_shared<const Exposition>(std::move(e).value())});
  }
  return out;
}

Selector Sel(const std::string& expr) {
  auto s = ParseSelector(expr);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Selector{};
}

struct Want {
  std::string label;  // "k=v" identifying the point; empty for an aggregated one
  double value;
};

void ExpectPoints(const Result<std::vector<SeriesPoint>>& got, const std::vector<Want>& want) {
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    std::string id;
    for (const auto& [k, v] : (*got)[i].labels) {
      if (want[i].label == k + "=" + v) id = want[i].label;
    }
    EXPECT_EQ(id, want[i].label) << "point " << i;
    if (std::isnan(want[i].value)) {
      EXPECT_TRUE(std::isnan((*got)[i].value));
    } else {
      EXPECT_NEAR((*got)[i].value, want[i].value, 1e-9) << want[i].label;
    }
  }
}

TEST(ScrapeEval, Selectors) {
  const std::string g1 = "# TYPE g gauge\ng{gpu=\"0\"} 3\ng{gpu=\"1\"} 5\ng{gpu=\"2\"} NaN\n";
  const std::string c1 = "# TYPE c_total counter\nc_total{r=\"a\"} 100\nc_total{r=\"b\"} 10\n";
  const std::string c2 =
      "# TYPE c_total counter\nc_total{r=\"a\"} 160\nc_total{r=\"b\"} 4\n"
      "c_total{r=\"new\"} 50\n";
  const std::string h1 =
      "# TYPE h histogram\nh_bucket{s=\"x\",le=\"1\"} 10\nh_bucket{s=\"x\",le=\"2\"} 20\n"
      "h_bucket{s=\"x\",le=\"+Inf\"} 20\nh_bucket{s=\"y\",le=\"1\"} 0\n"
      "h_bucket{s=\"y\",le=\"2\"} 0\nh_bucket{s=\"y\",le=\"+Inf\"} 0\n";
  // Window: x got 10 more <= 1 and 10 more in (1, 2]; y got 20 in (1, 2].
  const std::string h2 =
      "# TYPE h histogram\nh_bucket{s=\"x\",le=\"1\"} 20\nh_bucket{s=\"x\",le=\"2\"} 40\n"
      "h_bucket{s=\"x\",le=\"+Inf\"} 40\nh_bucket{s=\"y\",le=\"1\"} 0\n"
      "h_bucket{s=\"y\",le=\"2\"} 20\nh_bucket{s=\"y\",le=\"+Inf\"} 20\n";
  const double kNaN = std::nan("");
  struct Case {
    std::string name;
    std::string expr;
    std::vector<std::string> scrapes;
    std::vector<Want> want;
  };
  const std::vector<Case> cases = {
      {"gauges as read, NaN passed through",
       "g",
       {g1},
       {{"gpu=0", 3}, {"gpu=1", 5}, {"gpu=2", kNaN}}},
      {"equality matcher", "g{gpu=\"1\"}", {g1}, {{"gpu=1", 5}}},
      {"sum", "sum(g{gpu=\"0\"})", {g1}, {{"", 3}}},
      {"max skips NaN", "max(g)", {g1}, {{"", 5}}},
      {"counter: no rate on the first scrape", "c_total", {c1}, {}},
      // a: +60 in 30 s; b: reset, 4 since -> 4/30; new: first seen -> no value yet.
      {"counter rate with reset", "c_total", {c1, c2}, {{"r=a", 2}, {"r=b", 4.0 / 30}}},
      {"counter by family name without _total", "c", {c1, c2}, {{"r=a", 2}, {"r=b", 4.0 / 30}}},
      {"summed rate", "sum(c_total)", {c1, c2}, {{"", 2 + 4.0 / 30}}},
      {"histogram: no quantile on the first scrape", "h", {h1}, {}},
      // x window: 10 <= 1, 20 <= 2 -> p50 rank 10 -> 1.0; y window: 20 in (1, 2] -> 1.5.
      {"histogram p50 per series",
       "histogram_quantile(0.5, h)",
       {h1, h2},
       {{"s=x", 1}, {"s=y", 1.5}}},
      // merged: 10 <= 1, 40 <= 2 -> p50 rank 20 -> 1 + (20-10)/30 = 1.333...
      {"histogram merged by le",
       "histogram_quantile(0.5, sum(h))",
       {h1, h2},
       {{"", 1 + 10.0 / 30}}},
      {"histogram over an empty window is NaN", "h", {h1, h1}, {{"s=x", kNaN}, {"s=y", kNaN}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto history = History(c.scrapes);
    ExpectPoints(EvaluateSelector(Sel(c.expr), history), c.want);
  }
}

TEST(ScrapeEval, RateOverSeveralScrapesUsesTheWholeWindow) {
  // Readings 100, 130, 10 (a reset), 40: increase 30 + 10 + 30 over 30 s.
  auto history = History({"c_total 100\n", "c_total 130\n", "c_total 10\n", "c_total 40\n"}, 10);
  ExpectPoints(EvaluateSelector(Sel("c_total"), history), {{"", 70.0 / 30}});
}

TEST(ScrapeEval, SampleTimestampsTimeTheRate) {
  auto history = History({"# TYPE c counter\nc_total 10 1000000\n",
                          "# TYPE c counter\nc_total 30 1010000\n"});  // 10 s apart by stamp
  auto got = EvaluateSelector(Sel("c"), history);
  ExpectPoints(got, {{"", 2}});
  EXPECT_EQ(got->at(0).at, TimePoint(std::chrono::milliseconds(1010000)));
}

TEST(ScrapeEval, Errors) {
  auto history = History({"a 1\n", "b 1\n"});
  auto vanished = EvaluateSelector(Sel("a"), history);
  ASSERT_FALSE(vanished.ok());
  EXPECT_TRUE(vanished.status().IsNotFound()) << vanished.status().message();

  auto bad_le = EvaluateSelector(Sel("h"), History({"# TYPE h histogram\nh_bucket{le=\"x\"} 1\n"}));
  ASSERT_FALSE(bad_le.ok());
  EXPECT_TRUE(bad_le.status().IsInvalid());
}

TEST(Selector, Grammar) {
  struct Case {
    std::string expr;
    bool ok;
    std::string metric;
    size_t matchers;
    Aggregation agg;
    double q;
  };
  const std::vector<Case> cases = {
      {"vllm:num_requests_running", true, "vllm:num_requests_running", 0, Aggregation::kNone, 0.99},
      {"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\", Hostname=\"n\\\"3\"}", true, "DCGM_FI_DEV_GPU_UTIL", 2,
       Aggregation::kNone, 0.99},
      {" sum ( x{a=\"b\",} ) ", true, "x", 1, Aggregation::kSum, 0.99},
      {"histogram_quantile(0.9, avg(h))", true, "h", 0, Aggregation::kAvg, 0.9},
      {"sum", true, "sum", 0, Aggregation::kNone, 0.99},  // a metric called sum
      {"x{a=~\"b\"}", false, "", 0, Aggregation::kNone, 0},
      {"x{a=\"b\"", false, "", 0, Aggregation::kNone, 0},
      {"histogram_quantile(2, h)", false, "", 0, Aggregation::kNone, 0},
      {"rate(x[5m])", false, "", 0, Aggregation::kNone, 0},
      {"x y", false, "", 0, Aggregation::kNone, 0},
      {"", false, "", 0, Aggregation::kNone, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expr);
    auto s = ParseSelector(c.expr);
    ASSERT_EQ(s.ok(), c.ok) << (s.ok() ? "" : s.status().message());
    if (!c.ok) {
      EXPECT_TRUE(s.status().IsInvalid());
      continue;
    }
    EXPECT_EQ(s->metric, c.metric);
    EXPECT_EQ(s->matchers.size(), c.matchers);
    EXPECT_EQ(s->aggregation, c.agg);
    EXPECT_DOUBLE_EQ(s->quantile, c.q);
  }
}

}  // namespace
}  // namespace aiscale::monitor
