#include "report/comparison.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::report {
namespace {

RunSummary Training(const std::string& label, Baseline role, double gpu_h, double time_s) {
  RunSummary r;
  r.label = label;
  r.policy = label;
  r.baseline = role;
  WorkloadSummary w;
  w.name = "job";
  w.gpu_hours = gpu_h;
  w.completion_time_s = time_s;
  w.mean_gpu_util = 0.5;
  w.rescales = 2;
  w.training = TrainingFigures{};
  r.workloads.push_back(w);
  return r;
}

const TableRow& Row(const ComparisonTable& t, const std::string& key) {
  for (const TableRow& r : t.rows) {
    if (r.key == key) return r;
  }
  static const TableRow kNone;
  ADD_FAILURE() << "no row " << key;
  return kNone;
}

std::vector<std::string> Texts(const TableRow& r) {
  std::vector<std::string> out;
  for (const TableCell& c : r.cells) out.push_back(c.Text());
  return out;
}

std::vector<std::string> Headers(const ComparisonTable& t) {
  std::vector<std::string> out;
  for (const TableColumn& c : t.columns) out.push_back(c.label);
  return out;
}

TEST(Comparison, TrainingRunsWithTheOracleAndRatiosToStatic) {
  Report r;
  r.runs = {Training("training", Baseline::kNone, 70, 7200),
            Training("static", Baseline::kStatic, 100, 7000)};
  for (RunSummary& run : r.runs) {
    run.workloads[0].oracle = OracleFigures{};
    run.workloads[0].oracle->gpu_hours = 64;
    run.workloads[0].oracle->completion_time_s = 7560;
  }
  const ComparisonTable t = BuildComparison(r);
  EXPECT_EQ(Headers(t),
            (std::vector<std::string>{"training", "static", "oracle", "training/static"}));
  EXPECT_EQ(Texts(Row(t, "gpu_hours")),
            (std::vector<std::string>{"70.0", "100.0", "64.0", "0.700"}));
  EXPECT_EQ(Texts(Row(t, "gpu_hours_over_oracle")),
            (std::vector<std::string>{"1.09", "1.56", "1.00", "-"}));
  EXPECT_EQ(Texts(Row(t, "completion_time_s")),
            (std::vector<std::string>{"2.00", "1.94", "2.10", "1.029"}));
  // No oracle figure for the failure replacement: "-", never 0.
  EXPECT_EQ(Texts(Row(t, "max_failure_replacement_s"))[2], "-");
  EXPECT_EQ(Texts(Row(t, "cut"))[0], "no");
}

TEST(Comparison, TheBaselineIsFoundByRoleNotByLabel) {
  Report r;
  r.runs = {Training("training", Baseline::kNone, 70, 7200),
            Training("static-8", Baseline::kStatic, 100, 7000),
            Training("static", Baseline::kNone, 50, 7000)};  // named so, but not the baseline
  const ComparisonTable t = BuildComparison(r);
  EXPECT_EQ(Headers(t), (std::vector<std::string>{"training", "static-8", "static",
                                                  "training/static", "static/static"}));
  EXPECT_EQ(Texts(Row(t, "gpu_hours")),
            (std::vector<std::string>{"70.0", "100.0", "50.0", "0.700", "0.500"}));
}

TEST(Comparison, ServingFiguresAndMissingOnesAreDashes) {
  Report r;
  RunSummary a = Training("predictive", Baseline::kNone, 12, kNoValue);
  a.workloads[0].training.reset();
  a.workloads[0].serving = ServingFigures{};
  a.workloads[0].serving->slo_attainment = 0.98;
  a.workloads[0].serving->slo.attainment = 0.99;
  r.runs = {a};
  const ComparisonTable t = BuildComparison(r);
  EXPECT_EQ(Headers(t), (std::vector<std::string>{"predictive"}));  // no oracle, no static
  EXPECT_TRUE(Row(t, "slo_attainment").cells[0].bad);
  EXPECT_EQ(Texts(Row(t, "latency_p99_s")), (std::vector<std::string>{"-"}));
  EXPECT_EQ(Texts(Row(t, "gpu_hours_over_oracle")), (std::vector<std::string>{"-"}));
}

TEST(Comparison, SeveralWorkloadsPerWorkloadAndTotals) {
  Report r;
  for (auto [label, role] : {std::pair{"pool", Baseline::kNone}, {"static", Baseline::kStatic}}) {
    RunSummary run = Training(label, role, 10, 3600);
    WorkloadSummary other = run.workloads[0];
    other.name = "svc";
    other.training.reset();
    other.serving = ServingFigures{};
    other.gpu_hours = role == Baseline::kStatic ? 30 : 5;
    other.completion_time_s = kNoValue;
    run.workloads.push_back(other);
    r.runs.push_back(run);
  }
  const ComparisonTable totals = BuildComparison(r);
  EXPECT_EQ(Texts(Row(totals, "gpu_hours")), (std::vector<std::string>{"15.0", "40.0", "0.375"}));
  EXPECT_EQ(BuildComparison(r, "svc").rows.front().key, "gpu_hours");
  EXPECT_EQ(Texts(Row(BuildComparison(r, "svc"), "slo_attainment")).size(), 3u);
  EXPECT_EQ(Texts(Row(BuildComparison(r, "job"), "gpu_hours")),
            (std::vector<std::string>{"10.0", "10.0", "1.000"}));
}

TEST(Comparison, TextIsAlignedAndNotesSayWhy) {
  Report r;
  r.runs = {Training("training", Baseline::kNone, 99.5, 7200),
            Training("static", Baseline::kStatic, 100, 7000)};
  r.runs[0].vs_static = BaselineVerdict{0.995, 1.03, false, "GPU-hours 0.995x static"};
  r.runs[0].cut = true;
  r.runs[0].end_s = 7200;
  r.runs[0].workloads[0].verdict = Verdict{{}, false, "GPU-hours 1.20x the oracle", ""};
  const std::string text = RenderText(BuildComparison(r));
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    lines.push_back(text.substr(at, nl - at));
  }
  ASSERT_GE(lines.size(), 3u);
  for (const auto& l : lines) EXPECT_EQ(l.size(), lines[0].size()) << l;
  EXPECT_NE(text.find("GPU-hours"), std::string::npos);
  EXPECT_NE(text.find("training/static"), std::string::npos);
  EXPECT_EQ(ComparisonNotes(r),
            (std::vector<std::string>{
                "training misses targets: GPU-hours 1.20x the oracle",
                "training did not beat static: GPU-hours 0.995x static",
                "training was cut at the duration limit (2.0 h) before the work was done"}));
}

}  // namespace
}  // namespace aiscale::report
